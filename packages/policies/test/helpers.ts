import type { Candidate, EngineLoad } from "../src/index.ts";

export function cand(id: string, inFlight = 0, extra: Partial<Candidate> = {}): Candidate {
  return { id, url: `http://127.0.0.1:1/${id}`, priority: 0, labels: {}, inFlight, ...extra };
}

export function fleet(n: number, prefix = "w"): Candidate[] {
  return Array.from({ length: n }, (_, i) => cand(`${prefix}${i}`));
}

export function engine(running: number, waiting: number, at: number, inFlightAtScrape?: number): EngineLoad {
  return { running, waiting, kvUsage: 0, at, inFlightAtScrape };
}

export { seededRandom as seeded } from "@switchboard/testkit";

/** A clock the test moves by hand. */
export function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), set: (ms: number) => void (t = ms) };
}

export function counts(picks: readonly Candidate[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of picks) m.set(c.id, (m.get(c.id) ?? 0) + 1);
  return m;
}

/** A random lowercase string of `len` chars. */
export function randomText(rng: () => number, len: number): string {
  let s = "";
  for (let i = 0; i < len; i++) s += String.fromCharCode(97 + Math.floor(rng() * 26));
  return s;
}
