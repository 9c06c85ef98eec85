/** camelCase views of the vllm.grpc.engine messages the router reads. */

export interface EngineHealth {
  healthy: boolean;
  message: string;
}

export interface EngineModelInfo {
  modelPath: string;
  isGeneration: boolean;
  maxContextLength: number;
  vocabSize: number;
  supportsVision: boolean;
  servedModelName: string;
  tokenizerPath: string;
  modelType: string;
  architectures: string[];
  eosTokenIds: number[];
  padTokenId: number;
  bosTokenId: number;
  maxReqInputLen: number;
  defaultSamplingParamsJson: string;
}

export interface EngineServerInfo {
  activeRequests: number;
  isPaused: boolean;
  lastReceiveTimestamp: number;
  uptimeSeconds: number;
  serverType: string;
  /** "MooncakeConnector", "NixlConnector" or "". */
  kvConnector: string;
  /** "kv_producer", "kv_consumer", "kv_both" or "". */
  kvRole: string;
  /** "" when the engine has none. */
  kvEngineId: string;
  dataParallelSize: number;
  shmNamespaceId: string;
}

export interface SchedulerLoad {
  dpRank: number;
  numRunningReqs: number;
  numWaitingReqs: number;
  numTotalReqs: number;
  numUsedTokens: number;
  maxTotalNumTokens: number;
  tokenUsage: number;
  genThroughput: number;
  cacheHitRate: number;
  utilization: number;
  maxRunningRequests: number;
}

export interface EngineLoads {
  timestamp: string;
  version: string;
  dpRankCount: number;
  loads: SchedulerLoad[];
}

export interface LoadsQuery {
  /** Only this data-parallel rank; absent = all ranks. */
  dpRank?: number;
  include?: string[];
}

/** grpc.health.v1 ServingStatus by name. */
export type ServingStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";
export const servingStatusNames: readonly ServingStatus[] = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];

/** Per-call options beyond the deadline. */
export interface CallOptions {
  /** Cancels the call (the promise rejects with CANCELLED). */
  signal?: AbortSignal;
}
