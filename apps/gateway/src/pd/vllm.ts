/**
 * vLLM PD: prefill first (one token, answered whole), then decode, streamed to the client.
 * MooncakeConnector: the router mints both legs' kv_transfer_params from the prefill's *current*
 * engine id. NixlConnector: the prefill is tagged and its answer's params are relayed verbatim.
 */
import { decodeLegBody, mintMooncake, nixlPrefillParams, nixlRelay, prefillLegBody, type KvTransferParams } from "@switchboard/engines";
import { OpenAIError } from "@switchboard/protocol";
import { Leg, sendLeg, whyAborted, type PdDeps, type PdRequest } from "./leg";
import type { Picked } from "./pair";
import { bufferDecode, clientGone, recordDone, streamDecode } from "./respond";

export type VllmConnector = "MooncakeConnector" | "NixlConnector";

/** Decode recomputes: say so in a metric and one warn line, never hang waiting for a transfer. */
function unminted(req: PdRequest, connector: string, reason: string, prefill: Picked, deps: PdDeps) {
  deps.pdMetrics.unminted.inc({ connector, reason });
  deps.log.warn(
    { request_id: req.requestId, connector, reason, prefill: prefill.worker.id, prefill_url: prefill.worker.url, engine_id: prefill.worker.engineId, dp_size: prefill.worker.dataParallelSize },
    "PD: no kv_transfer_params for the decode leg; decode will recompute the prompt",
  );
}

/** Runs the prefill leg; its answer's JSON when `wantJson`, else just success. A Response is a failure to hand back. */
async function runPrefill(req: PdRequest, connector: string, leg: Leg, body: Record<string, unknown>, wantJson: boolean, deps: PdDeps): Promise<unknown | Response> {
  try {
    const r = await sendLeg(req, leg, JSON.stringify(body), deps);
    if (!r.ok) {
      if (r.error === "client_gone" || r.error === "aborted") {
        recordDone(req, connector, leg.worker.id, 499, "client_gone", deps);
        return clientGone();
      }
      recordDone(req, connector, leg.worker.id, r.error.status, "prefill_failed", deps);
      return r.error.toResponse();
    }
    if (!wantJson) {
      await r.res.arrayBuffer();
      return null;
    }
    return await r.res.json().catch(() => null);
  } catch (err) {
    // Reading the body failed: the client left, the request timed out, or the engine cut it.
    const why = whyAborted(req, leg);
    if (why === "client_gone" || why === "aborted") {
      recordDone(req, connector, leg.worker.id, 499, "client_gone", deps);
      return clientGone();
    }
    const e = why ?? new OpenAIError(502, `Upstream engine failed: prefill engine ${leg.base}: ${(err as Error).message}`, "upstream_error", "prefill_failed");
    recordDone(req, connector, leg.worker.id, e.status, "prefill_failed", deps);
    return e.toResponse();
  } finally {
    leg.release();
  }
}

export async function vllmPd(req: PdRequest, connector: VllmConnector, prefill: Picked, decode: Picked, deps: PdDeps): Promise<Response> {
  let decodeParams: KvTransferParams | null = null;
  let prefillLeg: Leg | null = null;

  if (connector === "MooncakeConnector") {
    const w = prefill.worker;
    // Read at request time: the worker actor keeps this id current across engine restarts.
    const mint = mintMooncake({ engineId: w.engineId, dataParallelSize: w.dataParallelSize, url: w.url, bootstrapPort: w.spec.bootstrapPort }, req.dpRank);
    if (mint.ok) {
      prefillLeg = new Leg("prefill", w, prefill.base, deps);
      const done = await runPrefill(req, connector, prefillLeg, prefillLegBody(req.body, mint.prefill), false, deps);
      if (done instanceof Response) return done;
      decodeParams = mint.decode;
    } else {
      // No prefill leg: a prefill told to keep KV for a transfer nobody can name would hold it until its timeout.
      unminted(req, connector, mint.reason, prefill, deps);
    }
  } else {
    prefillLeg = new Leg("prefill", prefill.worker, prefill.base, deps);
    const answer = await runPrefill(req, connector, prefillLeg, prefillLegBody(req.body, nixlPrefillParams()), true, deps);
    if (answer instanceof Response) return answer;
    decodeParams = nixlRelay(answer);
    if (!decodeParams) unminted(req, connector, "prefill_sent_no_params", prefill, deps);
  }

  const leg = new Leg("decode", decode.worker, decode.base, deps);
  const r = await sendLeg(req, leg, JSON.stringify(decodeLegBody(req.body, decodeParams)), deps);
  if (!r.ok) {
    leg.release();
    if (r.error === "client_gone" || r.error === "aborted") {
      recordDone(req, connector, leg.worker.id, 499, "client_gone", deps);
      return clientGone();
    }
    recordDone(req, connector, leg.worker.id, r.error.status, "decode_failed", deps);
    return r.error.toResponse();
  }
  return req.stream && r.res.body ? streamDecode(req, connector, leg, prefillLeg, r.res, deps) : bufferDecode(req, connector, leg, prefillLeg, r.res, deps);
}
