import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Harness, testConfig, waitFor } from "./harness";

const h = new Harness();
let client: OpenAI;
let gwUrl: string;

beforeAll(async () => {
  const a = await h.engine({ tokenDelayMs: 2 });
  const b = await h.engine({ tokenDelayMs: 2 });
  const gw = h.gateway(testConfig(["--worker-urls", a.url, b.url]));
  gwUrl = gw.url;
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
  await waitFor(() => gw.fleet.index.readyCount() === 2, 5000, "both workers ready");
});
afterAll(() => h.close());

describe("the gateway through the official openai client", () => {
  test("chat completion, non-streaming", async () => {
    const r = await client.chat.completions.create({ model: "mock-model", messages: [{ role: "user", content: "hello" }], max_tokens: 5 });
    expect(r.choices[0]!.message.content).toBeTruthy();
    expect(r.model).toBe("mock-model");
  });

  test("chat completion, streaming, in order and complete", async () => {
    const stream = await client.chat.completions.create({ model: "mock-model", messages: [{ role: "user", content: "hello" }], max_tokens: 8, stream: true });
    let text = "";
    let chunks = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      chunks++;
    }
    expect(chunks).toBeGreaterThanOrEqual(8);
    expect(text.length).toBeGreaterThan(0);
  });

  test("completions and embeddings", async () => {
    const c = await client.completions.create({ model: "mock-model", prompt: "once upon", max_tokens: 3 });
    expect(c.choices[0]!.text.length).toBeGreaterThan(0);
    const e = await client.embeddings.create({ model: "mock-model", input: ["a", "b"] });
    expect(e.data.length).toBe(2);
  });

  test("models lists the Ready workers' models", async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toContain("mock-model");
  });

  test("breaking out of a stream reaches the engine as a cancel, and the in-flight count is released", async () => {
    const before = h.engines.reduce((n, e) => n + e.cancelled, 0);
    const stream = await client.chat.completions.create({ model: "mock-model", messages: [{ role: "user", content: "long" }], max_tokens: 2000, stream: true });
    let n = 0;
    for await (const _ of stream) if (++n >= 3) break;
    await waitFor(() => h.engines.reduce((x, e) => x + e.cancelled, 0) > before, 5000, "engine saw the cancel");
    const gw = h.gateways[0]!;
    await waitFor(() => [...gw.fleet.index.views.values()].every((v) => v.inFlight === 0), 5000, "in-flight released");
  });

  test("requests are spread over both workers (round robin)", async () => {
    for (let i = 0; i < 6; i++) await client.completions.create({ model: "mock-model", prompt: "x", max_tokens: 1 });
    const counts = h.engines.map((e) => e.state.counters.served);
    expect(counts.every((c) => c >= 3)).toBe(true);
  });

  test("an unknown model is a 404 in OpenAI form", async () => {
    const err = await client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.error).toMatchObject({ type: "not_found_error", code: "model_not_found" });
    expect(gwUrl).toBeTruthy();
  });
});

describe("metrics", () => {
  test("Prometheus text: requests by model/worker/status, latency and TTFT histograms, worker status, transitions", async () => {
    const text = await (await fetch(`${gwUrl}/metrics`)).text();
    expect(text).toMatch(/switchboard_requests_total\{route="\/v1\/chat\/completions",model="mock-model",worker="w-[^"]+",status="200"\} \d+/);
    expect(text).toContain("switchboard_request_duration_seconds_bucket");
    expect(text).toMatch(/switchboard_time_to_first_token_seconds_count\{[^}]*\} [1-9]/);
    expect(text).toMatch(/switchboard_worker_status\{worker="w-[^"]+",url="http:\/\/127\.0\.0\.1:\d+",status="ready"\} 1/);
    expect(text).toMatch(/switchboard_worker_transitions_total\{from="pending",to="ready"\} 2/);
    expect(text).toContain("switchboard_retries_total");
    expect(text).toContain('switchboard_workers{status="ready"} 2');
  });
});
