import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Harness, post, testConfig, waitFor } from "./harness";

let h: Harness;
afterEach(() => h.close());
const chat = { model: "mock-model", messages: [{ role: "user" as const, content: "hi" }], max_tokens: 2 };

describe("upstream failures", () => {
  test("an engine killed under load: non-streaming requests still succeed through retries", async () => {
    h = new Harness();
    const engines = [await h.engine(), await h.engine(), await h.engine()];
    const gw = h.gateway(testConfig(["--worker-urls", ...engines.map((e) => e.url), "--health-check-interval-secs", "30"]));
    await waitFor(() => gw.fleet.index.readyCount() === 3, 5000, "3 ready");
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "x", maxRetries: 0 });
    const victim = engines[1]!;
    const results: string[] = [];
    let killed = false;
    const workers = Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 25; i++) {
        if (!killed && results.length >= 40) {
          killed = true;
          await victim.stop(); // the socket closes: in-flight and later connects fail
        }
        try {
          const r = await client.chat.completions.create(chat);
          results.push(r.choices[0]!.finish_reason ?? "ok");
        } catch (e) {
          results.push(`error: ${(e as Error).message}`);
        }
      }
    });
    await Promise.all(workers);
    expect(killed).toBe(true);
    expect(results.filter((r) => r.startsWith("error"))).toEqual([]);
    expect(results.length).toBe(200);
    // Passive health took the dead worker out at once (probes are 30 s apart here).
    const dead = [...gw.fleet.index.views.values()].find((v) => v.url === victim.url)!;
    expect(dead.status).not.toBe("ready");
    expect([...gw.fleet.index.views.values()].every((v) => v.inFlight === 0)).toBe(true);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_retries_total\{[^}]*reason="connect"[^}]*\} [1-9]/);
  });

  test("a 503 from an engine before any byte is retried on another worker", async () => {
    h = new Harness();
    const bad = await h.engine();
    const good = await h.engine();
    const gw = h.gateway(testConfig(["--worker-urls", bad.url, good.url]));
    await waitFor(() => gw.fleet.index.readyCount() === 2);
    bad.setFault({ errorStatus: 503 });
    for (let i = 0; i < 6; i++) expect((await post(`${gw.url}/v1/chat/completions`, chat)).status).toBe(200);
    expect(bad.state.counters.received).toBeGreaterThan(0);
    expect(good.state.counters.served).toBe(6);
  });

  test("retries are bounded: every worker failing gives a 502 in OpenAI form", async () => {
    h = new Harness();
    const a = await h.engine();
    const gw = h.gateway(testConfig(["--worker-urls", a.url, "--max-retries", "2"]));
    await waitFor(() => gw.fleet.index.readyCount() === 1);
    a.setFault({ errorStatus: 502 });
    const res = await post(`${gw.url}/v1/chat/completions`, chat);
    // The last attempt's answer is passed through as it came: the engine's own 502.
    expect(res.status).toBe(502);
    expect(a.state.counters.received).toBe(3);
  });

  test("a connection reset on every worker ends in 502 with a reason", async () => {
    h = new Harness();
    const a = await h.engine();
    const gw = h.gateway(testConfig(["--worker-urls", a.url, "--max-retries", "1"]));
    await waitFor(() => gw.fleet.index.readyCount() === 1);
    a.setFault({ dropConnections: true });
    const res = await post(`${gw.url}/v1/chat/completions`, chat);
    expect([502, 503]).toContain(res.status);
    const body = (await res.json()) as { error: { type: string } };
    expect(body.error.type).toMatch(/upstream_error|service_unavailable/);
    expect([...gw.fleet.index.views.values()].every((v) => v.inFlight === 0)).toBe(true);
  });

  test("an engine that hangs is cut at the request timeout with a 504, and its count released", async () => {
    h = new Harness();
    const a = await h.engine();
    const gw = h.gateway(testConfig(["--worker-urls", a.url, "--request-timeout-secs", "0.5"]));
    await waitFor(() => gw.fleet.index.readyCount() === 1);
    a.setFault({ hangRequests: true });
    const res = await post(`${gw.url}/v1/chat/completions`, chat);
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
    expect(gw.fleet.index.views.values().next().value!.inFlight).toBe(0);
  });

  test("nothing is retried after the first byte: a stream cut mid-way ends for the client, once", async () => {
    h = new Harness();
    const a = await h.engine({ tokenDelayMs: 20 });
    const b = await h.engine({ tokenDelayMs: 20 });
    const gw = h.gateway(testConfig(["--worker-urls", a.url, b.url]));
    await waitFor(() => gw.fleet.index.readyCount() === 2);
    const res = await post(`${gw.url}/v1/chat/completions`, { ...chat, max_tokens: 200, stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    const serving = res.headers.get("x-switchboard-worker")!;
    const engine = gw.fleet.index.get(serving)!.url === a.url ? a : b;
    await engine.stop(); // the engine dies mid-stream
    let failed = false;
    try {
      while (!(await reader.read()).done);
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    // The other engine never saw the request: nothing was retried once bytes had gone out.
    const other = engine === a ? b : a;
    expect(other.received.length).toBe(0);
    await waitFor(() => [...gw.fleet.index.views.values()].every((v) => v.inFlight === 0), 3000, "released");
  });
});
