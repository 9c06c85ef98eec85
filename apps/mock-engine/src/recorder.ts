/** One inference request as the engine received it. */
export interface RecordedRequest {
  /** The engine's request id (X-Request-Id when the client sent one). */
  id: string;
  path: string;
  /** The parsed JSON body (undefined when it did not parse). */
  body: any;
  headers: Record<string, string>;
  kv_transfer_params?: Record<string, unknown>;
  /** SGLang PD fields, when present. */
  bootstrap?: { host?: unknown; port?: unknown; room?: unknown };
  /** The rank pinned by `X-data-parallel-rank`. */
  dpRank?: number;
  /** ms since epoch. */
  at: number;
  /** The HTTP status answered (0 while in flight or when the connection was dropped). */
  status: number;
  /** The client went away (or the engine restarted) before the answer was complete. */
  aborted: boolean;
  completed: boolean;
  /** Prompt tokens found in the prefix cache (kv cache simulation only). */
  cachedTokens?: number;
  /** Decode side of a Mooncake transfer: did the prefill's bootstrap server name the engine id we were given? */
  kvPull?: { ok: boolean; reason: string };
}

/** A bounded record of inference requests: keeps the latest `limit`, counts all. */
export class Recorder {
  readonly list: RecordedRequest[] = [];
  total = 0;

  constructor(private readonly limit: number) {}

  /** False with a limit of 0 (benchmarks): callers skip the costlier parts of a record. */
  get enabled(): boolean {
    return this.limit > 0;
  }

  add(r: RecordedRequest): void {
    this.total++;
    if (this.limit <= 0) return;
    this.list.push(r);
    // Trim in chunks so a long benchmark does not pay O(n) per request.
    if (this.list.length >= this.limit * 2) this.list.splice(0, this.list.length - this.limit);
  }

  clear(): void {
    this.list.length = 0;
  }
}
