/**
 * Policies are pure decisions over a snapshot of Ready candidates. They may keep their own
 * routing memory (a counter, a prefix tree, a hash ring), but never worker state.
 */
export interface EngineLoad {
  running: number;
  waiting: number;
  /** 0..1 */
  kvUsage: number;
  /** ms since epoch of the scrape; a stale load is ignored. */
  at: number;
  /**
   * This gateway's `inFlight` to the worker when the scrape was taken. When given, the load
   * between scrapes is the engine's count moved by how much our own in-flight count changed
   * since; without it the policy cannot tell our requests apart from other replicas' ones.
   */
  inFlightAtScrape?: number;
}

export interface Candidate {
  readonly id: string;
  readonly url: string;
  readonly priority: number;
  readonly labels: Readonly<Record<string, string>>;
  /** Requests this gateway has in flight to the worker right now. */
  readonly inFlight: number;
  /** The engine's own numbers, when scraped. */
  readonly engineLoad?: EngineLoad;
  /** Changes when the engine process restarts: routing memory keyed by the old one is void. */
  readonly incarnation?: string | null;
}

export interface RouteRequest {
  model: string;
  /** The prompt as text (completions) or chat messages rendered stably; used by cache_aware. */
  text?: string;
  /** A session key from headers or body; used by consistent_hash. */
  sessionKey?: string;
  /** Pinned data-parallel rank, if the client asked for one. */
  dpRank?: number;
}

export interface Policy {
  readonly name: string;
  /** Pick one of `candidates` (never empty when called) for `request`. */
  pick(candidates: readonly Candidate[], request: RouteRequest): Candidate;
  /** Forget whatever belonged to a worker (it left, or its engine restarted). */
  forget?(workerId: string): void;
  /** Whether this policy needs `text` / `sessionKey` extracted (saves work on the hot path). */
  readonly needsText?: boolean;
  readonly needsSessionKey?: boolean;
}

export type PolicyName = "round_robin" | "random" | "least_load" | "power_of_two" | "cache_aware" | "consistent_hash";
