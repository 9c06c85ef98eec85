/**
 * The engine id lives in the worker actor (issue 4): when a probe re-reads it, and how a read's
 * result is folded in (failed/partial, none, new id, in-place restart).
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { AnyActorRef } from "xstate";
import { applyProbe, initialContext, shouldReadIdentity, statusOf, type ProbeResult, type WorkerContext, type WorkerSpec, type WorkerStatus } from "../src";
import { ScriptedEngine, fastConfig, spec, startWorker, waitFor } from "./helpers";

describe("the re-read gate (status × id known × confirmed × pinned)", () => {
  // [status, id known, confirmed, re-read?, why]
  const table: [WorkerStatus, boolean, boolean, boolean, string][] = [
    ["pending", false, false, true, "no id known yet"],
    ["pending", false, true, false, "a completed read said the engine has none: no retry loop"],
    ["pending", true, false, true, "the last read did not complete (or the engine restarted): retry"],
    ["pending", true, true, false, "seeded or already read"],
    ["ready", false, false, true, "the last read did not complete"],
    ["ready", false, true, false, "confirmed none: not on every Ready probe"],
    ["ready", true, false, true, "the last read did not complete"],
    ["ready", true, true, false, "confirmed: not on every Ready probe"],
    ["not_ready", false, false, true, "may have restarted while down: read before promotion"],
    ["not_ready", false, true, true, "may have restarted while down"],
    ["not_ready", true, false, true, "may have restarted while down"],
    ["not_ready", true, true, true, "may have restarted while down"],
    ["failed", false, false, true, "may have restarted while down"],
    ["failed", false, true, true, "may have restarted while down"],
    ["failed", true, false, true, "may have restarted while down"],
    ["failed", true, true, true, "may have restarted while down"],
    ["draining", false, false, false, "never while draining"],
    ["draining", false, true, false, "never while draining"],
    ["draining", true, false, false, "never while draining"],
    ["draining", true, true, false, "never while draining"],
  ];

  test.each(table)("%s, id known %p, confirmed %p → re-read %p (%s)", (status, known, confirmed, expected) => {
    expect(shouldReadIdentity(status, known, confirmed)).toBe(expected);
    expect(shouldReadIdentity(status, known, confirmed, false)).toBe(expected);
  });

  test.each(table)("%s, id known %p, confirmed %p, pinned → never re-read", (status, known, confirmed) => {
    expect(shouldReadIdentity(status, known, confirmed, true)).toBe(false);
  });

  test("the table covers every combination exactly once", () => {
    const statuses: WorkerStatus[] = ["pending", "ready", "not_ready", "failed", "draining"];
    const keys = new Set(table.map(([s, k, c]) => `${s}/${k}/${c}`));
    expect(keys.size).toBe(table.length);
    expect(table.length).toBe(statuses.length * 4);
  });
});

const base = (over: Partial<WorkerSpec> = {}): WorkerContext => initialContext({ spec: spec({ modelId: "m", ...over }), config: fastConfig });
const healthy = (over: Partial<ProbeResult> = {}): ProbeResult => ({ healthy: true, detail: "ok", latencyMs: 1, ...over });
const withId = (engineId: string | null, over: Partial<WorkerContext> = {}): WorkerContext => ({ ...base(), engineId, engineIdConfirmed: true, incarnation: "i1", ...over });

describe("applyProbe: identity", () => {
  test("a failed or partial read keeps the previous id and marks it unconfirmed", () => {
    const next = applyProbe(withId("e1"), "ready", healthy({ identity: "failed", incarnation: "i1" }));
    expect(next.engineId).toBe("e1");
    expect(next.engineIdConfirmed).toBe(false);
    expect(next.successes).toBe(1); // the health answer still counts
    const none = applyProbe(base(), "pending", healthy({ identity: "failed" }));
    expect([none.engineId, none.engineIdConfirmed]).toEqual([null, false]);
  });

  test("a completed read with no id confirms there is none and never clears a known id", () => {
    const fresh = applyProbe(base(), "pending", healthy({ identity: { engineId: null, incarnation: "i1" } }));
    expect([fresh.engineId, fresh.engineIdConfirmed]).toEqual([null, true]);
    const known = applyProbe(withId("e1", { engineIdConfirmed: false }), "ready", healthy({ identity: { engineId: null, incarnation: "i1" } }));
    expect([known.engineId, known.engineIdConfirmed]).toEqual(["e1", true]);
    expect(known.journal?.kind).not.toBe("identity");
  });

  test("a new id replaces the old one, is confirmed and journalled", () => {
    const next = applyProbe(withId("e1", { engineIdConfirmed: false }), "not_ready", healthy({ identity: { engineId: "e2", incarnation: "i1", dataParallelSize: 4 } }));
    expect([next.engineId, next.engineIdConfirmed, next.dataParallelSize]).toEqual(["e2", true, 4]);
    expect(next.journal).toMatchObject({ kind: "identity", message: expect.stringContaining("e1 → e2") });
    const same = applyProbe(withId("e1"), "ready", healthy({ identity: { engineId: "e1", incarnation: "i1" } }));
    expect(same.journal).toBe(withId("e1").journal);
  });

  test("a pinned id is never replaced by what the engine reports", () => {
    const pinned = { ...base({ engineId: "pin", engineIdPinned: true }), incarnation: "i1" };
    for (const identity of ["failed", { engineId: "e2", incarnation: "i1" }, { engineId: null, incarnation: "i1" }] as const) {
      const next = applyProbe(pinned, "ready", healthy({ identity }));
      expect([next.engineId, next.engineIdConfirmed]).toEqual(["pin", true]);
    }
  });

  test("an unhealthy probe changes neither the id nor the incarnation", () => {
    const next = applyProbe(withId("e1"), "ready", { healthy: false, detail: "503", latencyMs: 1, identity: { engineId: "e2", incarnation: "i2" }, incarnation: "i2" });
    expect([next.engineId, next.engineIdConfirmed, next.incarnation, next.restarts]).toEqual(["e1", true, "i1", 0]);
  });
});

describe("applyProbe: in-place restart", () => {
  test("the first incarnation seen is adopted without counting a restart; the same one again is no restart", () => {
    const first = applyProbe(base(), "pending", healthy({ incarnation: "i1" }));
    expect([first.incarnation, first.restarts]).toEqual(["i1", 0]);
    const again = applyProbe(first, "pending", healthy({ incarnation: "i1" }));
    expect(again.restarts).toBe(0);
  });

  test("a changed incarnation counts one restart with no failed probe; an id not read then is left unconfirmed", () => {
    const ready = withId("e1", { successes: 5 });
    const next = applyProbe(ready, "ready", healthy({ incarnation: "i2" }));
    expect([next.incarnation, next.restarts]).toEqual(["i2", 1]);
    expect([next.failures, next.successes]).toEqual([0, 6]); // no failed probe in between
    expect(next.engineId).toBe("e1"); // kept until re-read…
    expect(next.engineIdConfirmed).toBe(false); // …which the next probe does
    expect(shouldReadIdentity("ready", true, next.engineIdConfirmed)).toBe(true);
    expect(next.modelsRefreshRequested).toBe(true); // models were not re-read either
    expect(next.journal).toMatchObject({ kind: "restart", message: expect.stringMatching(/i1 → i2.*e1 → e1/) });
  });

  test("a restart whose probe read the identity adopts the new id at once", () => {
    const next = applyProbe(withId("e1"), "ready", healthy({ incarnation: "i2", identity: { engineId: "e2", incarnation: "i2" }, models: [{ id: "m" }] }));
    expect([next.restarts, next.engineId, next.engineIdConfirmed, next.modelsRefreshRequested]).toEqual([1, "e2", true, false]);
    expect(next.journal).toMatchObject({ kind: "restart", message: expect.stringContaining("e1 → e2") });
  });

  test("a restart whose identity read failed keeps the old id unconfirmed", () => {
    const next = applyProbe(withId("e1"), "ready", healthy({ incarnation: "i2", identity: "failed" }));
    expect([next.restarts, next.engineId, next.engineIdConfirmed]).toEqual([1, "e1", false]);
  });

  test("the incarnation may come from the identity read alone", () => {
    const next = applyProbe(withId("e1"), "ready", healthy({ identity: { engineId: "e2", incarnation: "i2" } }));
    expect([next.incarnation, next.restarts, next.engineId]).toEqual(["i2", 1, "e2"]);
  });
});

describe("the machine asks the engine for its id exactly when the gate says so (scripted engine)", () => {
  const actors: AnyActorRef[] = [];
  afterEach(() => actors.splice(0).forEach((a) => a.stop()));
  const run = (...args: Parameters<typeof startWorker>) => {
    const a = startWorker(...args);
    actors.push(a);
    return a;
  };
  const asked = (engine: ScriptedEngine) => engine.requests.map((r) => r.wantIdentity);

  test("Pending with no id asks; an engine that reports none is then not asked again", async () => {
    const engine = new ScriptedEngine();
    engine.identity = { engineId: null, incarnation: "i1" };
    const w = run(engine, { config: { intervalMs: 10 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready" && engine.requests.length >= 5, 3000, "ready and probed a few times");
    expect(asked(engine)[0]).toBe(true);
    expect(asked(engine).slice(1).every((a) => !a)).toBe(true);
    expect([w.getSnapshot().context.engineId, w.getSnapshot().context.engineIdConfirmed]).toEqual([null, true]);
  });

  test("Pending with a seeded id does not ask", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine, { spec: { engineId: "seed" }, config: { intervalMs: 10 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready" && engine.requests.length >= 4);
    expect(asked(engine).some((a) => a)).toBe(false);
  });

  test("Pending with a known id whose read did not complete asks again before promotion", async () => {
    const engine = new ScriptedEngine();
    const inner = engine.probe;
    // First probe reads e1; the engine then restarts in place (new incarnation, nothing else re-read).
    engine.probe = async (req) => {
      if (engine.requests.length === 1) {
        engine.incarnation = "i2";
        engine.identity = { engineId: "e2", incarnation: "i2" };
      }
      return inner(req);
    };
    const w = run(engine, { config: { successThreshold: 4, intervalMs: 60_000 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready", 3000, "ready");
    expect(asked(engine).slice(0, 3)).toEqual([true, false, true]);
    expect(w.getSnapshot().context.restarts).toBe(1);
    expect(w.getSnapshot().context.engineId).toBe("e2"); // the new id before it ever became routable
  });

  test("Ready and unconfirmed asks on the next probe, then stops once a read completes", async () => {
    const engine = new ScriptedEngine();
    const w = run(engine, { config: { failureThreshold: 1, intervalMs: 10 } });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    const readyFrom = engine.requests.length;
    await waitFor(() => engine.requests.length >= readyFrom + 2);
    expect(asked(engine).slice(readyFrom).some((a) => a)).toBe(false); // confirmed: not on every Ready probe
    // Down, then back with an identity read that does not complete: promoted with the id unconfirmed.
    engine.healthy = false;
    await waitFor(() => statusOf(w.getSnapshot()) === "not_ready");
    engine.identity = "failed";
    engine.healthy = true;
    await waitFor(() => statusOf(w.getSnapshot()) === "ready", 3000, "ready again");
    expect(w.getSnapshot().context.engineIdConfirmed).toBe(false);
    expect(w.getSnapshot().context.engineId).toBe("e1");
    const back = engine.requests.length;
    engine.identity = { engineId: "e1", incarnation: "i1" };
    await waitFor(() => engine.requests.length >= back + 3);
    expect(asked(engine).slice(back, back + 3)).toEqual([true, false, false]);
    expect(w.getSnapshot().context.engineIdConfirmed).toBe(true);
  });

  test("NotReady asks on every probe; Draining never probes", async () => {
    const engine = new ScriptedEngine();
    let release!: () => void;
    const idle = new Promise<void>((r) => (release = r));
    const w = run(engine, { config: { failureThreshold: 1 }, idle: () => idle });
    await waitFor(() => statusOf(w.getSnapshot()) === "ready");
    engine.healthy = false;
    await waitFor(() => statusOf(w.getSnapshot()) === "not_ready");
    const from = engine.requests.length;
    await waitFor(() => engine.requests.length >= from + 2);
    expect(asked(engine).slice(from).every((a) => a)).toBe(true);
    w.send({ type: "worker.drain", reason: "test" });
    const atDrain = engine.requests.length;
    await Bun.sleep(80); // several fast-cadence periods
    expect(engine.requests.length).toBe(atDrain);
    release();
    await waitFor(() => w.getSnapshot().status === "done");
  });
});
