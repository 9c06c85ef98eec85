import type { Candidate, Policy, RouteRequest } from "./types.ts";

/** Each candidate in turn. The counter stays below the set size, so it never overflows. */
export function roundRobinPolicy(): Policy {
  let next = 0;
  return {
    name: "round_robin",
    pick(cands: readonly Candidate[], _req: RouteRequest): Candidate {
      const i = next % cands.length;
      next = i + 1;
      return cands[i];
    },
  };
}
