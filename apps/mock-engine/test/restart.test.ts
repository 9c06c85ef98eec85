import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockEngine, type MockEngine } from "../src/index.ts";
import { get, post, scrape, waitFor } from "./helpers.ts";

let engine: MockEngine;

beforeAll(async () => {
  engine = await startMockEngine({ bootstrapPort: 0, kvConnector: "MooncakeConnector", role: "prefill", tokenDelayMs: 20 });
});
afterAll(() => engine.stop());

const queryEngineId = async () => ((await (await get(`${engine.bootstrapUrl}/query`)).json()) as any)["0"]?.engine_id;

describe("restart", () => {
  test("a restart is a new process: new start time, new engine id, zeroed counters", async () => {
    await post(`${engine.url}/v1/completions`, { prompt: "x", max_tokens: 1 });
    const start1 = await scrape(engine, "process_start_time_seconds");
    const served1 = await scrape(engine, "vllm:request_success_total");
    const id1 = engine.state.engineId;
    expect(await queryEngineId()).toBe(id1);
    expect(served1).toBe(1);

    await Bun.sleep(5); // start times must differ even on a fast machine
    await engine.restart();
    const start2 = await scrape(engine, "process_start_time_seconds");
    expect(start2).toBeGreaterThan(start1!);
    expect(engine.state.engineId).not.toBe(id1);
    expect(await queryEngineId()).toBe(engine.state.engineId);
    expect(await scrape(engine, "vllm:request_success_total")).toBe(0);
    expect(engine.url).toContain(`:${engine.port}`);
  });

  test("newEngineId: false keeps the engine id but still changes the start time", async () => {
    const id = engine.state.engineId;
    const start = engine.state.startedAt;
    await Bun.sleep(5);
    await engine.restart({ newEngineId: false });
    expect(engine.state.engineId).toBe(id);
    expect(engine.state.startedAt).toBeGreaterThan(start);
  });

  test("in-flight streams are cut by a restart", async () => {
    const res = await post(`${engine.url}/v1/completions`, { prompt: "x", max_tokens: 200, stream: true }, 5_000);
    const reader = res.body!.getReader();
    await reader.read(); // generation has started
    const rec = engine.received.at(-1)!;
    await engine.restart();
    const err = await (async () => {
      for (;;) {
        const { done } = await reader.read();
        if (done) return null;
      }
    })().catch((e) => e);
    expect(err).toBeInstanceOf(Error); // a reset, not a clean end of stream
    expect(rec.aborted).toBe(true);
    expect(rec.completed).toBe(false);
  });

  test("downtime with 503: the engine answers 503 until it is back", async () => {
    const back = engine.restart({ downtimeMs: 300 });
    expect((await get(`${engine.url}/health`)).status).toBe(503);
    expect((await post(`${engine.url}/v1/completions`, { prompt: "x" })).status).toBe(503);
    await back;
    expect((await get(`${engine.url}/health`)).status).toBe(200);
  });

  test("downtime with refuse: connections are refused, then the same port answers again", async () => {
    const back = engine.restart({ downtimeMs: 300, refuse: true });
    try {
      await waitFor(async () => (await get(`${engine.url}/health`).catch((e) => e)) instanceof Error, 2_000, "connection refused");
      const err = await get(`${engine.url}/health`).catch((e) => e);
      expect(err.code).toBe("ECONNREFUSED");
    } finally {
      await back;
    }
    expect((await get(`${engine.url}/health`)).status).toBe(200);
    expect(await queryEngineId()).toBe(engine.state.engineId);
  });

  test("over HTTP: POST /_mock/restart answers with the new identity", async () => {
    const id = engine.state.engineId;
    const r = await post(`${engine.url}/_mock/restart`, {});
    const body = (await r.json()) as { engineId: string; startedAt: number };
    expect(body.engineId).not.toBe(id);
    expect(body.engineId).toBe(engine.state.engineId);
    expect((await get(`${engine.url}/health`)).status).toBe(200);

    const r2 = await post(`${engine.url}/_mock/restart`, { downtimeMs: 400, refuse: true, newEngineId: false });
    expect(((await r2.json()) as { engineId: string }).engineId).toBe(body.engineId);
    await waitFor(async () => (await get(`${engine.url}/health`).catch((e) => e)) instanceof Error, 2_000, "down");
    await waitFor(async () => (await get(`${engine.url}/health`).catch(() => null))?.status === 200, 3_000, "back up");
  });
});
