import { afterAll, describe, expect, test } from "bun:test";
import { Harness, post, testConfig, waitFor } from "./harness";

const h = new Harness();
afterAll(() => h.close());

describe("streaming", () => {
  test("a long quiet generation is not cut by an idle timeout (Bun's default is 10 s, Elysia's 30 s)", async () => {
    const e = await h.engine({ tokenDelayMs: 32_000 });
    const gw = h.gateway(testConfig(["--worker-urls", e.url]));
    await waitFor(() => gw.fleet.index.readyCount() === 1);
    const res = await post(`${gw.url}/v1/chat/completions`, { model: "mock-model", messages: [{ role: "user", content: "x" }], max_tokens: 1, stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("data: [DONE]");
  }, 45_000);

  test("frames arrive as the engine sends them, not buffered to the end", async () => {
    const e = await h.engine({ tokenDelayMs: 150 });
    const gw = h.gateway(testConfig(["--worker-urls", e.url]));
    await waitFor(() => gw.fleet.index.readyCount() === 1);
    const res = await post(`${gw.url}/v1/completions`, { model: "mock-model", prompt: "x", max_tokens: 6, stream: true });
    const reader = res.body!.getReader();
    const arrivals: number[] = [];
    const start = Date.now();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      arrivals.push(Date.now() - start);
    }
    // Six tokens 150 ms apart: the first frames arrive long before the last.
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect(arrivals[arrivals.length - 1]! - arrivals[0]!).toBeGreaterThan(400);
  });

  test("a hung health endpoint is a failed probe: the worker leaves rotation and comes back", async () => {
    const e = await h.engine();
    const gw = h.gateway(testConfig(["--worker-urls", e.url, "--health-check-timeout-secs", "0.2"]));
    await waitFor(() => gw.fleet.index.readyCount() === 1);
    e.setFault({ hangHealth: true });
    await waitFor(() => gw.fleet.index.readyCount() === 0, 5000, "not ready after hung probes");
    const view = [...gw.fleet.index.views.values()][0]!;
    expect(view.lastProbe?.detail).toMatch(/timed out/);
    e.clearFaults();
    await waitFor(() => gw.fleet.index.readyCount() === 1, 5000, "back");
  });
});
