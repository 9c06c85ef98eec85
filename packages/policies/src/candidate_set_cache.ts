import type { Candidate } from "./types.ts";

export interface CandidateSetEntry<T> {
  /** The ids the value was built for, in candidate order. */
  readonly ids: readonly string[];
  readonly value: T;
}

/**
 * Something derived from a candidate set (a hash ring, an id → position index), rebuilt only
 * when the set of ids changes. Candidate loads change every request, ids rarely, so entries are
 * keyed by the id sequence. Several entries are kept because one policy serves several
 * (model, role) candidate sets.
 *
 * Lookup: the same array object with the same length is taken as the same set (O(1)); any
 * other array is compared id by id (O(n), no allocation). An array changed in place with the
 * same length would slip past the fast path, so callers check the ids they actually use against
 * `entry.ids` and call again with `verify` on a mismatch.
 */
export class CandidateSetCache<T> {
  private entries: { ids: string[]; value: T; last: readonly Candidate[] }[] = [];
  rebuilds = 0;

  constructor(
    /** `previous`: the most recently used value, which a build may reuse in part. */
    private readonly build: (cands: readonly Candidate[], previous: T | undefined) => T,
    private readonly capacity = 8,
  ) {}

  get(cands: readonly Candidate[], verify = false): CandidateSetEntry<T> {
    const entries = this.entries;
    if (!verify) {
      for (const entry of entries) if (entry.last === cands && entry.ids.length === cands.length) return entry;
    }
    for (let e = 0; e < entries.length; e++) {
      const entry = entries[e];
      if (sameIds(entry.ids, cands)) {
        entry.last = cands;
        if (e > 0) {
          entries.splice(e, 1);
          entries.unshift(entry);
        }
        return entry;
      }
    }
    this.rebuilds++;
    const entry = { ids: cands.map((c) => c.id), value: this.build(cands, entries[0]?.value), last: cands };
    entries.unshift(entry);
    if (entries.length > this.capacity) entries.pop();
    return entry;
  }
}

function sameIds(ids: string[], cands: readonly Candidate[]): boolean {
  if (ids.length !== cands.length) return false;
  for (let i = 0; i < ids.length; i++) if (ids[i] !== cands[i].id) return false;
  return true;
}

/** id → position in the candidate array. */
export function positionsOf(cands: readonly Candidate[]): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < cands.length; i++) m.set(cands[i].id, i);
  return m;
}
