import { afterAll, describe, expect, test } from "bun:test";
import { startMockEngine, startMockGrpcEngine, type MockEngine, type MockGrpcEngine } from "@switchboard/mock-engine";
import type { ConnectionMode, WorkerStatus } from "@switchboard/workers";
import { LoadScraper, WorkerIndex, WorkerView, type ReadLoad } from "../src";

const engines: MockEngine[] = [];
const grpcEngines: MockGrpcEngine[] = [];
const scrapers: LoadScraper[] = [];
const servers: ReturnType<typeof Bun.serve>[] = [];
const requests = new AbortController();

afterAll(async () => {
  requests.abort();
  await Promise.all(scrapers.map((s) => s.stop()));
  for (const s of servers) s.stop(true);
  await Promise.all(grpcEngines.map((e) => e.stop()));
  await Promise.all(engines.map((e) => e.stop()));
});

async function waitFor(cond: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}

let n = 0;
function view(url: string, status: WorkerStatus = "ready", connectionMode: ConnectionMode = "http"): WorkerView {
  const id = `w${++n}`;
  const v = new WorkerView({ id, url, connectionMode, workerType: "regular", labels: {}, priority: 0, source: "test", sourceKey: id });
  v.status = status;
  return v;
}

function scraper(index: WorkerIndex, opts: Partial<ConstructorParameters<typeof LoadScraper>[1]> = {}): LoadScraper {
  const s = new LoadScraper(index, { intervalMs: 40, ...opts });
  scrapers.push(s);
  return s;
}

