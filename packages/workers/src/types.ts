/** What a worker is: everything discovery or an operator says about it. */
export type WorkerType = "regular" | "prefill" | "decode";
/** How the router talks to the engine. "grpc" probes over the gRPC control plane. */
export type ConnectionMode = "http" | "grpc";
export type KvConnector = "MooncakeConnector" | "NixlConnector" | "sglang" | "";

export interface WorkerSpec {
  id: string;
  url: string;
  connectionMode: ConnectionMode;
  workerType: WorkerType;
  /** A model id given at registration; when set, the engine's list is not required. */
  modelId?: string;
  labels: Record<string, string>;
  priority: number;
  /** PD: the prefill's bootstrap port (Mooncake / SGLang). */
  bootstrapPort?: number;
  kvConnector?: KvConnector;
  /** An engine id given at registration (seed) or pinned by the operator. */
  engineId?: string;
  engineIdPinned?: boolean;
  /** Which discovery source created it, e.g. "static", "admin", "k8s-pods:ns". */
  source: string;
  /** The source's own key for it (pod uid, service name, url). */
  sourceKey: string;
  /** A sleeping engine (vLLM sleep mode) is never routable. */
  sleeping?: boolean;
}

/** One model as the engine lists it (`GET /v1/models`). LoRA adapters have a parent. */
export interface ModelInfo {
  id: string;
  parent?: string | null;
  root?: string;
  maxModelLen?: number;
}

export type WorkerStatus = "pending" | "ready" | "not_ready" | "failed" | "draining";

export interface HealthConfig {
  intervalMs: number;
  timeoutMs: number;
  failureThreshold: number;
  successThreshold: number;
  endpoint: string;
  /** Cadence while Pending or recovering: the worker is not left waiting a full interval. */
  fastIntervalMs: number;
  /** Re-read the model list every N probes (0 = never after the first read). */
  modelRefreshEvery: number;
  /** Upper bound on how long Draining waits for in-flight requests. */
  drainTimeoutMs: number;
}

export const defaultHealthConfig: HealthConfig = {
  intervalMs: 60_000,
  timeoutMs: 5_000,
  failureThreshold: 3,
  successThreshold: 2,
  endpoint: "/health",
  fastIntervalMs: 1_000,
  modelRefreshEvery: 10,
  drainTimeoutMs: 30_000,
};

/** The engine's identity as last read: the KV-transfer engine id and the process incarnation. */
export interface EngineIdentity {
  /** KV-transfer engine id (Mooncake / gRPC kv_engine_id); null when the engine has none. */
  engineId: string | null;
  /** Something that changes when the engine process restarts (start time, uptime epoch, engine id). */
  incarnation: string | null;
  dataParallelSize?: number;
  kvConnector?: string;
  kvRole?: string;
}

/** What one probe learned. Everything but `healthy` is optional: a part not asked for or not read is absent. */
export interface ProbeResult {
  healthy: boolean;
  detail: string;
  latencyMs: number;
  /** Present when the model list was asked for: the list, or "failed". */
  models?: ModelInfo[] | "failed";
  /**
   * Present when the identity was asked for. "failed" = the read did not complete (error, timeout,
   * partial answer); an EngineIdentity = a completed read (engineId null = the engine has none).
   */
  identity?: EngineIdentity | "failed";
  /** The cheap per-probe incarnation marker, when the transport offers one. */
  incarnation?: string | null;
}

export interface ProbeRequest {
  spec: WorkerSpec;
  config: HealthConfig;
  wantModels: boolean;
  wantIdentity: boolean;
  /**
   * The incarnation the worker knows. A probe that sees a different one has found an in-place
   * restart and reads identity and models in the same call, so the new id is used at once.
   */
  knownIncarnation: string | null;
  signal: AbortSignal;
}

/** The engine side of a probe, injected into the machine (HTTP or gRPC). */
export type ProbeFn = (req: ProbeRequest) => Promise<ProbeResult>;
