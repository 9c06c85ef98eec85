export { startMockEngine, type MockEngine } from "./engine.ts";
export type { RestartOptions } from "./control.ts";
export type { EngineFlavor, EngineRole, KvCacheOptions, LoraAdapter, MockEngineOptions, MockKvConnector } from "./options.ts";
export type { RecordedRequest } from "./recorder.ts";
export { engineIdForRank, isUp, kvRole, noFaults, servesModel, type EngineCounters, type EngineState, type Faults, type KvStats } from "./state.ts";
export { embed } from "./openai/embeddings.ts";
export { renderMetrics } from "./metrics.ts";
export type { EngineContext } from "./context.ts";
export * from "./grpc/index.ts";
