import { afterAll, describe, expect, test } from "bun:test";
import { startMockEngine, type KvCacheOptions, type MockEngine } from "../src/index.ts";
import { client, post, scrape, waitFor } from "./helpers.ts";

const engines: MockEngine[] = [];
afterAll(() => Promise.all(engines.map((e) => e.stop())));

async function start(kvCache: KvCacheOptions) {
  const e = await startMockEngine({ kvCache, maxModelLen: 100_000 });
  engines.push(e);
  return e;
}

// 64 chars = 16 tokens = one block at the default block size.
const block = (seed: string) => seed.repeat(64).slice(0, 64);
const shared = block("a") + block("b") + block("c") + block("d");

describe("simulated KV cache", () => {
  test("the same prefix twice: the second request hits the cache (counted in tokens)", async () => {
    const e = await start({ prefillMsPerToken: 0 });
    const ai = client(e);
    await ai.completions.create({ model: "mock-model", prompt: shared + "first question", max_tokens: 1 });
    expect(await scrape(e, "vllm:prefix_cache_hits_total")).toBe(0);
    const q1 = (await scrape(e, "vllm:prefix_cache_queries_total"))!;
    expect(q1).toBeGreaterThan(64);

    const r = await ai.completions.create({ model: "mock-model", prompt: shared + "second question", max_tokens: 1 });
    expect(await scrape(e, "vllm:prefix_cache_hits_total")).toBe(64); // four full shared blocks
    expect(await scrape(e, "vllm:prefix_cache_queries_total")).toBeGreaterThan(q1);
    expect((r.usage as any).prompt_tokens_details).toEqual({ cached_tokens: 64 });
    expect(e.received.at(-1)!.cachedTokens).toBe(64);
    expect(e.state.counters.prefixHits).toBe(64);

    await ai.completions.create({ model: "mock-model", prompt: block("z") + shared, max_tokens: 1 });
    expect(await scrape(e, "vllm:prefix_cache_hits_total")).toBe(64); // a different first block shares nothing
  });

  test("chat prompts are rendered stably: the same conversation hits", async () => {
    const e = await start({ prefillMsPerToken: 0 });
    const ai = client(e);
    const messages = [
      { role: "system" as const, content: shared },
      { role: "user" as const, content: "hi" },
    ];
    await ai.chat.completions.create({ model: "mock-model", messages, max_tokens: 1 });
    await ai.chat.completions.create({ model: "mock-model", messages, max_tokens: 1 });
    expect(e.state.counters.prefixHits).toBeGreaterThanOrEqual(64);
  });

  test("the last prompt token is always computed: a fully cached prompt still misses its last block", async () => {
    const e = await start({ prefillMsPerToken: 0 });
    await post(`${e.url}/v1/completions`, { prompt: shared, max_tokens: 1 });
    await post(`${e.url}/v1/completions`, { prompt: shared, max_tokens: 1 });
    expect(e.state.counters.prefixHits).toBe(48);
  });

  test("LRU capacity: old blocks are evicted", async () => {
    const e = await start({ prefillMsPerToken: 0, capacityBlocks: 4 });
    await post(`${e.url}/v1/completions`, { prompt: shared + "x", max_tokens: 1 });
    await post(`${e.url}/v1/completions`, { prompt: block("p") + block("q") + block("r") + block("s") + "x", max_tokens: 1 });
    await post(`${e.url}/v1/completions`, { prompt: shared + "x", max_tokens: 1 });
    expect(e.state.counters.prefixHits).toBe(0);
    expect(e.state.kv!.cachedBlocks).toBe(4);
  });

  test("flush_cache empties the prefix cache", async () => {
    const e = await start({ prefillMsPerToken: 0 });
    await post(`${e.url}/v1/completions`, { prompt: shared + "x", max_tokens: 1 });
    expect((await post(`${e.url}/reset_prefix_cache`, "")).status).toBe(200);
    await post(`${e.url}/v1/completions`, { prompt: shared + "x", max_tokens: 1 });
    expect(e.state.counters.prefixHits).toBe(0);
  });

  test("concurrency limit: excess requests wait in a FIFO queue; usage rises while they run", async () => {
    const e = await start({ prefillMsPerToken: 0, decodeMsPerToken: 15, maxConcurrency: 2, capacityBlocks: 64 });
    const all = Array.from({ length: 5 }, (_, i) => post(`${e.url}/v1/completions`, { prompt: `${i} ${shared}`, max_tokens: 20 }, 10_000));
    await waitFor(async () => (await scrape(e, "vllm:num_requests_waiting")) === 3, 3_000, "three waiting");
    expect(await scrape(e, "vllm:num_requests_running")).toBe(2);
    expect(await scrape(e, "vllm:kv_cache_usage_perc")).toBeGreaterThan(0);
    const done = await Promise.all(all);
    expect(done.every((r) => r.status === 200)).toBe(true);
    expect(await scrape(e, "vllm:num_requests_waiting")).toBe(0);
    expect(await scrape(e, "vllm:num_requests_running")).toBe(0);
    expect(await scrape(e, "vllm:kv_cache_usage_perc")).toBe(0);
    expect(e.state.counters.served).toBe(5);
  });

  test("time to first token follows the uncached prompt length", async () => {
    const e = await start({ prefillMsPerToken: 2 });
    const long = shared.repeat(4); // 256 tokens: ~500 ms uncached
    const ttft = async (prompt: string) => {
      const t0 = performance.now();
      const res = await post(`${e.url}/v1/completions`, { prompt, max_tokens: 1, stream: true }, 10_000);
      await res.body!.getReader().read();
      return performance.now() - t0;
    };
    const cold = await ttft(long + "x");
    const warm = await ttft(long + "y");
    expect(e.received.at(-1)!.cachedTokens).toBe(256);
    expect(cold).toBeGreaterThan(300); // a lower bound on a sleep holds on any machine
    expect(warm).toBeLessThan(cold);
  });

  test("cache_config_info reports block size and pool size", async () => {
    const e = await start({ blockSize: 32, capacityBlocks: 100 });
    expect(await scrape(e, "vllm:cache_config_info", { block_size: "32", num_gpu_blocks: "100" })).toBe(1);
  });
});
