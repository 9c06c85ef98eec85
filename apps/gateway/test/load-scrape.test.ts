import { afterAll, describe, expect, test } from "bun:test";
import type { MockEngine } from "@switchboard/mock-engine";
import { parseFlags } from "../src";
import { policyOptions } from "../src/config/policy-options";
import { Harness, post, testConfig, waitFor } from "./harness";

const h = new Harness();
const held = new AbortController();
afterAll(async () => {
  held.abort();
  await h.close();
});

/** A streaming completion sent straight to the engine (as another gateway replica would), holding a slot. */
function holdSlot(e: MockEngine): void {
  void fetch(`${e.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "mock-model", prompt: "busy elsewhere", max_tokens: 400, stream: true }),
    signal: held.signal,
  })
    .then((r) => r.body?.pipeTo(new WritableStream()))
    .catch(() => {});
}

describe("engine load scraping in the gateway", () => {
  test("least_load avoids an engine kept busy by someone else, seen only through its /metrics", async () => {
    const busy = await h.engine({ kvCache: { maxConcurrency: 1, decodeMsPerToken: 50 } });
    const idle = await h.engine({ kvCache: { maxConcurrency: 1, decodeMsPerToken: 1 } });
    const gw = h.gateway(testConfig(["--policy", "least_load", "--load-scrape-interval-ms", "50", "--worker-urls", busy.url, idle.url]));
    await waitFor(() => gw.fleet.index.readyCount() === 2, 5000, "two Ready workers");
    for (let i = 0; i < 3; i++) holdSlot(busy);
    const busyView = gw.fleet.index.byAddress(busy.url)!;
    const idleView = gw.fleet.index.byAddress(idle.url)!;
    await waitFor(() => (busyView.engineLoad?.running ?? 0) + (busyView.engineLoad?.waiting ?? 0) === 3, 5000, "the busy engine's load");

    const picked: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await post(`${gw.url}/v1/completions`, { model: "mock-model", prompt: "hi", max_tokens: 1 });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      picked.push(res.headers.get("x-switchboard-worker")!);
    }
    expect(picked.every((id) => id === idleView.id)).toBe(true);

    const workers = (await (await fetch(`${gw.url}/workers`)).json()) as { workers: { url: string; engine_load: unknown }[] };
    expect(workers.workers.find((w) => w.url === busy.url)?.engine_load).toMatchObject({ running: 1, waiting: 2 });
  });

  test("--load-scrape-interval-ms 0 turns it off", async () => {
    const e = await h.engine();
    const gw = h.gateway(testConfig(["--load-scrape-interval-ms", "0", "--worker-urls", e.url]));
    await waitFor(() => gw.fleet.index.readyCount() === 1, 5000, "a Ready worker");
    await Bun.sleep(150);
    expect(gw.fleet.loads).toBeUndefined();
    expect(gw.fleet.index.byAddress(e.url)!.engineLoad).toBeUndefined();
  });
});

describe("routing flags", () => {
  test("defaults: loads read every 500 ms; no cache_aware overrides", () => {
    const parsed = parseFlags([]);
    if (!("config" in parsed)) throw new Error(parsed.output);
    expect(parsed.config.loadScrapeIntervalMs).toBe(500);
    expect(parsed.config.cacheAware).toEqual({});
  });

  test("cache_aware knobs map to the policy's options", () => {
    const parsed = parseFlags([
      "--cache-threshold", "0.5", "--balance-abs-threshold", "4", "--balance-rel-threshold", "1.2",
      "--eviction-interval-secs", "10", "--max-tree-size", "100000",
    ]);
    if (!("config" in parsed)) throw new Error(parsed.output);
    expect(parsed.config.cacheAware).toEqual({ cacheThreshold: 0.5, balanceAbsThreshold: 4, balanceRelThreshold: 1.2, sweepEveryMs: 10_000, maxCharsPerWorker: 100_000 });
  });

  test("policies get the cache_aware knobs and trust a scraped load for 3 intervals", () => {
    const parsed = parseFlags(["--load-scrape-interval-ms", "200", "--balance-abs-threshold", "2"]);
    if (!("config" in parsed)) throw new Error(parsed.output);
    expect(policyOptions(parsed.config)).toEqual({ balanceAbsThreshold: 2, staleAfterMs: 600 });
    const off = parseFlags(["--load-scrape-interval-ms", "0"]);
    if (!("config" in off)) throw new Error(off.output);
    expect(policyOptions(off.config)).toEqual({});
  });

  test("bad values are refused with exit code 2", () => {
    for (const argv of [["--cache-threshold", "1.5"], ["--balance-abs-threshold", "-1"], ["--load-scrape-interval-ms", "0.5"], ["--max-tree-size", "0"]]) {
      const parsed = parseFlags(argv);
      expect("exitCode" in parsed && parsed.exitCode).toBe(2);
    }
  });
});
