import { CandidateSetCache } from "./candidate_set_cache.ts";
import { HashRing } from "./hash_ring.ts";
import type { Candidate, Policy, RouteRequest } from "./types.ts";

export interface ConsistentHashOptions {
  /** Points per worker on the ring (default 160). */
  virtualNodes?: number;
}

export const defaultVirtualNodes = 160;

/**
 * Session affinity: the same `sessionKey` goes to the same worker while the candidate set holds
 * still, and a worker joining or leaving moves only its own share of sessions. Requests without
 * a key go to `fallback`. The ring is rebuilt only when the candidate ids change.
 */
export class ConsistentHashPolicy implements Policy {
  readonly name = "consistent_hash";
  readonly needsSessionKey = true;
  readonly needsText: boolean;
  private readonly rings: CandidateSetCache<HashRing>;

  constructor(
    private readonly fallback: Policy,
    options: ConsistentHashOptions = {},
  ) {
    const vnodes = options.virtualNodes ?? defaultVirtualNodes;
    if (!(vnodes >= 1)) throw new Error(`consistent_hash: virtualNodes must be ≥ 1, got ${vnodes}`);
    this.rings = new CandidateSetCache((cands, previous) => HashRing.build(cands.map((c) => c.id), vnodes, previous));
    this.needsText = fallback.needsText === true;
  }

  pick(cands: readonly Candidate[], req: RouteRequest): Candidate {
    const key = req.sessionKey;
    if (key === undefined || key === "") return this.fallback.pick(cands, req);
    if (cands.length === 1) return cands[0];
    let entry = this.rings.get(cands);
    let i = entry.value.ownerOfKey(key);
    if (cands[i].id !== entry.ids[i]) {
      entry = this.rings.get(cands, true); // the array changed in place
      i = entry.value.ownerOfKey(key);
    }
    return cands[i];
  }

  forget(workerId: string): void {
    this.fallback.forget?.(workerId);
  }

  /** How many times a ring was built (a changed candidate set); for tests and metrics. */
  get ringBuilds(): number {
    return this.rings.rebuilds;
  }
}
