import { loadScore } from "./load.ts";
import { common, type CommonOptions } from "./options.ts";
import type { Candidate, Policy, RouteRequest } from "./types.ts";

/**
 * Two distinct candidates at random, the less loaded wins (a tie is a coin flip). O(1) per
 * request, and unlike least_load it does not stampede every replica onto the same minimum
 * when their load views lag.
 */
export function powerOfTwoPolicy(options: CommonOptions = {}): Policy {
  const { staleAfterMs, now, random } = common(options);
  return {
    name: "power_of_two",
    pick(cands: readonly Candidate[], _req: RouteRequest): Candidate {
      const n = cands.length;
      if (n === 1) return cands[0];
      const i = Math.floor(random() * n);
      let j = Math.floor(random() * (n - 1));
      if (j >= i) j++;
      const t = now();
      const a = loadScore(cands[i], t, staleAfterMs);
      const b = loadScore(cands[j], t, staleAfterMs);
      if (a < b) return cands[i];
      if (b < a) return cands[j];
      return random() < 0.5 ? cands[i] : cands[j];
    },
  };
}
