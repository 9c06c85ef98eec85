import { CandidateSetCache, positionsOf } from "./candidate_set_cache.ts";
import { LoadScan } from "./load_scan.ts";
import { common, type Common, type CommonOptions } from "./options.ts";
import { PrefixTree } from "./prefix_tree.ts";
import type { Candidate, Policy, RouteRequest } from "./types.ts";

export interface CacheAwareOptions extends CommonOptions {
  /** Follow a cached prefix when it covers at least this share of the text (default 0.3). */
  cacheThreshold?: number;
  /** The imbalance guard fires when the affine worker's load exceeds the least load by more than this (default 2) … */
  balanceAbsThreshold?: number;
  /** … and is more than this multiple of the least load (default 1.5). */
  balanceRelThreshold?: number;
  /** Text remembered per worker, in chars; least recently used prefixes go first (default 2M). */
  maxCharsPerWorker?: number;
  /** Prefixes unused for this long are forgotten (default 120 s): the engine has likely evicted them. */
  evictAfterMs?: number;
  /** How often a sweep of expired prefixes starts (default evictAfterMs / 4). No timers: picks run it. */
  sweepEveryMs?: number;
  /** Tree entries a pick looks at while a sweep is under way (default 256), bounding its cost. */
  sweepBudget?: number;
}

export const cacheAwareDefaults = {
  cacheThreshold: 0.3,
  // Bounded-load affinity: the worker affinity picked may run at most this many requests above the
  // least loaded before the guard spills (with balanceRelThreshold). SMG's 64 suits engines that run
  // hundreds at once; measured on bench:routing, 64 sends a whole burst of one prefix to one engine
  // (max/mean 8.0) while 2 keeps it at 1.28 and costs the prefix-heavy workloads nothing measurable.
  balanceAbsThreshold: 2,
  balanceRelThreshold: 1.5,
  maxCharsPerWorker: 2_000_000,
  evictAfterMs: 120_000,
} as const;

/** Size-based eviction trims to this share of the cap, so it runs once per ~10% of growth. */
const lowWater = 0.9;

/** Why the last pick went where it did. */
export type CacheAwareReason = "affinity" | "spread" | "balance" | "no_text";

/**
 * Send a request where its prefix is probably cached, unless that piles work onto one engine.
 *
 * 1. When some candidate has seen at least `cacheThreshold` of the text, the least loaded of the
 *    candidates that share the longest prefix gets it ("affinity") …
 * 2. … unless that worker is too far above the least loaded one (absolute AND relative): then the
 *    imbalance guard gives the request to the least loaded ("balance"). The guard judges the
 *    worker affinity chose, not the spread of the whole fleet: one hot worker is no reason to
 *    throw away the cached prefixes of requests bound for idle ones, so the guard can be set
 *    tight (a few requests) without costing affinity elsewhere.
 * 3. Otherwise (no text, or too little cached) the least loaded gets it, ties to the one holding
 *    the least cached text ("spread").
 * The chosen worker is then recorded as having seen the text.
 *
 * Hot spots: a burst with one prefix follows affinity to one worker until that worker's load is
 * `balanceAbsThreshold` above the least loaded; then the guard sends requests to the least loaded
 * worker (recording the prefix there too), and affinity then picks the least loaded of the
 * workers holding the prefix. So a burst is spread with no worker more than about
 * balanceAbsThreshold above the least loaded. This depends on the caller's loads moving between
 * picks: the gateway counts a request in `inFlight` as soon as it is routed, before the next pick.
 *
 * Engine restarts: a candidate whose `incarnation` differs from the one recorded when its
 * prefixes were inserted has lost its cache; its entries are dropped when it is next seen.
 */
export class CacheAwarePolicy implements Policy {
  readonly name = "cache_aware";
  readonly needsText = true;
  /** For tests and metrics: why the last pick went where it did. */
  lastReason: CacheAwareReason = "no_text";
  readonly tree = new PrefixTree();

  private readonly c: Common;
  private readonly cacheThreshold: number;
  private readonly absThreshold: number;
  private readonly relThreshold: number;
  private readonly maxChars: number;
  private readonly evictAfterMs: number;
  private readonly sweepEveryMs: number;
  private readonly sweepBudget: number;
  private lastSweep = -Infinity;
  private sweeping = false;
  private readonly scan = new LoadScan();
  private readonly positions = new CandidateSetCache(positionsOf);
  /** The incarnation each worker's entries were recorded under. */
  private readonly incarnations = new Map<string, string | null>();

