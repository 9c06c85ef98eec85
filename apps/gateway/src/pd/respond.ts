/** The decode leg's answer, handed to the client: streamed through, or read whole. Its lease ends with it. */
import { errors } from "@switchboard/protocol";
import { passThrough } from "../proxy/upstream-body";
import { whyAborted, type Leg, type PdDeps, type PdRequest } from "./leg";

export type Outcome = "ok" | "prefill_failed" | "decode_failed" | "client_gone" | "no_pair";

/** Records the request once: the gateway's request series (by decode worker) and the PD series. */
export function recordDone(req: PdRequest, connector: string, workerId: string, status: number, outcome: Outcome, deps: PdDeps) {
  deps.metrics.requests.inc({ route: req.route, model: req.model, worker: workerId, status });
  deps.metrics.latency.observe({ route: req.route, model: req.model }, (performance.now() - req.started) / 1000);
  deps.pdMetrics.requests.inc({ connector, outcome });
}

export function clientGone(): Response {
  // Nobody reads this; 499 marks a client cancel in access logs.
  return new Response(null, { status: 499 });
}

const headersOf = (res: Response, fallbackType: string, decode: Leg, prefill: Leg | null) => ({
  "content-type": res.headers.get("content-type") ?? fallbackType,
  "x-switchboard-worker": decode.worker.id,
  ...(prefill ? { "x-switchboard-prefill-worker": prefill.worker.id } : {}),
});

export function streamDecode(req: PdRequest, connector: string, decode: Leg, prefill: Leg | null, res: Response, deps: PdDeps): Response {
  const body = passThrough(res.body!, {
    firstByte: () => deps.metrics.ttft.observe({ route: req.route, model: req.model }, (performance.now() - req.started) / 1000),
    done: (how) => {
      decode.release();
      const outcome = how === "complete" ? "ok" : how === "cancelled" ? "client_gone" : "decode_failed";
      recordDone(req, connector, decode.worker.id, how === "complete" ? res.status : how === "cancelled" ? 499 : 502, outcome, deps);
    },
    abortUpstream: () => decode.abort.abort(),
  });
  return new Response(body, {
    status: res.status,
    headers: { ...headersOf(res, "text/event-stream", decode, prefill), "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}

export async function bufferDecode(req: PdRequest, connector: string, decode: Leg, prefill: Leg | null, res: Response, deps: PdDeps): Promise<Response> {
  try {
    const body = await res.arrayBuffer();
    recordDone(req, connector, decode.worker.id, res.status, "ok", deps);
    return new Response(body, { status: res.status, headers: headersOf(res, "application/json", decode, prefill) });
  } catch (err) {
    const why = whyAborted(req, decode);
    if (why === "client_gone" || why === "aborted") {
      recordDone(req, connector, decode.worker.id, 499, "client_gone", deps);
      return clientGone();
    }
    const e = why ?? errors.upstream(`decode engine ${decode.base}: ${(err as Error).message}`);
    recordDone(req, connector, decode.worker.id, e.status, "decode_failed", deps);
    return e.toResponse();
  } finally {
    decode.release();
  }
}
