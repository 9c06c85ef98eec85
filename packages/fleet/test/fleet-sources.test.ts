import { afterEach, describe, expect, test } from "bun:test";
import { sendParent, setup } from "xstate";
import { startMockEngine, type MockEngine } from "@switchboard/mock-engine";
import { defaultHealthConfig } from "@switchboard/workers";
import { Fleet } from "../src";

const engines: MockEngine[] = [];
let fleet: Fleet | undefined;
afterEach(async () => {
  fleet?.stop();
  await Promise.all(engines.splice(0).map((e) => e.stop()));
});

async function waitFor(cond: () => boolean, ms = 5000) {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error("timed out");
    await Bun.sleep(10);
  }
}

let starts = 0;
/** A source that announces one worker, then throws on its first event. */
const crashingSource = setup({ types: { input: {} as { url: string } } }).createMachine({
  context: ({ input }) => input,
  entry: [
    () => starts++,
    sendParent(({ context }) => ({
      type: "source.desired",
      source: "crashy",
      workers: [{ url: context.url, connectionMode: "http", workerType: "regular", labels: {}, priority: 0, source: "crashy", sourceKey: context.url }],
    })),
  ],
  on: {
    boom: {
      actions: () => {
        throw new Error("surprising object");
      },
    },
  },
});

describe("the fleet and its discovery sources", () => {
  test("a source that throws does not take the fleet down: it is marked, restarted, and others carry on", async () => {
    const a = await startMockEngine({ models: ["m"] });
    const b = await startMockEngine({ models: ["m"] });
    engines.push(a, b);
    const health = { ...defaultHealthConfig, intervalMs: 200, fastIntervalMs: 20, timeoutMs: 500 };
    fleet = new Fleet({ health, sources: [{ id: "crashy", logic: crashingSource, input: { url: a.url } }] }).start();
    await waitFor(() => fleet!.index.readyCount() === 1);
    starts = 1;
    (fleet.actor.getSnapshot().children as Record<string, { send: (e: unknown) => void }>).crashy!.send({ type: "boom" });
    expect(fleet.actor.getSnapshot().status).toBe("active");
    const status = fleet.sources().find((s) => s.source === "crashy")!;
    expect(status.connected).toBe(false);
    expect(status.lastError).toContain("surprising object");
    // The admin source (and so the gateway's API) still works.
    fleet.register({ url: b.url, connectionMode: "http", workerType: "regular", labels: {}, priority: 0 });
    await waitFor(() => fleet!.index.readyCount() === 2);
    await waitFor(() => starts === 2, 3000);
    expect(fleet.actor.getSnapshot().status).toBe("active");
    expect([...fleet.index.views.values()].filter((v) => v.url === a.url).length).toBe(1);
  });
});