/** A streaming completion that holds an engine slot until the test ends. */
function hold(e: MockEngine): void {
  void fetch(`${e.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "mock-model", prompt: "x".repeat(400), max_tokens: 200, stream: true }),
    signal: requests.signal,
  })
    .then((r) => r.body?.pipeTo(new WritableStream()))
    .catch(() => {});
}

describe("LoadScraper", () => {
  test("HTTP: running and waiting from /metrics land on the Ready worker's view, and follow the engine", async () => {
    const e = await startMockEngine({ kvCache: { maxConcurrency: 1, decodeMsPerToken: 50 } });
    engines.push(e);
    const index = new WorkerIndex();
    const w = view(e.url);
    index.add(w);
    w.inFlight = 3;
    const s = scraper(index).start();
    await waitFor(() => w.engineLoad !== undefined, 5000, "a first load");
    expect(w.engineLoad).toMatchObject({ running: 0, waiting: 0, kvUsage: 0 });

    for (let i = 0; i < 3; i++) hold(e);
    await waitFor(() => w.engineLoad?.running === 1 && w.engineLoad.waiting === 2, 5000, "running 1, waiting 2");
    expect(w.engineLoad!.kvUsage).toBeGreaterThan(0);
    expect(w.engineLoad!.inFlightAtScrape).toBe(3);
    expect(Math.abs(Date.now() - w.engineLoad!.at)).toBeLessThan(5000);
    expect(w.status).toBe("ready");
    expect(s.stats.failures).toBe(0);
  });

  test("gRPC: GetLoads summed over data-parallel ranks, token usage averaged", async () => {
    const g = await startMockGrpcEngine({
      dataParallelSize: 2,
      loads: [
        { dpRank: 0, numRunningReqs: 2, numWaitingReqs: 1, tokenUsage: 0.5 },
        { dpRank: 1, numRunningReqs: 3, numWaitingReqs: 0, tokenUsage: 0.3 },
      ],
    });
    grpcEngines.push(g);
    const index = new WorkerIndex();
    const w = view(g.url, "ready", "grpc");
    index.add(w);
    scraper(index).start();
    await waitFor(() => w.engineLoad !== undefined, 5000, "a gRPC load");
    expect(w.engineLoad!.running).toBe(5);
    expect(w.engineLoad!.waiting).toBe(1);
    expect(w.engineLoad!.kvUsage).toBeCloseTo(0.4, 5);
  });

  test("only Ready workers are read, and their status is never touched", async () => {
    const e = await startMockEngine({ kvCache: true });
    engines.push(e);
    const index = new WorkerIndex();
    const ready = view(e.url);
    const pending = view(e.url.replace("127.0.0.1", "localhost"), "pending");
    const notReady = view(e.url.replace("127.0.0.1", "[::ffff:127.0.0.1]"), "not_ready");
    for (const v of [ready, pending, notReady]) index.add(v);
    const s = scraper(index).start();
    await waitFor(() => s.stats.rounds >= 3, 5000, "three rounds");
    expect(ready.engineLoad).toBeDefined();
    expect(pending.engineLoad).toBeUndefined();
    expect(notReady.engineLoad).toBeUndefined();
    expect([ready.status, pending.status, notReady.status]).toEqual(["ready", "pending", "not_ready"]);
  });

  test("a /metrics that never answers is cut at the timeout; other workers keep being read", async () => {
    const e = await startMockEngine({ kvCache: true });
    engines.push(e);
    const hung = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    servers.push(hung);
    const index = new WorkerIndex();
    const stuck = view(`http://127.0.0.1:${hung.port}`);
    const fine = view(e.url);
    index.add(stuck);
    index.add(fine);
    const s = scraper(index, { timeoutMs: 100 }).start();
    await waitFor(() => s.stats.failures >= 2 && s.stats.reads >= 2, 5000, "two timeouts and two reads");
    expect(stuck.engineLoad).toBeUndefined();
    expect(fine.engineLoad).toBeDefined();
    expect(stuck.status).toBe("ready");
  });

  test("a failing read leaves the previous load in place, to age (policies ignore it by `at`)", async () => {
    const e = await startMockEngine({ kvCache: true });
    engines.push(e);
    const index = new WorkerIndex();
    const w = view(e.url);
    index.add(w);
    const s = scraper(index).start();
    await waitFor(() => w.engineLoad !== undefined, 5000, "a first load");
    e.setFault({ metricsFail: true });
    const failures = s.stats.failures;
    await waitFor(() => s.stats.failures >= failures + 2, 5000, "failed reads");
    const at = w.engineLoad!.at;
    await waitFor(() => s.stats.failures >= failures + 4, 5000, "more failed reads");
    expect(w.engineLoad!.at).toBe(at);
  });

  test("a load read across an engine restart is dropped", async () => {
    const index = new WorkerIndex();
    const w = view("http://127.0.0.1:1");
    index.add(w);
    const read: ReadLoad = async () => {
      w.restarts++; // the index saw a restart while this read was out
      return { running: 9, waiting: 9, kvUsage: 1 };
    };
    const s = scraper(index, { read });
    await s.round();
    expect(w.engineLoad).toBeUndefined();
    expect(s.stats.discarded).toBe(1);
  });

  test("reads in flight are bounded, and a round is spread over the interval", async () => {
    const index = new WorkerIndex();
    const views = Array.from({ length: 40 }, (_, i) => view(`http://127.0.0.1:${10_000 + i}`));
    for (const v of views) index.add(v);
    let inFlight = 0;
    let most = 0;
    const starts: number[] = [];
    const read: ReadLoad = async () => {
      starts.push(performance.now());
      most = Math.max(most, ++inFlight);
      await Bun.sleep(30);
      inFlight--;
      return { running: 1, waiting: 0, kvUsage: 0 };
    };
    const s = scraper(index, { intervalMs: 20, concurrency: 3, read });
    await s.round();
    expect(most).toBe(3);
    expect(views.every((v) => v.engineLoad?.running === 1)).toBe(true);

    // Quick reads with room to spare are still paced: the last starts most of an interval after the first.
    starts.length = 0;
    const paced = scraper(index, { intervalMs: 200, read: async () => (starts.push(performance.now()), { running: 2, waiting: 0, kvUsage: 0 }) });
    await paced.round();
    expect(starts.length).toBe(40);
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(150);
  });

  test("interval 0 is off; stop ends the loop and cuts reads in flight", async () => {
    const index = new WorkerIndex();
    const w = view("http://127.0.0.1:1");
    index.add(w);
    let calls = 0;
    let cut = false;
    const read: ReadLoad = (_v, signal) => {
      calls++;
      return new Promise((_, reject) => signal.addEventListener("abort", () => ((cut = true), reject(new Error("aborted")))));
    };
    const off = scraper(index, { intervalMs: 0, read }).start();
    await Bun.sleep(50);
    expect(calls).toBe(0);
    await off.stop();

    const on = scraper(index, { intervalMs: 20, timeoutMs: 60_000, read }).start();
    await waitFor(() => calls > 0, 5000, "a read");
    await on.stop();
    expect(cut).toBe(true);
    const after = calls;
    await Bun.sleep(100);
    expect(calls).toBe(after);
  });
});

describe("LoadScraper at fleet scale", () => {
  test("reads are capped per second: a large fleet's round stretches past the interval", async () => {
    const index = new WorkerIndex();
    for (let i = 0; i < 40; i++) {
      const v = new WorkerView({ id: `w${i}`, url: `http://127.0.0.1:${10000 + i}`, connectionMode: "http", workerType: "regular", labels: {}, priority: 0, source: "t", sourceKey: `k${i}` });
      index.add(v);
      v.status = "ready";
    }
    let reads = 0;
    const scraper = new LoadScraper(index, { intervalMs: 10, maxReadsPerSecond: 100, read: async () => (reads++, { running: 0, waiting: 0, kvUsage: 0 }) });
    scraper.start();
    await Bun.sleep(200);
    await scraper.stop();
    // 100/s for 0.2 s is ~20 reads; uncapped, 40 workers every 10 ms would be hundreds.
    expect(reads).toBeGreaterThan(5);
    expect(reads).toBeLessThanOrEqual(30);
  });
});
