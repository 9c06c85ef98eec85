/** `POST /v1/embeddings`: deterministic unit vectors derived from each input's hash. */
import { hang, type EngineContext } from "../context.ts";
import type { RecordedRequest } from "../recorder.ts";
import { isUp, servesModel } from "../state.ts";
import { promptTokenCount } from "../tokens.ts";
import { droppedConnection, errorResponse, modelNotFound } from "./errors.ts";
import { notReady } from "./generate.ts";

const JSON_HEADERS = { "content-type": "application/json" };

/** The inputs as strings to hash (token-id inputs are joined), or null when malformed. */
function inputs(input: unknown): { key: string; tokens: number }[] | null {
  if (typeof input === "string") return [{ key: input, tokens: promptTokenCount({ text: input }) }];
  if (!Array.isArray(input) || input.length === 0) return null;
  if (input.every((x) => typeof x === "string")) return input.map((s: string) => ({ key: s, tokens: promptTokenCount({ text: s }) }));
  if (input.every((x) => typeof x === "number")) return [{ key: input.join(","), tokens: input.length }];
  if (input.every((x) => Array.isArray(x) && x.every((y) => typeof y === "number"))) {
    return (input as number[][]).map((ids) => ({ key: ids.join(","), tokens: ids.length }));
  }
  return null;
}

/** A unit vector from a seeded xorshift stream: same input, same vector, on every engine. */
export function embed(key: string, dim: number): Float32Array {
  let x = Number(Bun.hash.wyhash(key) & 0xffffffffn) || 1;
  const v = new Float32Array(dim);
  let norm = 0;
  for (let i = 0; i < dim; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[i] = ((x >>> 0) / 0xffffffff) * 2 - 1;
    norm += v[i] * v[i];
  }
  const s = 1 / Math.sqrt(norm || 1);
  for (let i = 0; i < dim; i++) v[i] *= s;
  return v;
}

export async function handleEmbeddings(ctx: EngineContext, req: Request): Promise<Response> {
  const st = ctx.state;
  if (!isUp(st)) return notReady();
  const c = ctx.inc.counters;
  let body: any;
  try {
    body = await req.json();
  } catch {
    body = undefined;
  }
  const rec: RecordedRequest = { id: ctx.inc.idPrefix + (++ctx.inc.seq).toString(16), path: "/v1/embeddings", body, headers: req.headers.toJSON(), at: Date.now(), status: 0, aborted: false, completed: false };
  ctx.recorder.add(rec);
  c.received++;
  c.lastReceiveAt = rec.at;
  const f = st.faults;
  if (f.dropConnections) return droppedConnection();
  if (f.hangRequests) {
    const res = await hang(ctx, req);
    rec.aborted = true;
    if (req.signal.aborted) c.cancelled++;
    return res;
  }
  const res = answer(ctx, body);
  rec.status = res.status;
  if (res.status === 200) {
    rec.completed = true;
    c.served++;
  } else if (res.status >= 400) c.failed++;
  return res;
}

function answer(ctx: EngineContext, body: any): Response {
  const st = ctx.state;
  if (st.faults.errorStatus) return errorResponse(st.faults.errorStatus, `mock engine fault: status ${st.faults.errorStatus}`);
  if (st.sleeping) return errorResponse(503, "The engine is sleeping");
  if (body === undefined || typeof body !== "object" || body === null) return errorResponse(400, "JSON decode error");
  const model = body.model ?? st.models[0];
  if (typeof model !== "string") return errorResponse(400, "model must be a string", "model");
  if (!servesModel(st, model)) return modelNotFound(model);
  const items = inputs(body.input);
  if (!items) return errorResponse(400, "input must be a string, a list of strings or token ids", "input");
  const dim = body.dimensions ?? ctx.opts.embeddingDim;
  if (!Number.isInteger(dim) || dim < 1 || dim > 65536) return errorResponse(400, "dimensions must be a positive integer", "dimensions");
  const base64 = body.encoding_format === "base64";
  let tokens = 0;
  const data = items.map((it, index) => {
    tokens += it.tokens;
    const v = embed(it.key, dim);
    return { index, object: "embedding", embedding: base64 ? Buffer.from(v.buffer).toString("base64") : Array.from(v) };
  });
  ctx.inc.counters.promptTokens += tokens;
  return new Response(
    JSON.stringify({
      id: `embd-${ctx.inc.idPrefix}${ctx.inc.seq}`,
      object: "list",
      created: Math.floor(Date.now() / 1000),
      model,
      data,
      usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0, prompt_tokens_details: null },
    }),
    { headers: JSON_HEADERS },
  );
}
