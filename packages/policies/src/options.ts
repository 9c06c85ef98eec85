/** Knobs every policy shares. Clock and randomness are injectable so decisions replay in tests. */
export interface CommonOptions {
  /** An engine load scraped longer ago than this is ignored (only `inFlight` counts). */
  staleAfterMs?: number;
  /** ms since epoch; defaults to Date.now. */
  now?: () => number;
  /** Uniform in [0, 1); defaults to Math.random. */
  random?: () => number;
}

export const defaultStaleAfterMs = 5_000;

export interface Common {
  staleAfterMs: number;
  now: () => number;
  random: () => number;
}

export function common(o: CommonOptions = {}): Common {
  return {
    staleAfterMs: o.staleAfterMs ?? defaultStaleAfterMs,
    now: o.now ?? Date.now,
    random: o.random ?? Math.random,
  };
}
