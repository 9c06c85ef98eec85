/** PD dispatch with MooncakeConnector: the router mints both legs from the prefill's current engine id. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { MockEngine } from "@switchboard/mock-engine";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";
import { captureLog, chat, decodeParams, MODEL, metric, pdFlags, ready, released, view } from "./pd-helpers";

const h = new Harness();
let p: MockEngine; // prefill, one DP rank
let pdp: MockEngine; // prefill with two DP ranks, serving its own model
let d: MockEngine;
let gw: RunningGateway;
let client: OpenAI;
const log = captureLog();

beforeAll(async () => {
  p = await h.engine({ role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0, tokenDelayMs: 1 });
  pdp = await h.engine({ models: ["dp-model"], role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0, dataParallelSize: 2, engineId: "DP" });
  d = await h.engine({ models: [MODEL, "dp-model"], role: "decode", kvConnector: "MooncakeConnector", tokenDelayMs: 2 });
  gw = h.gateway(testConfig(pdFlags([p, pdp], [d])), { logger: log.logger });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
  await ready(gw, [p.url, pdp.url, d.url]);
  await waitFor(() => view(gw, p.url).engineId === p.state.engineId && view(gw, pdp.url).engineId === "DP", 5000, "engine ids read");
});
afterAll(() => h.close());

describe("PD with MooncakeConnector", () => {
  test("static --prefill/--decode workers carry their role, connector and bootstrap port", () => {
    expect(view(gw, p.url).spec).toMatchObject({ workerType: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: p.bootstrapPort });
    expect(view(gw, d.url).spec).toMatchObject({ workerType: "decode", kvConnector: "MooncakeConnector" });
    expect(view(gw, d.url).spec.bootstrapPort).toBeUndefined();
    // DP ranks' ids are E_dp<r> at the bootstrap; the worker keeps the base id.
    expect(view(gw, pdp.url).dataParallelSize).toBe(2);
  });

  test("streamed chat: prefill leg is one whole token, decode gets the minted params and streams to the client", async () => {
    p.clearReceived();
    d.clearReceived();
    const stream = await client.chat.completions.create({ ...chat("stream me"), max_tokens: 6, n: 1, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage = false;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? "";
      if (c.usage) usage = true;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage).toBe(true);

    expect(p.received).toHaveLength(1);
    expect(d.received).toHaveLength(1);
    const pre = p.received[0]!;
    const dec = d.received[0]!;
    expect(pre.body).toMatchObject({ max_tokens: 1, stream: false, n: 1 });
    expect(pre.body).not.toHaveProperty("stream_options");
    const xfer = pre.kv_transfer_params!.transfer_id as string;
    expect(xfer).toMatch(/^xfer-[0-9a-f-]{36}$/);
    expect(pre.kv_transfer_params).toEqual({ do_remote_decode: true, do_remote_prefill: false, transfer_id: xfer });
    expect(dec.kv_transfer_params).toEqual({
      do_remote_decode: false,
      do_remote_prefill: true,
      transfer_id: xfer,
      remote_engine_id: p.state.engineId,
      remote_bootstrap_addr: `http://127.0.0.1:${p.bootstrapPort}`,
    });
    expect(dec.kvPull).toEqual({ ok: true, reason: "engine id matches" });
    // The decode leg is the client's request as sent.
    expect(dec.body).toMatchObject({ max_tokens: 6, stream: true, stream_options: { include_usage: true } });
    // One request id on both legs.
    expect(pre.id).toBe(dec.id);
    expect(pre.headers["x-request-id"]).toBeTruthy();
    await released(gw);
  });

  test("non-streamed, with the client's request id and max_completion_tokens", async () => {
    p.clearReceived();
    d.clearReceived();
    const res = await post(`${gw.url}/v1/chat/completions`, chat("x", { max_completion_tokens: 7, min_tokens: 3 }), { "x-request-id": "req-42" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect(res.headers.get("x-switchboard-worker")).toBe(view(gw, d.url).id);
    expect(res.headers.get("x-switchboard-prefill-worker")).toBe(view(gw, p.url).id);
    expect(p.received[0]!.id).toBe("req-42");
    expect(d.received[0]!.id).toBe("req-42");
    expect(p.received[0]!.body).toMatchObject({ max_tokens: 1, max_completion_tokens: 1 });
    expect(p.received[0]!.body).not.toHaveProperty("min_tokens");
    expect(d.received[0]!.body).toMatchObject({ max_completion_tokens: 7, min_tokens: 3 });
    await released(gw);
  });

  test("completions endpoint through the official client", async () => {
    d.clearReceived();
    const c = await client.completions.create({ model: MODEL, prompt: "once upon", max_tokens: 3 });
    expect(c.choices[0]!.text.length).toBeGreaterThan(0);
    expect(d.received[0]!.kv_transfer_params?.remote_engine_id).toBe(p.state.engineId);
  });

  test("data parallel prefill: a pinned rank gets E_dp<r>; no pinned rank mints nothing (metric + warn) and decode recomputes", async () => {
    pdp.clearReceived();
    d.clearReceived();
    const pinned = await post(`${gw.url}/v1/completions`, { model: "dp-model", prompt: "hi", max_tokens: 2 }, { "x-data-parallel-rank": "1" });
    expect(pinned.status).toBe(200);
    await pinned.arrayBuffer();
    expect(d.received[0]!.kv_transfer_params).toMatchObject({ remote_engine_id: "DP_dp1" });
    expect(d.received[0]!.kvPull?.ok).toBe(true);
    expect(pdp.received[0]!.dpRank).toBe(1);
    expect(d.received[0]!.dpRank).toBeUndefined(); // the rank is the prefill's

    const before = await metric(gw, "switchboard_pd_unminted_total", { connector: "MooncakeConnector", reason: "dp_rank_not_pinned" });
    const warns = log.lines.length;
    const unpinned = await post(`${gw.url}/v1/completions`, { model: "dp-model", prompt: "hi", max_tokens: 2 });
    expect(unpinned.status).toBe(200);
    await unpinned.arrayBuffer();
    expect(d.received[1]!.kv_transfer_params).toBeUndefined();
    expect(pdp.received).toHaveLength(1); // no prefill leg for a transfer nobody can name
    expect(await metric(gw, "switchboard_pd_unminted_total", { connector: "MooncakeConnector", reason: "dp_rank_not_pinned" })).toBe(before + 1);
    const line = log.lines.slice(warns).find((l) => l.reason === "dp_rank_not_pinned");
    expect(line).toMatchObject({ level: 40, connector: "MooncakeConnector", prefill_url: pdp.url });
    await released(gw);
  });

  test("a prefill that fails fails the request cleanly (OpenAI error), decode is never asked", async () => {
    d.clearReceived();
    p.setFault({ errorStatus: 500 });
    try {
      const err = await client.chat.completions.create(chat()).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(502);
      expect(err.error).toMatchObject({ type: "upstream_error", code: "prefill_failed" });
      expect(d.received).toHaveLength(0);
      // A 4xx from the prefill stays the client's problem.
      p.setFault({ errorStatus: 400 });
      const bad = await post(`${gw.url}/v1/chat/completions`, chat());
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as any).error.code).toBe("prefill_rejected");
    } finally {
      p.clearFaults();
    }
    await released(gw);
  });

  test("client abort while the prefill runs: prefill cancelled, decode never sent, counts released", async () => {
    d.clearReceived();
    p.setFault({ hangRequests: true });
    try {
      const cancelledBefore = p.cancelled;
      const ac = new AbortController();
      const pending = client.chat.completions.create(chat(), { signal: ac.signal }).catch((e) => e);
      await waitFor(() => view(gw, p.url).inFlight === 1, 3000, "prefill leg in flight");
      ac.abort();
      expect(await pending).toBeInstanceOf(Error);
      await waitFor(() => p.cancelled > cancelledBefore, 3000, "prefill saw the cancel");
      await released(gw);
      expect(d.received).toHaveLength(0);
    } finally {
      p.clearFaults();
    }
  });

  test("client abort while decode streams: decode cancelled, counts released", async () => {
    const before = d.cancelled;
    const stream = await client.chat.completions.create({ ...chat("long one"), max_tokens: 2000, stream: true });
    let n = 0;
    for await (const _ of stream) if (++n >= 3) break;
    await waitFor(() => d.cancelled > before, 3000, "decode saw the cancel");
    await released(gw);
  });

  test("a model with only regular workers is not taken over; embeddings never are", async () => {
    const r = await h.engine({ models: ["regular-model"] });
    const id = gw.fleet.register({ url: r.url, connectionMode: "http", workerType: "regular", labels: {}, priority: 0 });
    await waitFor(() => gw.fleet.index.get(id)?.status === "ready", 5000, "regular worker ready");
    const res = await client.chat.completions.create({ ...chat(), model: "regular-model" });
    expect(res.choices[0]!.message.content).toBeTruthy();
    expect(r.received.at(-1)!.kv_transfer_params).toBeUndefined();
    const e = await client.embeddings.create({ model: "regular-model", input: "x" });
    expect(e.data).toHaveLength(1);
  });

  test("a decode with no Ready prefill: 503 naming the missing role", async () => {
    const lone = await h.engine({ models: ["lonely-model"], role: "decode" });
    const id = gw.fleet.register({ url: lone.url, connectionMode: "http", workerType: "decode", labels: {}, priority: 0 });
    await waitFor(() => gw.fleet.index.get(id)?.status === "ready", 5000, "decode ready");
    const res = await post(`${gw.url}/v1/chat/completions`, { ...chat(), model: "lonely-model" });
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.code).toBe("no_ready_prefill_worker");
  });
});
