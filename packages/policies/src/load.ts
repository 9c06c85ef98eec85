import type { Candidate } from "./types.ts";

/**
 * How busy a worker is, in requests. The engine's own count (running + waiting) is what every
 * gateway replica agrees on, but it is only as new as the last scrape; our `inFlight` is exact
 * for this gateway and current. So between scrapes the engine count is moved by how much our own
 * in-flight count changed since the scrape, and never drops below what we know we have in flight.
 * A stale or missing scrape leaves only `inFlight`.
 */
export function loadScore(c: Candidate, now: number, staleAfterMs: number): number {
  const e = c.engineLoad;
  if (e === undefined || now - e.at > staleAfterMs) return c.inFlight;
  const engine = e.running + e.waiting;
  // Without the snapshot we cannot tell which engine requests are ours: take the larger view.
  const estimate = e.inFlightAtScrape === undefined ? engine : engine + (c.inFlight - e.inFlightAtScrape);
  return estimate > c.inFlight ? estimate : c.inFlight;
}