  constructor(options: CacheAwareOptions = {}) {
    this.c = common(options);
    this.cacheThreshold = options.cacheThreshold ?? cacheAwareDefaults.cacheThreshold;
    this.absThreshold = options.balanceAbsThreshold ?? cacheAwareDefaults.balanceAbsThreshold;
    this.relThreshold = options.balanceRelThreshold ?? cacheAwareDefaults.balanceRelThreshold;
    this.maxChars = options.maxCharsPerWorker ?? cacheAwareDefaults.maxCharsPerWorker;
    this.evictAfterMs = options.evictAfterMs ?? cacheAwareDefaults.evictAfterMs;
    this.sweepEveryMs = options.sweepEveryMs ?? this.evictAfterMs / 4;
    this.sweepBudget = options.sweepBudget ?? 256;
  }

  pick(cands: readonly Candidate[], req: RouteRequest): Candidate {
    const now = this.c.now();
    this.sweepStep(now);
    const n = cands.length;
    const scan = this.scan;
    scan.measure(cands, now, this.c.staleAfterMs);
    const text = req.text;
    let chosen: number;
    if (text === undefined || text === "") {
      chosen = scan.least(n, this.c.random);
      this.lastReason = "no_text";
    } else {
      chosen = this.byPrefix(cands, text, now);
      // The guard judges the worker affinity chose (see the class comment).
      const load = scan.scores[chosen];
      if (this.lastReason === "affinity" && load - scan.min > this.absThreshold && load > this.relThreshold * scan.min) {
        chosen = scan.least(n, this.c.random);
        this.lastReason = "balance";
      }
    }
    const winner = cands[chosen];
    if (text !== undefined && text !== "") this.record(winner, text, now);
    return winner;
  }

  forget(workerId: string): void {
    this.tree.forget(workerId);
    this.incarnations.delete(workerId);
  }

  /**
   * Drops all prefixes not used since `now - evictAfterMs`, at once (O(entries)). Picks do this
   * by themselves a little at a time; this is for a caller that wants memory back while idle.
   */
  sweep(now: number): void {
    this.tree.expire(now - this.evictAfterMs);
    this.lastSweep = now;
    this.sweeping = false;
    this.dropIdleIncarnations();
  }

  /** Expired entries are already ignored by matching; sweeping only returns their memory. */
  private sweepStep(now: number): void {
    if (!this.sweeping) {
      if (now - this.lastSweep < this.sweepEveryMs) return;
      this.sweeping = true;
      this.lastSweep = now;
    }
    if (this.tree.expireSome(now - this.evictAfterMs, this.sweepBudget)) {
      this.sweeping = false;
      this.dropIdleIncarnations();
    }
  }

  private dropIdleIncarnations(): void {
    for (const w of this.incarnations.keys()) if (this.tree.chars(w) === 0) this.incarnations.delete(w);
  }

  private byPrefix(cands: readonly Candidate[], text: string, now: number): number {
    const cutoff = now - this.evictAfterMs;
    const restarted: string[] = [];
    let pos = this.positions.get(cands).value;
    let moved = false;
    const accept = (w: string, seen: number) => {
      if (seen < cutoff) return false;
      const i = pos.get(w);
      if (i === undefined) return false;
      if (cands[i].id !== w) {
        moved = true; // the array changed in place since the index was built
        return false;
      }
      if (this.incarnations.get(w) !== incarnationOf(cands[i])) {
        restarted.push(w);
        return false;
      }
      return true;
    };
    let match = this.tree.longestMatch(text, accept);
    if (moved) {
      pos = this.positions.get(cands, true).value;
      match = this.tree.longestMatch(text, accept);
    }
    for (const w of restarted) this.forget(w);
    const scores = this.scan.scores;
    if (match.workers.length > 0 && match.matched / text.length >= this.cacheThreshold) {
      this.lastReason = "affinity";
      let best = -1;
      let bestScore = Infinity;
      let ties = 0;
      for (const w of match.workers) {
        const i = pos.get(w)!;
        const s = scores[i];
        if (s < bestScore) {
          bestScore = s;
          best = i;
          ties = 1;
        } else if (s === bestScore && this.c.random() * ++ties < 1) {
          best = i; // reservoir draw: each tied worker equally likely
        }
      }
      return best;
    }
    this.lastReason = "spread";
    return this.scan.least(cands.length, this.c.random, (i) => this.tree.chars(cands[i].id));
  }

  private record(c: Candidate, text: string, now: number): void {
    const inc = incarnationOf(c);
    const known = this.incarnations.get(c.id);
    if (known !== undefined && known !== inc) this.tree.forget(c.id);
    this.incarnations.set(c.id, inc);
    this.tree.insert(text.length > this.maxChars ? text.slice(0, this.maxChars) : text, c.id, now);
    if (this.tree.chars(c.id) > this.maxChars) this.tree.evictLeastRecent(c.id, this.maxChars * lowWater);
  }
}

function incarnationOf(c: Candidate): string | null {
  return c.incarnation ?? null;
}
