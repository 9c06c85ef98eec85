import type { PolicyOptions } from "@switchboard/policies";
import type { GatewayConfig } from "./types";

/** A scraped engine load older than this many scrape intervals is not trusted by the policies. */
export const staleAfterIntervals = 3;

/** createPolicy options from the config (every policy the gateway makes, PD roles included). */
export function policyOptions(config: GatewayConfig): PolicyOptions {
  const scrapeMs = config.loadScrapeIntervalMs ?? 0;
  return { ...config.cacheAware, ...(scrapeMs > 0 ? { staleAfterMs: staleAfterIntervals * scrapeMs } : {}) };
}
