import type { HealthConfig } from "@switchboard/workers";
import type { PolicyName } from "@switchboard/policies";

export interface RetryConfig {
  maxRetries: number;
  initialBackoffMs: number;
  backoffMultiplier: number;
  maxBackoffMs: number;
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
}
