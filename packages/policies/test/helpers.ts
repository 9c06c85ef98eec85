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

/** A seeded PRNG (mulberry32) so statistical tests replay exactly. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
