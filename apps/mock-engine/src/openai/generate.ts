/** `POST /v1/chat/completions` and `POST /v1/completions`. */
import { hang, type EngineContext } from "../context.ts";
import { generate, needsSlowPath } from "../generation.ts";
import type { Incarnation } from "../incarnation.ts";
import type { RecordedRequest } from "../recorder.ts";
import { engineIdForRank, isUp, type EngineCounters } from "../state.ts";
import { droppedConnection, errorResponse } from "./errors.ts";
import { planRequest, type Plan } from "./request.ts";
import { abortFrames, completionBody, DONE, roleFrames, tokenFrames, usage, usageFrame, type GenerationKind } from "./shapes.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** Why a slow-path request stopped early: its client left, the engine restarted, or an operator aborted it. */
type StopReason = "client" | "restart" | "abort";

export function notReady(): Response {
  return errorResponse(503, "The engine is not ready");
}

export async function handleGeneration(ctx: EngineContext, req: Request, kind: GenerationKind, path: string): Promise<Response> {
  const st = ctx.state;
  if (!isUp(st)) return notReady();
  const inc = ctx.inc;
  const c = inc.counters;
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    body = undefined;
  }
  const rec = record(inc, req, path, body, ctx.recorder.enabled);
  ctx.recorder.add(rec);
  c.received++;
  c.lastReceiveAt = rec.at;

  const f = st.faults;
  if (f.dropConnections) return droppedConnection();
  if (f.errorStatus) return fail(rec, c, errorResponse(f.errorStatus, `mock engine fault: status ${f.errorStatus}`));
  if (f.hangRequests) {
    const res = await hang(ctx, req);
    rec.aborted = true;
    if (req.signal.aborted) c.cancelled++;
    return res;
  }
  if (st.sleeping) return fail(rec, c, errorResponse(503, "The engine is sleeping"));
  if (body === undefined) return fail(rec, c, errorResponse(400, "JSON decode error"));

  const plan = planRequest(ctx, kind, body, rec);
  if (plan instanceof Response) return fail(rec, c, plan);
  c.promptTokens += plan.promptTokens;
  const kvOut = nixlTransferParams(ctx, inc, plan, rec);

  if (!needsSlowPath(ctx, plan)) return instantReply(plan, rec, c, kvOut);
  return plan.stream ? streamReply(ctx, inc, req, plan, rec) : delayedReply(ctx, inc, req, plan, rec, kvOut);
}

function record(inc: Incarnation, req: Request, path: string, body: any, keepHeaders: boolean): RecordedRequest {
  const h = req.headers;
  const rid = h.get("x-request-id") ?? (typeof body?.request_id === "string" ? body.request_id : null);
  const rec: RecordedRequest = {
    id: rid || inc.idPrefix + (++inc.seq).toString(16),
    path,
    body,
    headers: keepHeaders ? h.toJSON() : {},
    at: Date.now(),
    status: 0,
    aborted: false,
    completed: false,
  };
  if (body && typeof body === "object") {
    if (body.kv_transfer_params && typeof body.kv_transfer_params === "object") rec.kv_transfer_params = body.kv_transfer_params;
    if (body.bootstrap_room !== undefined || body.bootstrap_host !== undefined) {
      rec.bootstrap = { host: body.bootstrap_host, port: body.bootstrap_port, room: body.bootstrap_room };
    }
  }
  const rank = h.get("x-data-parallel-rank");
  if (rank !== null && /^\d+$/.test(rank)) rec.dpRank = Number(rank);
  return rec;
}

function fail(rec: RecordedRequest, c: EngineCounters, res: Response): Response {
  rec.status = res.status;
  c.failed++;
  return res;
}

/** NIXL prefill: a request asking `do_remote_decode` gets back where its KV blocks can be read. */
function nixlTransferParams(ctx: EngineContext, inc: Incarnation, plan: Plan, rec: RecordedRequest): Record<string, unknown> | undefined {
  const st = ctx.state;
  if (st.kvConnector !== "NixlConnector" || st.role === "decode" || plan.kvIn?.do_remote_decode !== true) return undefined;
  const blocks = Math.ceil(plan.promptTokens / (ctx.opts.kvCache?.blockSize ?? 16));
  const ids: number[] = [];
  for (let i = 0; i < blocks; i++) ids.push(inc.blockCursor++);
  return {
    do_remote_prefill: true,
    do_remote_decode: false,
    remote_block_ids: ids,
    remote_engine_id: engineIdForRank(st, rec.dpRank ?? 0),
    remote_host: ctx.opts.host,
    remote_port: ctx.nixlPort,
    tp_size: 1,
  };
}

