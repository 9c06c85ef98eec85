/** The indexed scheduler: stopping an actor cancels its own delayed events without scanning everyone's. */
import { afterEach, describe, expect, test } from "bun:test";
import { createActor, createMachine, enqueueActions, setup, type AnyActorRef } from "xstate";
import { indexScheduler } from "../src";
import { waitFor } from "./helpers";

const waiter = createMachine({ id: "waiter", initial: "waiting", states: { waiting: { after: { 400: "done" } }, done: {} } });

/** A parent with `n` children, each waiting on its own delayed event. */
const parent = setup({ actors: { waiter } }).createMachine({
  id: "parent",
  entry: enqueueActions(({ enqueue }) => {
    for (let i = 0; i < 20; i++) enqueue.spawnChild("waiter", { id: `c${i}` });
  }),
  on: { stopOne: { actions: enqueueActions(({ enqueue, event }) => enqueue.stopChild((event as unknown as { id: string }).id)) } },
});

const roots: AnyActorRef[] = [];
afterEach(() => roots.splice(0).forEach((r) => r.stop()));

/** Whether the system still holds a delayed event of `actor` (a cancelled one is gone at once). */
function holdsEventOf(root: AnyActorRef, actor: AnyActorRef): boolean {
  const table = (root.system as unknown as { _snapshot: { _scheduledEvents: Record<string, unknown> } })._snapshot._scheduledEvents;
  return Object.keys(table).some((k) => k.startsWith(`${actor.sessionId}.`));
}

function children(root: AnyActorRef): Record<string, AnyActorRef> {
  return root.getSnapshot().children as Record<string, AnyActorRef>;
}

/** Counts whole-table scans of the system's delayed events (xstate's cancelAll is a for…in over it). */
function countScans(root: AnyActorRef): () => number {
  const sys = root.system as unknown as { _snapshot: { _scheduledEvents: Record<string, unknown> } };
  let scans = 0;
  sys._snapshot._scheduledEvents = new Proxy(sys._snapshot._scheduledEvents, {
    ownKeys(t) {
      scans++;
      return Reflect.ownKeys(t);
    },
  });
  return () => scans;
}

describe("indexed scheduler", () => {
  test("a stopped actor's delayed event never fires; everyone else's still does", async () => {
    const root = createActor(parent).start();
    roots.push(root);
    indexScheduler(root.system);
    const kept = children(root)["c1"]!;
    const stopped = children(root)["c0"]!;
    expect(holdsEventOf(root, stopped)).toBe(true);
    root.send({ type: "stopOne", id: "c0" } as never);
    expect(holdsEventOf(root, stopped)).toBe(false);
    expect(holdsEventOf(root, kept)).toBe(true);
    // Timers fire one by one: wait for all of the others, not just one of them.
    await waitFor(() => Object.values(children(root)).every((c) => c.getSnapshot().value === "done"), 3000, "the others fire");
    expect(kept.getSnapshot().value).toBe("done");
    expect(stopped.getSnapshot().status).toBe("stopped");
    expect(stopped.getSnapshot().value).toBe("waiting");
  });

  test("events scheduled before the index existed are still cancelled", async () => {
    const root = createActor(parent).start(); // all 20 delays are scheduled now
    roots.push(root);
    indexScheduler(root.system);
    indexScheduler(root.system); // idempotent
    const stopped = children(root)["c5"]!;
    root.send({ type: "stopOne", id: "c5" } as never);
    expect(holdsEventOf(root, stopped)).toBe(false);
    await waitFor(() => children(root)["c6"]!.getSnapshot().value === "done", 3000, "the others fire");
    expect(stopped.getSnapshot().value).toBe("waiting");
  });

  test("stopping actors does not scan the whole table of delayed events", async () => {
    const root = createActor(parent).start();
    roots.push(root);
    indexScheduler(root.system);
    const scans = countScans(root);
    for (let i = 0; i < 10; i++) root.send({ type: "stopOne", id: `c${i}` } as never);
    expect(Object.keys(children(root)).length).toBe(10);
    expect(scans()).toBe(0);
  });
});
