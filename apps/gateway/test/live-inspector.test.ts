import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWebSocketReceiver, type StatelyInspectionEvent } from "@statelyai/inspect";
import type { MockEngine } from "@switchboard/mock-engine";
import type { RunningGateway } from "../src";
import { Harness, testConfig, waitFor } from "./harness";

const KEY = "inspect-key";
const h = new Harness();
let a: MockEngine;
let gw: RunningGateway;

beforeAll(async () => {
  a = await h.engine();
  gw = h.gateway(testConfig(["--worker-urls", a.url, "--inspector-port", "0", "--admin-api-key", KEY]));
  await waitFor(() => gw.fleet.index.readyCount() === 1, 5000, "the worker ready");
});
afterAll(() => h.close());

/** A Stately WebSocket receiver, as the xstate tooling connects; collects what it is sent. */
function receiver(url: string) {
  const events: StatelyInspectionEvent[] = [];
  createWebSocketReceiver({ server: url }).subscribe((e) => events.push(e));
  return events;
}

type Actor = Extract<StatelyInspectionEvent, { type: "@xstate.actor" }>;
type Snapshot = Extract<StatelyInspectionEvent, { type: "@xstate.snapshot" }>;

describe("--inspector-port: the Stately inspector protocol over a local WebSocket", () => {
  test("is off unless asked for", async () => {
    const local = new Harness();
    try {
      const g = local.gateway(testConfig([]));
      expect(g.live.inspector).toBeUndefined();
    } finally {
      await local.close();
    }
  });

  test("a viewer without the admin key is refused", async () => {
    const res = await fetch(gw.live.inspector!.url!.replace("ws:", "http:"), { headers: { upgrade: "websocket", connection: "upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" } });
    expect(res.status).toBe(401);
  });

  test("createWebSocketReceiver gets the live system, then a worker's transitions", async () => {
    const events = receiver(`${gw.live.inspector!.url}/?token=${KEY}`);
    // On connect: every live actor with its definition, the fleet root first.
    await waitFor(() => events.some((e) => e.type === "@xstate.actor" && e.name === "worker"), 5000, "the worker actor");
    const actors = events.filter((e): e is Actor => e.type === "@xstate.actor");
    expect(actors[0]!.name).toBe("fleet");
    const worker = actors.find((e) => e.name === "worker")!;
    expect(worker.parentId).toBe(actors[0]!.sessionId);
    expect(JSON.parse(worker.definition!).states).toHaveProperty("not_ready");
    expect(actors.map((e) => e.name)).toEqual(expect.arrayContaining(["adminDiscovery", "staticDiscovery"]));

    a.setFault({ unhealthy: true });
    try {
      await waitFor(
        () => events.some((e) => e.type === "@xstate.snapshot" && e.sessionId === worker.sessionId && JSON.stringify(((e as Snapshot).snapshot as { value?: unknown }).value).includes("not_ready")),
        5000,
        "the worker's snapshot in not_ready",
      );
      // The events that drove it are there too: the probe actor's result reaching the worker.
      expect(events.some((e) => e.type === "@xstate.event" && e.sessionId === worker.sessionId && (e.event as { type: string }).type === "xstate.done.actor.probe")).toBe(true);
    } finally {
      a.clearFaults();
    }
    expect(gw.live.inspector!.viewerCount).toBe(1);
  });
});
