import type { RetryConfig } from "../config/types";

/** Exponential backoff with ±20% jitter, capped. */
export function backoffMs(attempt: number, cfg: RetryConfig): number {
  const base = Math.min(cfg.maxBackoffMs, cfg.initialBackoffMs * cfg.backoffMultiplier ** attempt);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
