/** The engine's non-inference endpoints: health, model list, sleep mode, SGLang info. */
import { hang, type EngineContext } from "./context.ts";
import { renderMetrics } from "./metrics.ts";
import { errorResponse } from "./openai/errors.ts";
import { notReady } from "./openai/generate.ts";
import { isUp, kvRole } from "./state.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const json = (v: unknown) => new Response(JSON.stringify(v), { headers: JSON_HEADERS });

export function health(ctx: EngineContext, req: Request): Response | Promise<Response> {
  const st = ctx.state;
  if (st.faults.hangHealth) return hang(ctx, req);
  if (!isUp(st) || st.faults.unhealthy) return new Response(null, { status: 503 });
  return new Response(null, { status: 200 });
}

export function modelList(ctx: EngineContext, req: Request): Response | Promise<Response> {
  const st = ctx.state;
  if (st.faults.hangModels) return hang(ctx, req);
  if (!isUp(st)) return notReady();
  if (st.faults.modelsFail) return errorResponse(500, "mock engine fault: modelsFail");
  const created = Math.floor(st.startedAt);
  const base = st.models.map((id) => ({ id, object: "model", created, owned_by: "vllm", root: id, parent: null, max_model_len: st.maxModelLen, permission: [] }));
  const loras = st.loras.map((l) => ({ id: l.id, object: "model", created, owned_by: "vllm", root: `/adapters/${l.id}`, parent: l.parent, max_model_len: null, permission: [] }));
  return json({ object: "list", data: [...base, ...loras] });
}

export function metrics(ctx: EngineContext): Response {
  const st = ctx.state;
  if (!isUp(st)) return new Response(null, { status: 503 });
  if (st.faults.metricsFail) return new Response("mock engine fault: metricsFail", { status: 500 });
  return new Response(renderMetrics(ctx), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
}

export function sleepMode(ctx: EngineContext, action: "get" | "sleep" | "wake"): Response {
  if (!isUp(ctx.state)) return notReady();
  if (action === "get") return json({ is_sleeping: ctx.state.sleeping });
  ctx.state.sleeping = action === "sleep";
  return new Response(null, { status: 200 });
}

export function flushCache(ctx: EngineContext): Response {
  if (!isUp(ctx.state)) return notReady();
  ctx.inc.cache?.clear();
  if (ctx.inc.kv) ctx.inc.kv.cachedBlocks = 0;
  return new Response("Cache flushed.\n", { status: 200 });
}

/** SGLang's `/get_model_info`. */
export function modelInfo(ctx: EngineContext): Response {
  if (!isUp(ctx.state)) return notReady();
  const m = ctx.state.models[0];
  return json({ model_path: m, tokenizer_path: m, is_generation: true, preferred_sampling_params: null, weight_version: "default" });
}

/** SGLang's `/get_server_info` (a subset), plus the KV identity the gRPC GetServerInfo also reports. */
export function serverInfo(ctx: EngineContext): Response {
  const st = ctx.state;
  if (!isUp(st)) return notReady();
  const c = st.counters;
  return json({
    model_path: st.models[0],
    served_model_name: st.models[0],
    tp_size: 1,
    dp_size: st.dataParallelSize,
    page_size: st.kv?.blockSize ?? 16,
    max_total_num_tokens: (st.kv?.capacityBlocks ?? 2048) * (st.kv?.blockSize ?? 16),
    context_length: st.maxModelLen,
    disaggregation_mode: st.role === "both" ? "null" : st.role,
    disaggregation_bootstrap_port: st.bootstrapPort,
    kv_connector: st.kvConnector,
    kv_role: kvRole(st),
    kv_engine_id: st.kvConnector ? st.engineId : "",
    start_time: st.startedAt,
    uptime_seconds: Date.now() / 1000 - st.startedAt,
    internal_states: [{ num_running_reqs: c.running, num_queue_reqs: c.waiting, last_gen_throughput: 0 }],
    version: "mock",
  });
}
