import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startMockEngine, type MockEngine } from "../src/index.ts";
import { client, post, scrape, waitFor } from "./helpers.ts";

let engine: MockEngine;
let ai: OpenAI;

beforeAll(async () => {
  engine = await startMockEngine({ tokenDelayMs: 10 });
  ai = client(engine);
});
afterAll(() => engine.stop());

describe("cancellation", () => {
  test("a client that leaves mid-stream stops generation and is counted", async () => {
    const before = engine.cancelled;
    const ac = new AbortController();
    const stream = await ai.chat.completions.create(
      { model: "mock-model", messages: [{ role: "user", content: "long" }], max_tokens: 1000, stream: true },
      { signal: ac.signal },
    );
    let seen = 0;
    // The client ends its iteration quietly on abort; what matters is that the engine notices.
    await (async () => {
      for await (const _ of stream) if (++seen === 3) ac.abort();
    })().catch(() => {});
    expect(seen).toBe(3);
    await waitFor(() => engine.cancelled === before + 1, 3_000, "engine saw the cancel");
    const rec = engine.received.at(-1)!;
    expect(rec).toMatchObject({ aborted: true, completed: false });
    // Generation stopped: no tokens are produced after the cancel.
    const tokens = engine.state.counters.generationTokens;
    await Bun.sleep(60);
    expect(engine.state.counters.generationTokens).toBe(tokens);
    expect(tokens).toBeLessThan(100);
    expect(await scrape(engine, "vllm:num_requests_running")).toBe(0);
  });

  test("a client that leaves a slow non-streaming request is counted too", async () => {
    const before = engine.cancelled;
    const err = await post(`${engine.url}/v1/completions`, { prompt: "x", max_tokens: 500 }, 100).catch((e) => e);
    expect(err?.name).toBe("TimeoutError");
    await waitFor(() => engine.cancelled === before + 1, 3_000, "engine saw the cancel");
  });

  test("running count follows in-flight requests", async () => {
    const p = post(`${engine.url}/v1/completions`, { prompt: "x", max_tokens: 30 }, 5_000);
    await waitFor(async () => (await scrape(engine, "vllm:num_requests_running")) === 1, 2_000, "one running");
    expect((await p).status).toBe(200);
    expect(await scrape(engine, "vllm:num_requests_running")).toBe(0);
  });

  test("an operator abort ends the stream cleanly with finish_reason abort", async () => {
    const res = await fetch(`${engine.url}/v1/completions`, {
      method: "POST",
      headers: { "x-request-id": "to-abort" },
      body: JSON.stringify({ prompt: "x", max_tokens: 1000, stream: true }),
      signal: AbortSignal.timeout(5_000),
    });
    const reader = res.body!.getReader();
    await reader.read();
    expect(engine.abort(["to-abort", "unknown"])).toBe(1);
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('"finish_reason":"abort"');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(engine.received.at(-1)).toMatchObject({ id: "to-abort", aborted: true, completed: false });
  });
});
