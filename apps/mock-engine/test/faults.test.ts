import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startMockEngine, type MockEngine } from "../src/index.ts";
import { client, get, post, waitFor } from "./helpers.ts";

let engine: MockEngine;
let ai: OpenAI;

beforeAll(async () => {
  engine = await startMockEngine({ bootstrapPort: 0, kvConnector: "MooncakeConnector", role: "prefill" });
  ai = client(engine);
});
afterAll(() => engine.stop());

const chat = (signal?: AbortSignal) =>
  fetch(`${engine.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ messages: [{ role: "user", content: "x" }], max_tokens: 2 }),
    signal: signal ?? AbortSignal.timeout(2_000),
  });

describe("faults", () => {
  test("unhealthy: /health 503 until cleared", async () => {
    expect((await get(`${engine.url}/health`)).status).toBe(200);
    engine.setFault({ unhealthy: true });
    expect((await get(`${engine.url}/health`)).status).toBe(503);
    engine.clearFaults();
    expect((await get(`${engine.url}/health`)).status).toBe(200);
  });

  test("hangHealth: /health never answers (the caller's deadline fires)", async () => {
    engine.setFault({ hangHealth: true });
    const err = await get(`${engine.url}/health`, {}, 200).catch((e) => e);
    expect(err?.name).toBe("TimeoutError");
    engine.clearFaults();
    expect((await get(`${engine.url}/health`)).status).toBe(200);
  });

  test("hangRequests: inference never answers; the client's abort counts as a cancel", async () => {
    engine.setFault({ hangRequests: true });
    const before = engine.cancelled;
    const err = await chat(AbortSignal.timeout(200)).catch((e) => e);
    expect(err?.name).toBe("TimeoutError");
    await waitFor(() => engine.cancelled === before + 1, 2_000, "cancel seen");
    expect(engine.received.at(-1)!.aborted).toBe(true);
    engine.clearFaults();
  });

  test("errorStatus: inference answers that status (the client sees it)", async () => {
    engine.setFault({ errorStatus: 503 });
    const err = await ai.chat.completions.create({ model: "mock-model", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(503);
    engine.setFault({ errorStatus: 500 });
    expect((await chat()).status).toBe(500);
    engine.clearFaults();
    expect((await chat()).status).toBe(200);
  });

  test("dropConnections: the client sees a reset connection, not a response", async () => {
    engine.setFault({ dropConnections: true });
    const err = await chat().catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe("ECONNRESET");
    const emb = await post(`${engine.url}/v1/embeddings`, { input: "x" }).catch((e) => e);
    expect(emb.code).toBe("ECONNRESET");
    engine.clearFaults();
    expect((await chat()).status).toBe(200);
  });

  test("modelsFail / hangModels / metricsFail", async () => {
    engine.setFault({ modelsFail: true });
    expect((await get(`${engine.url}/v1/models`)).status).toBe(500);
    engine.setFault({ modelsFail: false, hangModels: true });
    expect((await get(`${engine.url}/v1/models`, {}, 150).catch((e) => e))?.name).toBe("TimeoutError");
    engine.setFault({ hangModels: false, metricsFail: true });
    expect((await get(`${engine.url}/metrics`)).status).toBe(500);
    engine.clearFaults();
    expect((await get(`${engine.url}/v1/models`)).status).toBe(200);
    expect((await get(`${engine.url}/metrics`)).status).toBe(200);
  });

  test("bootstrap faults: hang, no engine id, partial answer", async () => {
    const q = () => get(`${engine.bootstrapUrl}/query`, {}, 300);
    expect(await (await q()).json()).toEqual({ "0": { engine_id: engine.state.engineId, worker_addr: { "0": { "0": expect.any(String) } } } });
    engine.setFault({ hangBootstrap: true });
    expect((await q().catch((e) => e))?.name).toBe("TimeoutError");
    engine.setFault({ hangBootstrap: false, bootstrapNoEngineId: true });
    expect(await (await q()).json()).toEqual({});
    engine.setFault({ bootstrapNoEngineId: false, partialBootstrap: true });
    const partial = await (await q()).json();
    expect(partial["0"].engine_id).toBeUndefined();
    expect(partial["0"].worker_addr).toBeDefined();
    engine.clearFaults();
  });

  test("faults over HTTP: POST/GET/DELETE /_mock/faults, unknown keys rejected", async () => {
    const set = await post(`${engine.url}/_mock/faults`, { unhealthy: true, errorStatus: 502 });
    expect(await set.json()).toMatchObject({ unhealthy: true, errorStatus: 502 });
    expect((await get(`${engine.url}/health`)).status).toBe(503);
    expect((await chat()).status).toBe(502);
    expect((await post(`${engine.url}/_mock/faults`, { bogus: true })).status).toBe(400);
    expect((await post(`${engine.url}/_mock/faults`, { unhealthy: "yes" })).status).toBe(400);
    const st = (await (await get(`${engine.url}/_mock/state`)).json()) as any;
    expect(st).toMatchObject({ engineId: engine.state.engineId, faults: { unhealthy: true } });
    expect(st.counters.received).toBeGreaterThan(0);
    await get(`${engine.url}/_mock/faults`, { method: "DELETE" });
    expect(engine.state.faults).toMatchObject({ unhealthy: false, errorStatus: 0 });
    expect((await get(`${engine.url}/health`)).status).toBe(200);
  });

  test("models over HTTP: POST /_mock/models changes what is served", async () => {
    const r = await post(`${engine.url}/_mock/models`, { models: ["m2"], loras: [{ id: "l2", parent: "m2" }] });
    expect(r.status).toBe(200);
    const ids = (await ai.models.list()).data.map((m) => m.id);
    expect(ids).toEqual(["m2", "l2"]);
    expect((await post(`${engine.url}/v1/completions`, { model: "mock-model", prompt: "x" })).status).toBe(404);
    expect((await post(`${engine.url}/v1/completions`, { model: "l2", prompt: "x" })).status).toBe(200);
    engine.setModels(["mock-model"], []);
  });
});

describe("start late", () => {
  let late: MockEngine;
  afterAll(() => late?.stop());

  test("listens at once but answers 503 until the start delay has passed", async () => {
    late = await startMockEngine({ startDelayMs: 300 });
    expect((await get(`${late.url}/health`)).status).toBe(503);
    expect((await get(`${late.url}/v1/models`)).status).toBe(503);
    expect((await post(`${late.url}/v1/completions`, { prompt: "x" })).status).toBe(503);
    await waitFor(async () => (await get(`${late.url}/health`)).status === 200, 3_000, "engine started");
    expect((await post(`${late.url}/v1/completions`, { prompt: "x" })).status).toBe(200);
  });
});
