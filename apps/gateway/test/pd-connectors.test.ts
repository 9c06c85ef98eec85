/** NIXL relay and SGLang bootstrap injection, end to end against mock prefill/decode engines. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { MockEngine } from "@switchboard/mock-engine";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";
import { chat, MODEL, pdFlags, ready, released, view } from "./pd-helpers";

const h = new Harness();
afterAll(() => h.close());

describe("NixlConnector: tag the prefill, relay what it answers to decode verbatim", () => {
  let p: MockEngine;
  let d: MockEngine;
  let gw: RunningGateway;
  let client: OpenAI;
  beforeAll(async () => {
    p = await h.engine({ role: "prefill", kvConnector: "NixlConnector", engineId: "nixl-prefill" });
    d = await h.engine({ role: "decode", kvConnector: "NixlConnector", tokenDelayMs: 1 });
    gw = h.gateway(testConfig(pdFlags([p], [d], ["--kv-connector", "NixlConnector"])));
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
    await ready(gw, [p.url, d.url]);
  });

  test("streamed chat: decode gets exactly the prefill's kv_transfer_params", async () => {
    const prompt = "tell me a story ".repeat(8);
    const stream = await client.chat.completions.create({ ...chat(prompt), max_tokens: 5, stream: true });
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
    expect(text.length).toBeGreaterThan(0);

    const pre = p.received.at(-1)!;
    const dec = d.received.at(-1)!;
    expect(pre.kv_transfer_params).toEqual({ do_remote_decode: true, do_remote_prefill: false });
    expect(pre.body).toMatchObject({ max_tokens: 1, stream: false, n: 1 });
    // What the prefill answered, re-derived from a fresh twin (the mock is deterministic) given the same leg.
    const twin = await h.engine({ role: "prefill", kvConnector: "NixlConnector", engineId: "nixl-prefill" });
    const answered = ((await (await post(`${twin.url}/v1/chat/completions`, pre.body)).json()) as any).kv_transfer_params;
    expect(answered.remote_block_ids.length).toBeGreaterThan(1);
    expect(dec.kv_transfer_params).toEqual(answered);
    expect(dec.body).toMatchObject({ max_tokens: 5, stream: true });
    expect(pre.id).toBe(dec.id);
    await released(gw);
  });

  test("the relay is per request: a second request relays the prefill's new blocks", async () => {
    await client.completions.create({ model: MODEL, prompt: "abc", max_tokens: 2 });
    const a = d.received.at(-1)!.kv_transfer_params!.remote_block_ids as number[];
    await client.completions.create({ model: MODEL, prompt: "abc", max_tokens: 2 });
    const b = d.received.at(-1)!.kv_transfer_params!.remote_block_ids as number[];
    expect(b[0]).toBeGreaterThan(a.at(-1)!);
  });
});

describe("SGLang: bootstrap fields injected, both legs at once, either failing fails the request", () => {
  let p: MockEngine;
  let d: MockEngine;
  let gw: RunningGateway;
  let client: OpenAI;
  beforeAll(async () => {
    p = await h.engine({ flavor: "sglang", role: "prefill" });
    d = await h.engine({ flavor: "sglang", role: "decode", tokenDelayMs: 1 });
    gw = h.gateway(testConfig(["--pd-disaggregation", "--prefill", p.url, "8999", "--decode", d.url, "--kv-connector", "sglang"]));
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
    await ready(gw, [p.url, d.url]);
  });

  test("both legs carry the same body with bootstrap_host/port/room; the client reads decode's stream", async () => {
    p.clearReceived();
    d.clearReceived();
    const stream = await client.chat.completions.create({ ...chat("sglang!"), max_tokens: 5, stream: true });
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
    expect(text.length).toBeGreaterThan(0);
    await waitFor(() => p.received.length === 1 && d.received.length === 1, 3000, "both legs received");
    const pre = p.received[0]!;
    const dec = d.received[0]!;
    expect(pre.bootstrap).toEqual({ host: "127.0.0.1", port: 8999, room: expect.any(Number) });
    expect(dec.bootstrap).toEqual(pre.bootstrap!);
    const room = pre.bootstrap!.room as number;
    expect(Number.isInteger(room) && room >= 0 && room <= 2 ** 63).toBe(true);
    expect(pre.body).toEqual(dec.body); // the same body to both
    expect(dec.body).toMatchObject({ max_tokens: 5, stream: true });
    expect(pre.kv_transfer_params).toBeUndefined();
    expect(pre.id).toBe(dec.id);
    await released(gw);
  });

  test("each request gets its own room", async () => {
    await client.completions.create({ model: MODEL, prompt: "a", max_tokens: 1 });
    await client.completions.create({ model: MODEL, prompt: "a", max_tokens: 1 });
    const rooms = d.received.slice(-2).map((r) => r.bootstrap!.room);
    expect(rooms[0]).not.toBe(rooms[1]);
  });

  test("decode fails while prefill hangs: OpenAI error, prefill leg aborted, counts released", async () => {
    const before = p.cancelled;
    p.setFault({ hangRequests: true });
    d.setFault({ errorStatus: 500 });
    try {
      const err = await client.chat.completions.create(chat()).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(502);
      expect(err.error).toMatchObject({ type: "upstream_error", code: "decode_failed" });
      await waitFor(() => p.cancelled > before, 3000, "prefill leg aborted");
      await released(gw);
    } finally {
      p.clearFaults();
      d.clearFaults();
    }
  });

  test("prefill fails while decode hangs: OpenAI error, decode leg aborted, counts released", async () => {
    const before = d.cancelled;
    d.setFault({ hangRequests: true });
    p.setFault({ errorStatus: 503 });
    try {
      const res = await post(`${gw.url}/v1/chat/completions`, chat());
      expect(res.status).toBe(502);
      expect(((await res.json()) as any).error).toMatchObject({ type: "upstream_error", code: "prefill_failed" });
      await waitFor(() => d.cancelled > before, 3000, "decode leg aborted");
      await released(gw);
    } finally {
      p.clearFaults();
      d.clearFaults();
    }
  });

  test("a prefill that drops the connection fails the request too", async () => {
    p.setFault({ dropConnections: true });
    try {
      const res = await post(`${gw.url}/v1/completions`, { model: MODEL, prompt: "x", max_tokens: 2 });
      expect(res.status).toBe(502);
      expect(((await res.json()) as any).error.code).toBe("prefill_failed");
      await released(gw);
    } finally {
      p.clearFaults();
    }
    // The worker left rotation on the connect failure (passive) and comes back through probes.
    await ready(gw, [p.url]);
    expect(view(gw, p.url).status).toBe("ready");
  });
});
