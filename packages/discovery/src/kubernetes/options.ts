/** How Kubernetes objects become workers: one serving pod, or one serving Service, per worker. */
export type KubeDiscoveryMode = "pod-ip" | "service-name";

/** Equality label selector, e.g. `{ app: "vllm" }` (the `--selector k=v` flags). */
export type LabelSelector = Record<string, string>;

/** What the object → worker mapping needs; the same for pods and Services. */
export interface WorkerMapping {
  /** The source name every worker carries, e.g. `k8s-pods:serving`. */
  source: string;
  /** The engine port (`--service-discovery-port`): a pod IP or Service name has none of its own. */
  port: number;
  /** Label carrying the model id (`--model-label`); absent: the engine's model list is used. */
  modelLabel?: string;
  /**
   * PD roles. When either is set, only objects matching one of them are workers (prefill wins
   * when both match); otherwise every selected object is a regular worker.
   */
  prefillSelector?: LabelSelector;
  decodeSelector?: LabelSelector;
}

/** Every bound of the list/watch loop. Tests shrink them; production keeps the defaults. */
export interface DiscoveryTiming {
  /** Bound on one whole list (all pages). */
  listTimeoutMs: number;
  /** Bound on getting a watch's response headers. */
  watchConnectTimeoutMs: number;
  /** The API server ends each watch after this long (then we list again). */
  watchTimeoutSeconds: number;
  /** A watch silent this long (no event, no bookmark, no close) is treated as dead. */
  watchIdleTimeoutMs: number;
  /** First reconnect delay ceiling; the first retry lands in [initial/2, initial). */
  backoffInitialMs: number;
  /** Ceiling on any reconnect delay. */
  backoffCapMs: number;
  /** A watch open this long counts as a healthy sync: the backoff starts over. */
  stableAfterMs: number;
}

export const defaultDiscoveryTiming: DiscoveryTiming = {
  listTimeoutMs: 15_000,
  watchConnectTimeoutMs: 10_000,
  watchTimeoutSeconds: 120,
  watchIdleTimeoutMs: 135_000,
  backoffInitialMs: 200,
  backoffCapMs: 30_000,
  stableAfterMs: 2_000,
};

/** The slice of a pino logger discovery writes to (`(fields, message)`); the gateway passes a child logger. */
export interface DiscoveryLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const silentLogger: DiscoveryLogger = { debug() {}, info() {}, warn() {}, error() {} };
