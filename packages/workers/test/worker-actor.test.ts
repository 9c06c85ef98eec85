import { afterEach, describe, expect, test } from "bun:test";
import type { AnyActorRef } from "xstate";
import { isRoutable, statusOf } from "../src";
import { ScriptedEngine, startWorker, waitFor } from "./helpers";

const actors: AnyActorRef[] = [];
afterEach(() => actors.splice(0).forEach((a) => a.stop()));
function run(...args: Parameters<typeof startWorker>) {
  const a = startWorker(...args);
  actors.push(a);
  return a;
}

describe("worker actor over time", () => {
  test("pending → ready after success-threshold probes, with models learned from the engine", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine);
    expect(statusOf(w.getSnapshot())).toBe("pending");
    expect(isRoutable(w.getSnapshot())).toBe(false);
    await waitFor(() => statusOf(w.getSnapshot()) === "ready", 3000, "ready");
    expect(isRoutable(w.getSnapshot())).toBe(true);
    expect(w.getSnapshot().context.models.map((m) => m.id)).toEqual(["m"]);
    expect(w.getSnapshot().context.engineId).toBe("e1");
  });

  test("a healthy engine whose models cannot be read is never promoted", async () => {
    const engine = new ScriptedEngine();
    engine.models = "failed";
    const w = run(engine);
    await waitFor(() => engine.requests.length >= 6);
    expect(statusOf(w.getSnapshot())).toBe("pending");
    engine.models = [{ id: "late-model" }];
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    expect(w.getSnapshot().context.models[0]!.id).toBe("late-model");
  });

  test("a hung engine is a failed probe, never a stuck actor", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine, { config: { timeoutMs: 50 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    engine.hang = true;
    await waitFor(() => statusOf(w.getSnapshot()) === "not_ready", 3000, "not_ready");
    expect(w.getSnapshot().context.lastProbe?.detail).toContain("timed out");
    engine.hang = false;
    await waitFor(() => statusOf(w.getSnapshot()) === "ready", 3000, "ready again");
  });

  test("a probe that ignores its abort signal still cannot outlive the timeout", async () => {
    const engine = new ScriptedEngine();
    let hangForever = false;
    const inner = engine.probe;
    engine.probe = async (req) => (hangForever ? new Promise(() => {}) : inner(req));
    const w = run(engine, { config: { timeoutMs: 50 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    hangForever = true;
    await waitFor(() => statusOf(w.getSnapshot()) === "not_ready", 3000, "not_ready");
  });

  test("passive failure takes a ready worker out at once; probes bring it back", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine, { config: { intervalMs: 60_000 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    w.send({ type: "worker.passiveFailure", detail: "ECONNREFUSED" });
    expect(statusOf(w.getSnapshot())).toBe("not_ready");
    await waitFor(() => statusOf(w.getSnapshot()) === "ready", 3000, "recovered on the fast cadence despite a 60 s interval");
  });

  test("an in-place restart with no failed probe is detected and the new identity adopted", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine);
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    engine.incarnation = "i2";
    engine.identity = { engineId: "e2", incarnation: "i2" };
    await waitFor(() => w.getSnapshot().context.restarts === 1, 3000, "restart counted");
    await waitFor(() => w.getSnapshot().context.engineId === "e2", 3000, "new engine id");
    expect(statusOf(w.getSnapshot())).toBe("ready");
    expect(w.getSnapshot().context.journal?.kind).toMatch(/restart|identity|models/);
  });

  test("model list is re-read every N probes; a failed re-read keeps the last list", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine, { config: { intervalMs: 10, modelRefreshEvery: 3 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    engine.models = [{ id: "m" }, { id: "lora-a", parent: "m" }];
    await waitFor(() => w.getSnapshot().context.models.length === 2, 3000, "adapter shows up");
    engine.models = "failed";
    const seen = engine.requests.length;
    await waitFor(() => engine.requests.filter((r, i) => i >= seen && r.wantModels).length >= 1);
    await Bun.sleep(30);
    expect(w.getSnapshot().context.models.map((m) => m.id)).toEqual(["m", "lora-a"]);
    expect(statusOf(w.getSnapshot())).toBe("ready");
  });

  test("refreshModels makes the next probe read the list at once", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine, { config: { intervalMs: 60_000, modelRefreshEvery: 0 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    engine.models = [{ id: "m" }, { id: "lora-b", parent: "m" }];
    w.send({ type: "worker.refreshModels", modelsVersion: "v2" });
    await waitFor(() => w.getSnapshot().context.models.length === 2, 2000, "refreshed without waiting an interval");
  });

  test("sleeping takes the worker out of rotation and keeps it out", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine);
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    w.send({ type: "worker.update", patch: { sleeping: true } });
    expect(isRoutable(w.getSnapshot())).toBe(false);
    await Bun.sleep(100);
    expect(statusOf(w.getSnapshot())).toBe("not_ready");
    w.send({ type: "worker.update", patch: { sleeping: false } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
  });

  test("draining waits for in-flight work, then the actor stops", async () => {
    const engine = new ScriptedEngine();
    let release!: () => void;
    const idle = new Promise<void>((r) => (release = r));
    const w = run(engine, { idle: () => idle });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    w.send({ type: "worker.drain", reason: "test" });
    expect(statusOf(w.getSnapshot())).toBe("draining");
    expect(isRoutable(w.getSnapshot())).toBe(false);
    const probesAtDrain = engine.requests.length;
    await Bun.sleep(50);
    expect(w.getSnapshot().status).toBe("active");
    expect(engine.requests.length).toBe(probesAtDrain);
    release();
    await waitFor(() => w.getSnapshot().status === "done");
  });

  test("a Ready worker whose engine id is unconfirmed re-reads it on the fast cadence, not an interval later", async () => {
    const engine = new ScriptedEngine();
    engine.identity = "failed";
    const w = run(engine, { config: { intervalMs: 60_000 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    expect(w.getSnapshot().context.engineIdConfirmed).toBe(false);
    engine.identity = { engineId: "e9", incarnation: "i1" };
    await waitFor(() => w.getSnapshot().context.engineId === "e9", 2000, "id read well before the 60 s interval");
    expect(w.getSnapshot().context.engineIdConfirmed).toBe(true);
    const probes = engine.requests.length;
    await Bun.sleep(100);
    expect(engine.requests.length).toBe(probes); // confirmed: back to the full interval
  });
});
