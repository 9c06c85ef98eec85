/** A LoRA adapter served on top of a base model; `/v1/models` lists it with `parent` = base. */
export interface LoraAdapter {
  id: string;
  parent: string;
}

export type EngineRole = "prefill" | "decode" | "both";
export type MockKvConnector = "MooncakeConnector" | "NixlConnector" | "";
/** Which engine's metric names and info endpoints to imitate first. Both APIs are always served. */
export type EngineFlavor = "vllm" | "sglang";

/** The simulated paged KV cache. Off unless given, so the plain engine stays fast. */
export interface KvCacheOptions {
  /** Tokens per block (vLLM `block_size`). */
  blockSize?: number;
  /** Blocks in the pool (vLLM `num_gpu_blocks`); also the prefix cache's LRU capacity. */
  capacityBlocks?: number;
  /** Prefill cost per uncached prompt token. */
  prefillMsPerToken?: number;
  /** Decode cost per generated token; defaults to the engine's tokenDelayMs. */
  decodeMsPerToken?: number;
  /** Requests running at once; the rest wait in a FIFO queue (`num_requests_waiting`). */
  maxConcurrency?: number;
}

export interface MockEngineOptions {
  port?: number;
  host?: string;
  models?: string[];
  loras?: LoraAdapter[];
  /** Delay before each streamed (or generated) token. */
  tokenDelayMs?: number;
  /** Tokens generated when the request names no max_tokens (finish_reason "stop"). */
  defaultMaxTokens?: number;
  maxModelLen?: number;
  /** Listen at once but answer 503 until this much time has passed ("start late"). */
  startDelayMs?: number;
  /** KV-transfer engine id; a random uuid when absent. */
  engineId?: string;
  role?: EngineRole;
  kvConnector?: MockKvConnector;
  /** Start a Mooncake bootstrap server on this port (0 = ephemeral); none when absent. */
  bootstrapPort?: number;
  dataParallelSize?: number;
  kvCache?: KvCacheOptions | boolean;
  flavor?: EngineFlavor;
  /** Length of the vector `/v1/embeddings` returns when the request names no `dimensions`. */
  embeddingDim?: number;
  /** How many inference requests `received` keeps (oldest dropped first). */
  recordLimit?: number;
}

export interface ResolvedKvCache {
  blockSize: number;
  capacityBlocks: number;
  prefillMsPerToken: number;
  decodeMsPerToken: number;
  maxConcurrency: number;
}

export interface ResolvedOptions {
  port: number;
  host: string;
  models: string[];
  loras: LoraAdapter[];
  tokenDelayMs: number;
  defaultMaxTokens: number;
  maxModelLen: number;
  startDelayMs: number;
  engineId: string | undefined;
  role: EngineRole;
  kvConnector: MockKvConnector;
  bootstrapPort: number | undefined;
  dataParallelSize: number;
  kvCache: ResolvedKvCache | null;
  flavor: EngineFlavor;
  embeddingDim: number;
  recordLimit: number;
}

export function resolveOptions(o: MockEngineOptions = {}): ResolvedOptions {
  const tokenDelayMs = o.tokenDelayMs ?? 0;
  const kv = o.kvCache === true ? {} : o.kvCache || null;
  return {
    port: o.port ?? 0,
    host: o.host ?? "127.0.0.1",
    models: o.models?.length ? [...o.models] : ["mock-model"],
    loras: [...(o.loras ?? [])],
    tokenDelayMs,
    defaultMaxTokens: o.defaultMaxTokens ?? 16,
    maxModelLen: o.maxModelLen ?? 4096,
    startDelayMs: o.startDelayMs ?? 0,
    engineId: o.engineId,
    role: o.role ?? "both",
    kvConnector: o.kvConnector ?? "",
    bootstrapPort: o.bootstrapPort,
    dataParallelSize: Math.max(1, o.dataParallelSize ?? 1),
    kvCache: kv && {
      blockSize: kv.blockSize ?? 16,
      capacityBlocks: kv.capacityBlocks ?? 2048,
      prefillMsPerToken: kv.prefillMsPerToken ?? 0.05,
      decodeMsPerToken: kv.decodeMsPerToken ?? tokenDelayMs,
      maxConcurrency: kv.maxConcurrency ?? 8,
    },
    flavor: o.flavor ?? "vllm",
    embeddingDim: o.embeddingDim ?? 32,
    recordLimit: o.recordLimit ?? 10_000,
  };
}
