import type { KubernetesDiscoveryOptions } from "@switchboard/discovery";
import type { HealthConfig } from "@switchboard/workers";
import type { CacheAwareOptions, PolicyName } from "@switchboard/policies";

export interface RetryConfig {
  maxRetries: number;
  initialBackoffMs: number;
  backoffMultiplier: number;
  maxBackoffMs: number;
}

/** PD disaggregation (`--pd-disaggregation`). */
export type PdKvConnector = "MooncakeConnector" | "NixlConnector" | "sglang";

export interface PdPrefillFlag {
  url: string;
  /** The prefill's bootstrap port (Mooncake / SGLang); absent = the connector's default. */
  bootstrapPort?: number;
}

export interface PdConfig {
  enabled: boolean;
  prefill: PdPrefillFlag[];
  decode: string[];
  prefillPolicy: PolicyName;
  decodePolicy: PolicyName;
  /** How KV moves, for workers that do not say (admin API `kv_connector`). */
  kvConnector: PdKvConnector;
}

export interface GatewayConfig {
  host: string;
  port: number;
  workerUrls: string[];
  policy: PolicyName;
  health: HealthConfig;
  requestTimeoutMs: number;
  retry: RetryConfig;
  adminApiKey?: string;
  logLevel: string;
  maxPayloadBytes: number;
  shutdownGraceMs: number;
  /** Extra header naming a session for consistent_hash. */
  sessionHeader?: string;
  /** Port of the Stately inspector WebSocket; none = off. */
  inspectorPort?: number;
  /** PD disaggregation; `enabled: false` unless --pd-disaggregation. */
  pd: PdConfig;
  // --- routing quality (load scraping, cache_aware tuning) ---
  /** How often each Ready worker's engine load is read, in ms; 0 or absent = off. */
  loadScrapeIntervalMs?: number;
  /** cache_aware knobs from the command line; an absent one is the policy's default. */
  cacheAware?: CacheAwareFlags;
  // --- end routing quality ---
  // --- Kubernetes discovery ---
  /** `--service-discovery` and its flags; absent when off. */
  serviceDiscovery?: KubernetesDiscoveryOptions;
  // --- end Kubernetes discovery ---
}

/** The cache_aware options the command line can set. */
export type CacheAwareFlags = Pick<CacheAwareOptions, "cacheThreshold" | "balanceAbsThreshold" | "balanceRelThreshold" | "sweepEveryMs" | "maxCharsPerWorker">;
