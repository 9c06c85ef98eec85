import { LoadScan } from "./load_scan.ts";
import { common, type CommonOptions } from "./options.ts";
import type { Candidate, Policy, RouteRequest } from "./types.ts";

/** The candidate with the lowest load score; ties drawn at random so no worker is favoured. */
export function leastLoadPolicy(options: CommonOptions = {}): Policy {
  const { staleAfterMs, now, random } = common(options);
  const scan = new LoadScan();
  return {
    name: "least_load",
    pick(cands: readonly Candidate[], _req: RouteRequest): Candidate {
      if (cands.length === 1) return cands[0];
      scan.measure(cands, now(), staleAfterMs);
      return cands[scan.least(cands.length, random)];
    },
  };
}
