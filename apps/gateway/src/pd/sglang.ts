/**
 * SGLang PD: the same body, with bootstrap_host / bootstrap_port / bootstrap_room, goes to prefill
 * and decode at once; the engines pair up through the room. The client reads the decode answer.
 * Either leg failing fails the request, and the other leg is aborted so no engine waits for a partner.
 */
import { newBootstrapRoom, sglangLegJson } from "@switchboard/engines";
import type { OpenAIError } from "@switchboard/protocol";
import { Leg, sendLeg, type LegResult, type PdDeps, type PdRequest } from "./leg";
import type { Picked } from "./pair";
import { bufferDecode, clientGone, recordDone, streamDecode } from "./respond";

/** SGLang's default disaggregation bootstrap port. */
export const SGLANG_DEFAULT_BOOTSTRAP_PORT = 8998;

const CONNECTOR = "sglang";

export async function sglangPd(req: PdRequest, prefill: Picked, decode: Picked, deps: PdDeps): Promise<Response> {
  const host = new URL(prefill.worker.url.replace(/^grpc:/, "http:")).hostname.replace(/^\[(.*)\]$/, "$1");
  const body = sglangLegJson(req.body, { host, port: prefill.worker.spec.bootstrapPort ?? SGLANG_DEFAULT_BOOTSTRAP_PORT, room: newBootstrapRoom() });
  const p = new Leg("prefill", prefill.worker, prefill.base, deps);
  const d = new Leg("decode", decode.worker, decode.base, deps);
  // The first leg to fail aborts the other at once rather than after it answers.
  const run = (leg: Leg, other: Leg) =>
    sendLeg(req, leg, body, deps).then((r) => {
      if (!r.ok) other.abort.abort();
      return r;
    });
  const [pr, dr] = await Promise.all([run(p, d), run(d, p)]);

  if (!pr.ok || !dr.ok) {
    await Promise.all([discard(pr), discard(dr)]);
    p.release();
    d.release();
    // The leg that really failed explains it; the other one was only aborted.
    const pe = realError(pr);
    const error = pe ?? realError(dr);
    if (!error) {
      recordDone(req, CONNECTOR, d.worker.id, 499, "client_gone", deps);
      return clientGone();
    }
    recordDone(req, CONNECTOR, pe ? p.worker.id : d.worker.id, error.status, pe ? "prefill_failed" : "decode_failed", deps);
    return error.toResponse();
  }

  // The prefill's own answer is not the client's: read it to the end (bounded by the request's signals).
  void pr.res.arrayBuffer().catch(() => {}).finally(() => p.release());
  return req.stream && dr.res.body ? streamDecode(req, CONNECTOR, d, p, dr.res, deps) : bufferDecode(req, CONNECTOR, d, p, dr.res, deps);
}

function realError(r: LegResult): OpenAIError | null {
  return !r.ok && typeof r.error !== "string" ? r.error : null;
}

async function discard(r: LegResult) {
  if (r.ok) await r.res.body?.cancel().catch(() => {});
}
