import type { EngineFlavor, EngineRole, LoraAdapter, MockKvConnector, ResolvedOptions } from "./options.ts";

/** Faults an operator (or a test) switches on at runtime. */
export interface Faults {
  /** `/health` answers 503. */
  unhealthy: boolean;
  /** `/health` never answers. */
  hangHealth: boolean;
  /** Inference requests never answer. */
  hangRequests: boolean;
  /** Inference requests answer this status (e.g. 500, 503); 0 = off. */
  errorStatus: number;
  /** Inference requests get their connection reset without a response. */
  dropConnections: boolean;
  /** `/v1/models` answers 500. */
  modelsFail: boolean;
  /** `/v1/models` never answers. */
  hangModels: boolean;
  /** `/metrics` answers 500. */
  metricsFail: boolean;
  /** The bootstrap server's `/query` never answers. */
  hangBootstrap: boolean;
  /** `/query` answers `{}`. */
  bootstrapNoEngineId: boolean;
  /** `/query` answers rank 0 without its engine_id. */
  partialBootstrap: boolean;
}

export const noFaults: Readonly<Faults> = Object.freeze({
  unhealthy: false,
  hangHealth: false,
  hangRequests: false,
  errorStatus: 0,
  dropConnections: false,
  modelsFail: false,
  hangModels: false,
  metricsFail: false,
  hangBootstrap: false,
  bootstrapNoEngineId: false,
  partialBootstrap: false,
});

/** Counters of one engine incarnation; a restart zeroes them, as a new process would. */
export interface EngineCounters {
  /** Inference requests received (including rejected ones). */
  received: number;
  /** Requests answered in full. */
  served: number;
  /** Requests answered with an error status. */
  failed: number;
  /** Requests whose client went away before the answer was complete. */
  cancelled: number;
  running: number;
  waiting: number;
  promptTokens: number;
  generationTokens: number;
  /** Prefix cache, counted in tokens as vLLM does. */
  prefixQueries: number;
  prefixHits: number;
  /** Requests that read a remote prefill's bootstrap server and found the engine id it named. */
  kvPullsOk: number;
  kvPullsFailed: number;
  /** ms since epoch of the last inference request. */
  lastReceiveAt: number;
}

export interface KvStats {
  blockSize: number;
  capacityBlocks: number;
  /** Blocks held by running requests (what `kv_cache_usage_perc` reports). */
  usedBlocks: number;
  /** Block hashes the prefix cache remembers. */
  cachedBlocks: number;
  maxConcurrency: number;
}

/**
 * Everything another front end (the gRPC server) needs to answer for this engine. One object for
 * the engine's whole life: a restart mutates it in place, so holders of a reference stay current.
 */
export interface EngineState {
  engineId: string;
  /** Seconds since epoch, fractional: `process_start_time_seconds`. */
  startedAt: number;
  /** ms since epoch before which the engine is still starting (503). */
  readyAt: number;
  /** Inside a restart's downtime. */
  restarting: boolean;
  sleeping: boolean;
  /** Bumped on every restart. */
  incarnation: number;
  models: string[];
  loras: LoraAdapter[];
  maxModelLen: number;
  role: EngineRole;
  kvConnector: MockKvConnector;
  dataParallelSize: number;
  /** The bound Mooncake bootstrap port, when one runs. */
  bootstrapPort: number | null;
  /** `GET /query` calls the bootstrap server received, over the engine's whole life (restarts included). */
  bootstrapQueries: number;
  flavor: EngineFlavor;
  faults: Faults;
  counters: EngineCounters;
  kv: KvStats | null;
}

export function zeroCounters(): EngineCounters {
  return {
    received: 0,
    served: 0,
    failed: 0,
    cancelled: 0,
    running: 0,
    waiting: 0,
    promptTokens: 0,
    generationTokens: 0,
    prefixQueries: 0,
    prefixHits: 0,
    kvPullsOk: 0,
    kvPullsFailed: 0,
    lastReceiveAt: 0,
  };
}

export function createState(o: ResolvedOptions): EngineState {
  const now = Date.now();
  return {
    engineId: o.engineId ?? crypto.randomUUID(),
    startedAt: now / 1000,
    readyAt: now + o.startDelayMs,
    restarting: false,
    sleeping: false,
    incarnation: 0,
    models: o.models,
    loras: o.loras,
    maxModelLen: o.maxModelLen,
    role: o.role,
    kvConnector: o.kvConnector,
    dataParallelSize: o.dataParallelSize,
    bootstrapPort: null,
    bootstrapQueries: 0,
    flavor: o.flavor,
    faults: { ...noFaults },
    counters: zeroCounters(),
    kv: o.kvCache && {
      blockSize: o.kvCache.blockSize,
      capacityBlocks: o.kvCache.capacityBlocks,
      usedBlocks: 0,
      cachedBlocks: 0,
      maxConcurrency: o.kvCache.maxConcurrency,
    },
  };
}

/** Can the engine take requests right now (started, not restarting)? Sleeping is separate. */
export function isUp(s: EngineState): boolean {
  return !s.restarting && (s.readyAt === 0 || Date.now() >= s.readyAt);
}

/** Is `model` one this engine serves (a base model or a LoRA adapter)? */
export function servesModel(s: EngineState, model: string): boolean {
  return s.models.includes(model) || s.loras.some((l) => l.id === model);
}

/** vLLM's kv_role string for the gRPC GetServerInfo answer. */
export function kvRole(s: EngineState): "kv_producer" | "kv_consumer" | "kv_both" | "" {
  if (!s.kvConnector) return "";
  return s.role === "prefill" ? "kv_producer" : s.role === "decode" ? "kv_consumer" : "kv_both";
}

/** The KV engine id of one data-parallel rank: vLLM suffixes `_dp<rank>` when dp_size > 1. */
export function engineIdForRank(s: EngineState, rank: number): string {
  return s.dataParallelSize > 1 ? `${s.engineId}_dp${rank}` : s.engineId;
}
