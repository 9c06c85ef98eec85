/**
 * @switchboard/mock-engine — a fake vLLM (and minimal SGLang) engine over real HTTP.
 *
 * Engine API: /health, /v1/models, /v1/chat/completions, /v1/completions, /v1/embeddings,
 * /metrics, /is_sleeping, /sleep, /wake_up, /reset_prefix_cache, /flush_cache, /get_model_info,
 * /get_server_info; a Mooncake bootstrap server (`GET /query`) when `bootstrapPort` is set.
 * Control API for out-of-process drivers: GET/POST/DELETE /_mock/faults, POST /_mock/restart
 * ({newEngineId?, downtimeMs?, refuse?}), POST /_mock/models ({models, loras?}),
 * GET/DELETE /_mock/received, GET /_mock/state.
 */
export { startMockEngine, type MockEngine } from "./engine.ts";
export type { RestartOptions } from "./control.ts";
export type { EngineFlavor, EngineRole, KvCacheOptions, LoraAdapter, MockEngineOptions, MockKvConnector } from "./options.ts";
export type { RecordedRequest } from "./recorder.ts";
export { engineIdForRank, isUp, kvRole, noFaults, servesModel, type EngineCounters, type EngineState, type Faults, type KvStats } from "./state.ts";
export { embed } from "./openai/embeddings.ts";
export { renderMetrics } from "./metrics.ts";
export type { EngineContext } from "./context.ts";
export * from "./grpc/index.ts";
