import type { HealthConfig } from "@switchboard/workers";
import type { PolicyName } from "@switchboard/policies";

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
}