/** The hot path: no delays, no cache, so the whole answer is built at once. */
function instantReply(plan: Plan, rec: RecordedRequest, c: EngineCounters, kvOut: unknown): Response {
  const m = plan.meta;
  const u = usage(plan.promptTokens, plan.maxTokens * m.n);
  c.generationTokens += plan.maxTokens * m.n;
  c.served++;
  rec.status = 200;
  rec.completed = true;
  if (!plan.stream) return new Response(completionBody(m, plan.maxTokens, plan.finish, u, kvOut), { headers: JSON_HEADERS });
  let s = roleFrames(m);
  for (let i = 0; i < plan.maxTokens; i++) s += tokenFrames(m, i, i === plan.maxTokens - 1 ? plan.finish : null);
  if (plan.includeUsage) s += usageFrame(m, u);
  return new Response(s + DONE, { headers: SSE_HEADERS });
}

/** Ties a slow-path request to everything that can stop it; `release` undoes the wiring. */
function track(inc: Incarnation, req: Request, rec: RecordedRequest) {
  const run = new AbortController();
  const onClient = () => run.abort("client");
  const onCut = () => run.abort("restart");
  req.signal.addEventListener("abort", onClient);
  inc.cut.signal.addEventListener("abort", onCut);
  if (req.signal.aborted) onClient();
  if (inc.cut.signal.aborted) onCut();
  inc.inflight.set(rec.id, run);
  return {
    run,
    reason: () => (run.signal.aborted ? (run.signal.reason as StopReason) : null),
    release() {
      req.signal.removeEventListener("abort", onClient);
      inc.cut.signal.removeEventListener("abort", onCut);
      if (inc.inflight.get(rec.id) === run) inc.inflight.delete(rec.id);
    },
  };
}

function noteStopped(rec: RecordedRequest, c: EngineCounters, reason: StopReason): void {
  rec.aborted = true;
  if (reason === "client") c.cancelled++;
}

async function delayedReply(ctx: EngineContext, inc: Incarnation, req: Request, plan: Plan, rec: RecordedRequest, kvOut: unknown): Promise<Response> {
  const c = inc.counters;
  const t = track(inc, req, rec);
  try {
    const produced = await generate(ctx, inc, plan, rec, t.run.signal, () => {});
    const reason = t.reason();
    if (reason) noteStopped(rec, c, reason);
    if (reason === "restart" || reason === "client") return droppedConnection();
    const m = plan.meta;
    const body = completionBody(m, produced, reason ?? plan.finish, usage(plan.promptTokens, produced * m.n, rec.cachedTokens), kvOut);
    rec.status = 200;
    if (!reason) {
      rec.completed = true;
      c.served++;
    }
    return new Response(body, { headers: JSON_HEADERS });
  } finally {
    t.release();
  }
}

function streamReply(ctx: EngineContext, inc: Incarnation, req: Request, plan: Plan, rec: RecordedRequest): Response {
  const c = inc.counters;
  const m = plan.meta;
  const t = track(inc, req, rec);
  const stream = new ReadableStream<string>({
    start(controller) {
      const send = (s: string) => {
        try {
          controller.enqueue(s);
        } catch {
          // the client is gone; its abort signal stops generation
        }
      };
      let opened = false;
      const onToken = (i: number) => {
        let s = "";
        if (!opened) {
          s = roleFrames(m);
          opened = true;
          rec.status = 200;
        }
        send(s + tokenFrames(m, i, i === plan.maxTokens - 1 ? plan.finish : null));
      };
      void generate(ctx, inc, plan, rec, t.run.signal, onToken)
        .then((produced) => {
          const reason = t.reason();
          const u = usage(plan.promptTokens, produced * m.n, rec.cachedTokens);
          if (reason) noteStopped(rec, c, reason);
          if (reason === "restart") return cut(controller); // the process died: the connection resets
          if (reason === "client") return;
          if (reason === "abort") send(abortFrames(m));
          else {
            rec.completed = true;
            c.served++;
          }
          rec.status = 200;
          send((plan.includeUsage ? usageFrame(m, u) : "") + DONE);
          controller.close();
        })
        .catch(() => cut(controller))
        .finally(() => t.release());
    },
    cancel() {
      t.run.abort("client");
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}

function cut(controller: ReadableStreamDefaultController<string>): void {
  try {
    controller.error();
  } catch {
    // already closed by the client
  }
}
