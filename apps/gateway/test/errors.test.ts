import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";

const h = new Harness();
let gw: RunningGateway;
const chat = (over: Record<string, unknown> = {}) => ({ model: "mock-model", messages: [{ role: "user", content: "hi" }], ...over });

async function expectOpenAIError(res: Response, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { error: { message: string; type: string; code: string } };
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(typeof body.error.type).toBe("string");
  expect(body.error).toHaveProperty("code");
  if (code) expect(body.error.code).toBe(code);
  return body.error;
}

beforeAll(async () => {
  const e = await h.engine();
  gw = h.gateway(testConfig(["--worker-urls", e.url, "--max-payload-size", "4096"]));
  await waitFor(() => gw.fleet.index.readyCount() === 1, 5000, "worker ready");
});
afterAll(() => h.close());

describe("bad input gets a clear OpenAI-style error and nothing is lost", () => {
  test("400 for invalid JSON", async () => {
    await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, "{not json"), 400, "invalid_json");
  });

  test("400 for a missing model", async () => {
    const e = await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, { messages: [{ role: "user", content: "x" }] }), 400);
    expect(e).toMatchObject({ param: "model" });
  });

  test("400 for wrong field types", async () => {
    await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, chat({ stream: "yes" })), 400);
    await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, chat({ messages: "hello" })), 400);
    await expectOpenAIError(await post(`${gw.url}/v1/completions`, { model: "mock-model", prompt: 42 }), 400);
    await expectOpenAIError(await post(`${gw.url}/v1/embeddings`, { model: "mock-model" }), 400);
    await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, "[1,2,3]"), 400);
  });

  test("404 for a model no worker has ever served", async () => {
    await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, chat({ model: "never-served" })), 404, "model_not_found");
  });

  test("413 for an oversized body", async () => {
    await expectOpenAIError(await post(`${gw.url}/v1/chat/completions`, chat({ messages: [{ role: "user", content: "x".repeat(10_000) }] })), 413);
  });

  test("404 for an unknown route, 404 for an unknown worker", async () => {
    await expectOpenAIError(await fetch(`${gw.url}/v1/nope`), 404);
    await expectOpenAIError(await fetch(`${gw.url}/workers/does-not-exist`), 404);
  });

  test("the admin API rejects bad registrations with 400", async () => {
    await expectOpenAIError(await post(`${gw.url}/workers`, {}), 400, "missing_required_parameter");
    await expectOpenAIError(await post(`${gw.url}/workers`, { url: "not a url" }), 400);
    await expectOpenAIError(await post(`${gw.url}/workers`, { url: "http://127.0.0.1:1", worker_type: "boss" }), 400);
    await expectOpenAIError(await post(`${gw.url}/workers`, { url: "http://127.0.0.1:1", labels: { a: 1 } }), 400);
    await expectOpenAIError(await post(`${gw.url}/workers`, "{"), 400);
    const id = [...gw.fleet.index.views.keys()][0]!;
    const res = await fetch(`${gw.url}/workers/${id}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "http://x" }) });
    await expectOpenAIError(res, 400);
  });

  test("after all that, the gateway still serves", async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, chat({ max_tokens: 2 }));
    expect(res.status).toBe(200);
    expect([...gw.fleet.index.views.values()].every((v) => v.inFlight === 0)).toBe(true);
  });

  test("503 with Retry-After for a known model with no Ready worker", async () => {
    h.engines[0]!.setFault({ unhealthy: true });
    await waitFor(() => gw.fleet.index.readyCount() === 0, 5000, "worker not ready");
    const res = await post(`${gw.url}/v1/chat/completions`, chat());
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    await expectOpenAIError(res, 503, "no_ready_worker");
    const ready = await fetch(`${gw.url}/readiness`);
    expect(ready.status).toBe(503);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    h.engines[0]!.clearFaults();
    await waitFor(() => gw.fleet.index.readyCount() === 1, 5000, "worker back");
    expect((await fetch(`${gw.url}/readiness`)).status).toBe(200);
  });
});
