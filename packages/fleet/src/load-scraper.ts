import { createEngineGrpcClient, parseEngineMetrics, type EngineGrpcClient } from "@switchboard/engines";
import type { EngineLoad } from "@switchboard/policies";
import type { WorkerIndex } from "./worker-index";
import type { WorkerView } from "./worker-view";

/** What one read of an engine's own numbers gives; undefined when the engine reports no load. */
export type LoadReading = Pick<EngineLoad, "running" | "waiting" | "kvUsage">;
export type ReadLoad = (view: WorkerView, signal: AbortSignal, timeoutMs: number) => Promise<LoadReading | undefined>;

export interface LoadScraperOptions {
  /** Time from the start of one round over the Ready workers to the start of the next; 0 = off. */
  intervalMs: number;
  /** Bound on one read (default: the interval, within 50..1000 ms). */
  timeoutMs?: number;
  /** Reads in flight at once (default 32): a large fleet is never read all at once. */
  concurrency?: number;
  /**
   * Reads started per second at most (default 200): a large fleet's round stretches past the
   * interval instead of burning a core on /metrics (policies then lean on in-flight counts).
   */
  maxReadsPerSecond?: number;
  /** How a load is read (default: GET /metrics, or GetLoads for grpc:// workers). */
  read?: ReadLoad;
  /** ms since epoch, stamped on each load as `at` (default Date.now). */
  now?: () => number;
}

export interface LoadScraperStats {
  rounds: number;
  /** Loads written. */
  reads: number;
  /** Reads that failed or timed out (the worker's previous load stays and goes stale). */
  failures: number;
  /** Reads whose answer was dropped: the worker left or its engine restarted meanwhile. */
  discarded: number;
}

export const defaultScrapeConcurrency = 32;
export const defaultMaxReadsPerSecond = 200;
/** A wait shorter than this is not worth a timer: the read starts at once. */
const minPauseMs = 2;

/**
 * Keeps each Ready worker's `engineLoad` fresh from the engine's own numbers (what every gateway
 * replica agrees on). Reads of one round are spread over the interval and at most `concurrency`
 * are in flight, so a fleet of thousands is read without a burst of sockets; a round that runs
 * late delays the next one rather than overlapping it. A load is stamped with the time it was
 * read (`at`), so a worker whose reads fail keeps an aging load the policies stop trusting
 * (staleAfterMs). The scraper never changes a worker's status: routability is the worker
 * machine's business.
 */
export class LoadScraper {
  readonly stats: LoadScraperStats = { rounds: 0, reads: 0, failures: 0, discarded: 0 };
  readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly maxReadsPerSecond: number;
  /** How long the last round was meant to take: the interval, or longer for a large fleet. */
  private roundMs: number;
  private readonly read: ReadLoad;
  private readonly now: () => number;
  private readonly grpcClients = new Map<string, EngineGrpcClient>();
  private stopper = new AbortController();
  private looping?: Promise<void>;
  private unsubscribe?: () => void;

  constructor(
    private readonly index: WorkerIndex,
    opts: LoadScraperOptions,
  ) {
    this.intervalMs = opts.intervalMs;
    this.timeoutMs = opts.timeoutMs ?? Math.min(1000, Math.max(50, opts.intervalMs));
    this.concurrency = Math.max(1, opts.concurrency ?? defaultScrapeConcurrency);
    this.maxReadsPerSecond = Math.max(1, opts.maxReadsPerSecond ?? defaultMaxReadsPerSecond);
    this.roundMs = opts.intervalMs;
    this.read = opts.read ?? ((v, s, t) => this.readEngine(v, s, t));
    this.now = opts.now ?? Date.now;
  }

  start(): this {
    if (this.looping || this.intervalMs <= 0) return this;
    this.stopper = new AbortController();
    this.unsubscribe = this.index.onChange((c) => {
      if (c.kind === "removed") this.dropClient(c.view.url);
    });
    this.looping = this.loop();
    return this;
  }

  /** Stops the rounds and cuts reads in flight; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.unsubscribe?.();
    await this.looping;
    this.looping = undefined;
    for (const url of [...this.grpcClients.keys()]) this.dropClient(url);
  }

  private async loop(): Promise<void> {
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      const started = performance.now();
      await this.round();
      await pause(this.roundMs - (performance.now() - started), signal);
    }
  }

  /** One pass over the workers Ready now; resolves when every read of it has ended. */
  async round(): Promise<void> {
    const signal = this.stopper.signal;
    const views = [...this.index.views.values()].filter((v) => v.status === "ready");
    this.roundMs = Math.max(this.intervalMs, (views.length * 1000) / this.maxReadsPerSecond);
    const gap = views.length > 0 ? this.roundMs / views.length : 0;
    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; i < views.length && !signal.aborted; i++) {
      await pause(started + i * gap - performance.now(), signal);
      while (inFlight.size >= this.concurrency) await Promise.race(inFlight);
      if (signal.aborted) break;
      const p: Promise<void> = this.scrape(views[i]!).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    this.stats.rounds++;
  }

  private async scrape(view: WorkerView): Promise<void> {
    const restarts = view.restarts;
    const signal = AbortSignal.any([this.stopper.signal, AbortSignal.timeout(this.timeoutMs)]);
    let reading: LoadReading | undefined;
    try {
      reading = await this.read(view, signal, this.timeoutMs);
    } catch {
      if (!this.stopper.signal.aborted) this.stats.failures++;
      return;
    }
    if (reading === undefined) return;
    // A load read from the engine process before a restart says nothing about the new one.
    if (view.gone || view.restarts !== restarts) {
      this.stats.discarded++;
      return;
    }
    view.engineLoad = { ...reading, at: this.now(), inFlightAtScrape: view.inFlight };
    this.stats.reads++;
  }

  private readEngine(view: WorkerView, signal: AbortSignal, timeoutMs: number): Promise<LoadReading | undefined> {
    return view.spec.connectionMode === "grpc" ? this.readGrpc(view.url, signal, timeoutMs) : readMetrics(view.url, signal);
  }

  /** GetLoads: requests summed over data-parallel ranks, token usage averaged. */
  private async readGrpc(url: string, signal: AbortSignal, timeoutMs: number): Promise<LoadReading | undefined> {
    let client = this.grpcClients.get(url);
    if (!client) this.grpcClients.set(url, (client = createEngineGrpcClient(url)));
    const { loads } = await client.getLoads(timeoutMs, {}, { signal });
    if (loads.length === 0) return undefined;
    let running = 0;
    let waiting = 0;
    let usage = 0;
    for (const l of loads) {
      running += l.numRunningReqs;
      waiting += l.numWaitingReqs;
      usage += l.tokenUsage;
    }
    return { running, waiting, kvUsage: usage / loads.length };
  }

  private dropClient(url: string): void {
    this.grpcClients.get(url)?.close();
    this.grpcClients.delete(url);
  }
}

/** GET /metrics (vLLM or SGLang names). An engine that reports neither count gives no load. */
async function readMetrics(url: string, signal: AbortSignal): Promise<LoadReading | undefined> {
  const res = await fetch(`${url.replace(/\/+$/, "")}/metrics`, { signal });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${url}/metrics answered ${res.status}`);
  }
  const m = parseEngineMetrics(await res.text());
  if (m.running === undefined && m.waiting === undefined) return undefined;
  // Data-parallel engines report one usage gauge per rank, which the parser sums.
  return { running: m.running ?? 0, waiting: m.waiting ?? 0, kvUsage: Math.min(1, m.kvUsage ?? 0) };
}

/** Waits `ms` (nothing below minPauseMs), or less if `signal` fires. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms < minPauseMs || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
