import { afterAll, describe, expect, test } from "bun:test";
import { startMockEngine, type MockEngine, type MockEngineOptions } from "../src/index.ts";
import { get, post, scrape } from "./helpers.ts";

const engines: MockEngine[] = [];
afterAll(() => Promise.all(engines.map((e) => e.stop())));
async function start(o: MockEngineOptions) {
  const e = await startMockEngine(o);
  engines.push(e);
  return e;
}

describe("NIXL: the prefill answers with kv_transfer_params", () => {
  test("a prefill asked to do_remote_decode returns where its blocks are", async () => {
    const p = await start({ role: "prefill", kvConnector: "NixlConnector", engineId: "nixl-p" });
    const res = await post(`${p.url}/v1/completions`, {
      prompt: "x".repeat(100),
      max_tokens: 1,
      kv_transfer_params: { do_remote_decode: true, do_remote_prefill: false },
    });
    const body = (await res.json()) as any;
    expect(body.kv_transfer_params).toEqual({
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_block_ids: [0, 1],
      remote_engine_id: "nixl-p",
      remote_host: "127.0.0.1",
      remote_port: expect.any(Number),
      tp_size: 1,
    });
    // Without the ask, vLLM sends null.
    const plain = (await (await post(`${p.url}/v1/completions`, { prompt: "x", max_tokens: 1 })).json()) as any;
    expect(plain.kv_transfer_params).toBeNull();
  });

  test("a decode engine never mints kv_transfer_params", async () => {
    const d = await start({ role: "decode", kvConnector: "NixlConnector" });
    const body = (await (await post(`${d.url}/v1/completions`, { prompt: "x", max_tokens: 1, kv_transfer_params: { do_remote_decode: true } })).json()) as any;
    expect(body.kv_transfer_params).toBeNull();
  });

  test("with data parallelism the pinned rank's id carries _dp<rank>", async () => {
    const p = await start({ role: "prefill", kvConnector: "NixlConnector", engineId: "E", dataParallelSize: 2 });
    const res = await get(`${p.url}/v1/completions`, {
      method: "POST",
      headers: { "x-data-parallel-rank": "1" },
      body: JSON.stringify({ prompt: "x", max_tokens: 1, kv_transfer_params: { do_remote_decode: true } }),
    });
    expect(((await res.json()) as any).kv_transfer_params.remote_engine_id).toBe("E_dp1");
  });
});

describe("Mooncake: bootstrap server and the decode's pull", () => {
  test("/query lists every data-parallel rank with its engine id", async () => {
    const p = await start({ role: "prefill", kvConnector: "MooncakeConnector", engineId: "E", dataParallelSize: 2, bootstrapPort: 0 });
    expect(p.bootstrapPort).toBeGreaterThan(0);
    const q = (await (await get(`${p.bootstrapUrl}/query`)).json()) as any;
    expect(Object.keys(q)).toEqual(["0", "1"]);
    expect(q["0"].engine_id).toBe("E_dp0");
    expect(q["1"].engine_id).toBe("E_dp1");
    expect(q["1"].worker_addr["0"]["0"]).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await get(`${p.bootstrapUrl}/nope`)).status).toBe(404);
    expect((await get(`${p.url}/get_server_info`).then((r) => r.json())) as any).toMatchObject({
      kv_connector: "MooncakeConnector",
      kv_role: "kv_producer",
      kv_engine_id: "E",
      dp_size: 2,
      disaggregation_bootstrap_port: p.bootstrapPort,
    });
  });

  test("/query is empty while the engine is still starting", async () => {
    const p = await start({ kvConnector: "MooncakeConnector", role: "prefill", bootstrapPort: 0, startDelayMs: 60_000 });
    expect(await (await get(`${p.bootstrapUrl}/query`)).json()).toEqual({});
  });

  test("a decode given the prefill's engine id pulls; a stale id or dead bootstrap fails (and it recomputes)", async () => {
    const p = await start({ role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0 });
    const d = await start({ role: "decode", kvConnector: "MooncakeConnector", kvCache: { prefillMsPerToken: 0 } });
    const decode = (engineId: string, addr = p.bootstrapUrl) =>
      post(`${d.url}/v1/completions`, {
        prompt: "hello ".repeat(40),
        max_tokens: 2,
        kv_transfer_params: { do_remote_decode: false, do_remote_prefill: true, transfer_id: "xfer-1", remote_engine_id: engineId, remote_bootstrap_addr: addr },
      });

    expect((await decode(p.state.engineId)).status).toBe(200);
    expect(d.received.at(-1)!.kvPull).toEqual({ ok: true, reason: "engine id matches" });
    expect(await scrape(d, "vllm:prefix_cache_queries_total")).toBe(0); // KV came from the prefill

    const stale = p.state.engineId;
    await p.restart();
    expect((await decode(stale)).status).toBe(200);
    expect(d.received.at(-1)!.kvPull?.ok).toBe(false);
    expect(d.received.at(-1)!.kvPull?.reason).toContain("not at bootstrap");
    expect(await scrape(d, "vllm:prefix_cache_queries_total")).toBeGreaterThan(0); // recomputed locally

    expect((await decode(p.state.engineId, "http://127.0.0.1:1")).status).toBe(200);
    expect(d.received.at(-1)!.kvPull?.reason).toContain("unreachable");
    expect(d.state.counters).toMatchObject({ kvPullsOk: 1, kvPullsFailed: 2 });
  });
});

describe("SGLang flavour", () => {
  test("sglang metric names and PD fields recorded", async () => {
    const s = await start({ flavor: "sglang", role: "decode", kvCache: { blockSize: 8, capacityBlocks: 10 } });
    const text = await (await get(`${s.url}/metrics`)).text();
    expect(text).toContain("sglang:num_running_reqs{");
    expect(text).toContain("sglang:num_queue_reqs{");
    expect(text).toContain("sglang:token_usage{");
    expect(text).toContain('sglang:cache_config_info{num_pages="10",page_size="8"} 1.0');
    expect(text).toContain("process_start_time_seconds ");
    expect(text).not.toContain("vllm:");
    await post(`${s.url}/v1/chat/completions`, { messages: [{ role: "user", content: "x" }], bootstrap_host: "10.1.1.1", bootstrap_port: 8998, bootstrap_room: 123456789 });
    expect(s.received.at(-1)!.bootstrap).toEqual({ host: "10.1.1.1", port: 8998, room: 123456789 });
    expect(((await (await get(`${s.url}/get_server_info`)).json()) as any).disaggregation_mode).toBe("decode");
  });
});
