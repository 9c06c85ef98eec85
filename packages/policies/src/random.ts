import { common, type CommonOptions } from "./options.ts";
import type { Candidate, Policy, RouteRequest } from "./types.ts";

/** A uniformly random candidate. */
export function randomPolicy(options: CommonOptions = {}): Policy {
  const { random } = common(options);
  return {
    name: "random",
    pick(cands: readonly Candidate[], _req: RouteRequest): Candidate {
      return cands[Math.floor(random() * cands.length)];
    },
  };
}
