import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startMockEngine, type MockEngine } from "../src/index.ts";
import { client, get, post } from "./helpers.ts";

let engine: MockEngine;
let ai: OpenAI;

beforeAll(async () => {
  engine = await startMockEngine({ models: ["base-a", "base-b"], loras: [{ id: "sql-lora", parent: "base-a" }] });
  ai = client(engine);
});
afterAll(() => engine.stop());

describe("OpenAI API through the official client", () => {
  test("lists base models and LoRA adapters with their parent", async () => {
    const list = await ai.models.list();
    const byId = Object.fromEntries(list.data.map((m) => [m.id, m as unknown as Record<string, unknown>]));
    expect(Object.keys(byId)).toEqual(["base-a", "base-b", "sql-lora"]);
    expect(byId["base-a"]).toMatchObject({ object: "model", owned_by: "vllm", root: "base-a", parent: null, max_model_len: 4096 });
    expect(byId["sql-lora"]).toMatchObject({ parent: "base-a" });
  });

  test("chat completion: deterministic tokens up to max_tokens", async () => {
    const r = await ai.chat.completions.create({ model: "base-a", messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
    expect(r.object).toBe("chat.completion");
    expect(r.model).toBe("base-a");
    expect(r.id).toStartWith("chatcmpl-");
    expect(r.choices[0].message).toMatchObject({ role: "assistant", content: "tok0 tok1 tok2 tok3" });
    expect(r.choices[0].finish_reason).toBe("length");
    expect(r.usage).toMatchObject({ completion_tokens: 4 });
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + 4);
  });

  test("max_completion_tokens wins; no limit → defaultMaxTokens and finish_reason stop", async () => {
    const a = await ai.chat.completions.create({ model: "base-a", messages: [{ role: "user", content: "x" }], max_completion_tokens: 2 });
    expect(a.choices[0].message.content).toBe("tok0 tok1");
    const b = await ai.chat.completions.create({ model: "base-a", messages: [{ role: "user", content: "x" }] });
    expect(b.usage?.completion_tokens).toBe(16);
    expect(b.choices[0].finish_reason).toBe("stop");
  });

  test("chat stream: role delta, token deltas, usage frame, [DONE]", async () => {
    const stream = await ai.chat.completions.create({
      model: "sql-lora",
      messages: [{ role: "user", content: "hello" }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("tok0 tok1 tok2");
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe("length");
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 3 });
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "sql-lora")).toBe(true);
  });

  test("stream without include_usage has no usage frame", async () => {
    const stream = await ai.chat.completions.create({ model: "base-a", messages: [{ role: "user", content: "x" }], max_tokens: 2, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.length).toBe(3);
  });

  test("completions, plain and streamed, with n choices", async () => {
    const r = await ai.completions.create({ model: "base-b", prompt: "once upon a time", max_tokens: 3, n: 2 });
    expect(r.object).toBe("text_completion");
    expect(r.choices.map((c) => [c.index, c.text])).toEqual([
      [0, "tok0 tok1 tok2"],
      [1, "tok0 tok1 tok2"],
    ]);
    expect(r.usage?.completion_tokens).toBe(6);

    const s = await ai.completions.create({ model: "base-b", prompt: [1, 2, 3, 4], max_tokens: 5, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage;
    for await (const c of s) {
      text += c.choices[0]?.text ?? "";
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe("tok0 tok1 tok2 tok3 tok4");
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5 });
  });

  test("embeddings: deterministic unit vectors, base64 (the client's default) and float", async () => {
    const a = await ai.embeddings.create({ model: "base-a", input: ["alpha", "beta"] });
    expect(engine.received.at(-1)!.body.encoding_format).toBe("base64");
    const b = await ai.embeddings.create({ model: "base-a", input: "alpha", encoding_format: "float" });
    expect(a.data.length).toBe(2);
    expect(a.data[0].embedding.length).toBe(32);
    expect(a.data[0].embedding).toEqual(b.data[0].embedding);
    expect(a.data[0].embedding).not.toEqual(a.data[1].embedding);
    const norm = Math.hypot(...a.data[1].embedding);
    expect(norm).toBeCloseTo(1, 4);
    const d = await ai.embeddings.create({ model: "base-a", input: "alpha", dimensions: 8 });
    expect(d.data[0].embedding.length).toBe(8);
  });

  test("unknown model → 404 in vLLM's error shape", async () => {
    const err = await ai.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.status).toBe(404);
    const raw = await post(`${engine.url}/v1/completions`, { model: "nope", prompt: "x" });
    expect(await raw.json()).toEqual({ error: { message: "The model `nope` does not exist.", type: "NotFoundError", param: "model", code: 404 } });
  });

  test("bad JSON and invalid fields → 400", async () => {
    expect((await post(`${engine.url}/v1/chat/completions`, "{not json")).status).toBe(400);
    expect((await post(`${engine.url}/v1/chat/completions`, { model: "base-a", messages: [] })).status).toBe(400);
    expect((await post(`${engine.url}/v1/completions`, { model: "base-a", prompt: "x", max_tokens: 0 })).status).toBe(400);
    expect((await post(`${engine.url}/v1/completions`, { model: "base-a", prompt: "x", max_tokens: 5000 })).status).toBe(400);
    expect((await post(`${engine.url}/v1/embeddings`, "[")).status).toBe(400);
  });

  test("records every inference request with its body and headers", async () => {
    engine.clearReceived();
    await post(`${engine.url}/v1/completions`, { model: "base-a", prompt: "rec", max_tokens: 1, kv_transfer_params: { do_remote_decode: true } });
    await get(`${engine.url}/v1/completions`, {
      method: "POST",
      headers: { "x-request-id": "req-42", "x-data-parallel-rank": "1" },
      body: JSON.stringify({ model: "base-a", prompt: "rec", bootstrap_host: "10.0.0.1", bootstrap_port: 8998, bootstrap_room: 7 }),
    });
    await post(`${engine.url}/v1/completions`, "{bad");
    const [a, b, c] = engine.received;
    expect(a).toMatchObject({ path: "/v1/completions", status: 200, completed: true, aborted: false, kv_transfer_params: { do_remote_decode: true } });
    expect(a.body.prompt).toBe("rec");
    expect(b).toMatchObject({ id: "req-42", dpRank: 1, bootstrap: { host: "10.0.0.1", port: 8998, room: 7 } });
    expect(b.headers["x-request-id"]).toBe("req-42");
    expect(c).toMatchObject({ status: 400, completed: false, body: undefined });
    const over = await (await get(`${engine.url}/_mock/received`)).json();
    expect(over.requests.map((r: { id: string }) => r.id)).toEqual([a.id, "req-42", c.id]);
    await get(`${engine.url}/_mock/received`, { method: "DELETE" });
    expect(engine.received.length).toBe(0);
  });

  test("vLLM uses X-Request-Id for the response id", async () => {
    const r = await ai.chat.completions.create(
      { model: "base-a", messages: [{ role: "user", content: "x" }], max_tokens: 1 },
      { headers: { "X-Request-Id": "abc123" } },
    );
    expect(r.id).toBe("chatcmpl-abc123");
  });

  test("SGLang info endpoints and sleep mode", async () => {
    expect(await (await get(`${engine.url}/get_model_info`)).json()).toMatchObject({ model_path: "base-a", is_generation: true });
    expect(await (await get(`${engine.url}/get_server_info`)).json()).toMatchObject({ dp_size: 1, served_model_name: "base-a" });
    expect(await (await get(`${engine.url}/is_sleeping`)).json()).toEqual({ is_sleeping: false });
    expect((await get(`${engine.url}/sleep`, { method: "POST" })).status).toBe(200);
    expect(await (await get(`${engine.url}/is_sleeping`)).json()).toEqual({ is_sleeping: true });
    expect((await post(`${engine.url}/v1/completions`, { prompt: "x" })).status).toBe(503);
    expect((await get(`${engine.url}/health`)).status).toBe(200); // a sleeping vLLM is still healthy
    expect((await get(`${engine.url}/wake_up`, { method: "POST" })).status).toBe(200);
    expect((await post(`${engine.url}/v1/completions`, { prompt: "x" })).status).toBe(200);
  });

  test("unknown paths → 404", async () => {
    expect((await get(`${engine.url}/nope`)).status).toBe(404);
  });
});
