import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Harness, testConfig, waitFor } from "./harness";

const h = new Harness();
afterAll(() => h.close());

describe("a worker that was not serving when the router started is not starved", () => {
  test("routable within about 2 s of becoming healthy, even with a 60 s probe interval, under its real model", async () => {
    const early = await h.engine({ models: ["real-model"] });
    const late = await h.engine({ models: ["real-model"], startDelayMs: 4000 });
    // Production cadence: 60 s interval, 1 s fast cadence, thresholds 3/2.
    const gw = h.gateway(
      testConfig(["--worker-urls", early.url, late.url, "--health-check-interval-secs", "60", "--health-check-fast-interval-secs", "1", "--health-check-timeout-secs", "1"]),
    );
    await waitFor(() => gw.fleet.index.readyCount() === 1, 5000, "early worker ready");
    const lateView = [...gw.fleet.index.views.values()].find((v) => v.url === late.url)!;
    expect(lateView.status).toBe("pending");
    // No placeholder: a worker that has not told us its models has none, and serves nothing.
    expect(lateView.models).toEqual([]);

    const healthyAt = late.state.readyAt;
    await waitFor(() => lateView.status === "ready", 8000, "late worker ready");
    const delay = Date.now() - healthyAt;
    // Two successes on a 1 s cadence: ~1-2 s. Bounded loosely for a noisy machine, far below the 60 s interval.
    expect(delay).toBeLessThan(4500);
    expect(lateView.models.map((m) => m.id)).toEqual(["real-model"]);

    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "x", maxRetries: 0 });
    for (let i = 0; i < 6; i++) await client.completions.create({ model: "real-model", prompt: "p", max_tokens: 1 });
    expect(late.state.counters.served).toBeGreaterThanOrEqual(3);
  }, 20_000);
});
