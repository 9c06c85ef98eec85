import type { ResolvedOptions } from "./options.ts";
import { PrefixCache } from "./prefix-cache.ts";
import { Scheduler } from "./scheduler.ts";
import { zeroCounters, type EngineCounters, type KvStats } from "./state.ts";

/**
 * One life of the engine process: its counters, cache and queue. A restart replaces it whole;
 * requests keep the incarnation they started in, so a late finisher from before a restart cannot
 * disturb the new counters, and the old incarnation's `cut` signal ends them.
 */
export interface Incarnation {
  readonly number: number;
  readonly counters: EngineCounters;
  readonly kv: KvStats | null;
  readonly cache: PrefixCache | null;
  readonly scheduler: Scheduler | null;
  /** Fires when this incarnation ends (restart or stop): its in-flight requests are cut. */
  readonly cut: AbortController;
  /** In-flight slow-path requests by id, for an operator abort (the gRPC Abort RPC). */
  readonly inflight: Map<string, AbortController>;
  /** Request ids minted here: a per-incarnation prefix and a counter (cheap on the hot path). */
  readonly idPrefix: string;
  seq: number;
  /** Next fake KV block id handed out in NIXL kv_transfer_params. */
  blockCursor: number;
  /** Slow-path requests per LoRA adapter, for `vllm:lora_requests_info`. */
  readonly loraLoad: Map<string, { running: number; waiting: number }>;
}

export function newIncarnation(o: ResolvedOptions, number: number): Incarnation {
  const counters = zeroCounters();
  const k = o.kvCache;
  const kv = k && { blockSize: k.blockSize, capacityBlocks: k.capacityBlocks, usedBlocks: 0, cachedBlocks: 0, maxConcurrency: k.maxConcurrency };
  return {
    number,
    counters,
    kv,
    cache: k && new PrefixCache(k.blockSize, k.capacityBlocks),
    scheduler:
      k &&
      new Scheduler(k.maxConcurrency, (running, waiting) => {
        counters.running = running;
        counters.waiting = waiting;
      }),
    cut: new AbortController(),
    inflight: new Map(),
    idPrefix: crypto.randomUUID().replaceAll("-", "").slice(0, 16),
    seq: 0,
    blockCursor: 0,
    loraLoad: new Map(),
  };
}
