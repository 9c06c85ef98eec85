/**
 * applyProbe: how one probe result moves the counters the machine's guards read, and the model
 * rules (learned before routable, a failed read keeps the last list, a registered model wins);
 * plus when the machine's probe asks for the model list.
 */
import { describe, expect, test } from "bun:test";
import { applyProbe, initialContext, type ProbeResult, type WorkerContext, type WorkerSpec } from "../src";
import { fastConfig, spec } from "./helpers";
import { probeRequestOf, pureWorker } from "./machine-model";

const ctxFor = (over: Partial<WorkerSpec> = {}, ctx: Partial<WorkerContext> = {}): WorkerContext => ({
  ...initialContext({ spec: spec(over), config: fastConfig }),
  ...ctx,
});
const known = (ctx: Partial<WorkerContext> = {}) => ctxFor({}, { models: [{ id: "m" }], modelsKnown: true, ...ctx });
const ok = (over: Partial<ProbeResult> = {}): ProbeResult => ({ healthy: true, detail: "ok", latencyMs: 3, ...over });
const down: ProbeResult = { healthy: false, detail: "503 Service Unavailable", latencyMs: 7 };

/** Freezes a context deeply, so a mutation inside applyProbe throws. */
function frozen<T>(v: T): T {
  if (v && typeof v === "object") {
    Object.values(v).forEach(frozen);
    Object.freeze(v);
  }
  return v;
}

describe("applyProbe: counters", () => {
  test("a healthy probe with models known counts a success and clears the failure run", () => {
    const next = applyProbe(frozen(known({ successes: 1, failures: 2 })), "not_ready", ok());
    expect([next.successes, next.failures]).toEqual([2, 0]);
  });

  test("a failed probe counts a failure and clears the success run", () => {
    const next = applyProbe(frozen(known({ successes: 3, failures: 1 })), "ready", down);
    expect([next.successes, next.failures]).toEqual([0, 2]);
    expect(next.journal).toMatchObject({ kind: "probe", message: expect.stringContaining("503") });
  });

  test("every probe is counted; only Pending probes count toward the Pending bound", () => {
    let c = frozen(known());
    for (const status of ["pending", "pending", "ready", "not_ready", "failed"] as const) c = applyProbe(c, status, status === "ready" ? down : ok());
    expect([c.probeCount, c.pendingProbes]).toEqual([5, 2]);
    expect(applyProbe(known(), "pending", down).pendingProbes).toBe(1); // failed Pending probes count too
  });

  test("the last probe is recorded as seen", () => {
    const next = applyProbe(known(), "ready", down);
    expect(next.lastProbe).toMatchObject({ healthy: false, detail: "503 Service Unavailable", latencyMs: 7 });
    expect(Math.abs(next.lastProbe!.at - Date.now())).toBeLessThan(60_000);
  });

  test("it is pure: the input context is left as it was", () => {
    const before = known({ successes: 1 });
    const copy = structuredClone(before);
    frozen(before);
    applyProbe(before, "ready", ok({ models: [{ id: "x" }], identity: { engineId: "e", incarnation: "i" }, incarnation: "i" }));
    applyProbe(before, "ready", down);
    expect(before).toEqual(copy);
  });

  test("journal entries are numbered in order", () => {
    const a = applyProbe(known(), "ready", down);
    const b = applyProbe(a, "ready", down);
    expect(b.journal!.seq).toBe(a.journal!.seq + 1);
  });

  test("an unhealthy probe leaves models and identity alone even if it carried them", () => {
    const next = applyProbe(known({ engineId: "e1", engineIdConfirmed: true }), "ready", { ...down, models: [{ id: "other" }], identity: "failed" });
    expect(next.models).toEqual([{ id: "m" }]);
    expect([next.engineId, next.engineIdConfirmed]).toEqual(["e1", true]);
  });
});

describe("applyProbe: models", () => {
  test("a healthy engine whose models were never read is a failure, not a success", () => {
    const c = ctxFor();
    expect(c.modelsKnown).toBe(false);
    for (const models of [undefined, "failed"] as const) {
      const next = applyProbe(c, "pending", ok({ models }));
      expect([next.successes, next.failures, next.modelsKnown]).toEqual([0, 1, false]);
      expect(next.journal?.message).toContain("model list could not be read");
    }
  });

  test("the models the engine lists are learned, LoRA adapters with their parent", () => {
    const list = [{ id: "base", maxModelLen: 4096 }, { id: "lora-a", parent: "base", root: "/adapters/a" }];
    const next = applyProbe(ctxFor({}, { modelsRefreshRequested: true }), "pending", ok({ models: list }));
    expect(next.models).toEqual(list);
    expect([next.modelsKnown, next.modelsRefreshRequested, next.successes]).toEqual([true, false, 1]);
    expect(next.journal).toMatchObject({ kind: "models", message: "models: [base,lora-a]" });
  });

  test("a failed re-read keeps the last known list and the success", () => {
    const next = applyProbe(known({ modelsRefreshRequested: true }), "ready", ok({ models: "failed" }));
    expect([next.models, next.modelsKnown, next.successes]).toEqual([[{ id: "m" }], true, 1]);
    expect(next.modelsRefreshRequested).toBe(true); // still due
  });

  test("a re-read with the same list journals nothing; a changed list is journalled", () => {
    const same = applyProbe(known(), "ready", ok({ models: [{ id: "m" }] }));
    expect(same.journal).toBeNull();
    const changed = applyProbe(known(), "ready", ok({ models: [{ id: "m" }, { id: "lora-b", parent: "m" }] }));
    expect(changed.journal).toMatchObject({ kind: "models", message: "models: [m,lora-b]" });
  });

  test("an engine that lists no models cannot serve: the list is emptied and the probe fails", () => {
    const next = applyProbe(known({ successes: 2 }), "ready", ok({ models: [] }));
    expect([next.models, next.modelsKnown, next.successes, next.failures]).toEqual([[], false, 0, 1]);
  });

  test("a model given at registration is kept whatever the engine lists, and no list is needed", () => {
    const c = ctxFor({ modelId: "given" }, { modelsRefreshRequested: true });
    expect([c.models, c.modelsKnown]).toEqual([[{ id: "given" }], true]);
    const listed = applyProbe(c, "pending", ok({ models: [{ id: "other" }] }));
    expect([listed.models, listed.modelsRefreshRequested, listed.successes]).toEqual([[{ id: "given" }], false, 1]);
    expect(applyProbe(c, "pending", ok()).successes).toBe(1);
  });
});

describe("the probe asks for the model list when it is due (pure machine)", () => {
  const answer = (models?: ProbeResult["models"]) => ok({ models, incarnation: "i1" });

  test("the first probe asks; once known, not again until every N-th probe", () => {
    const w = pureWorker({}, { modelRefreshEvery: 3, successThreshold: 1, failureThreshold: 3 });
    const wants: boolean[] = [];
    for (let i = 0; i < 7; i++) {
      const req = probeRequestOf(w.snapshot)!;
      wants.push(req.wantModels);
      w.probe(answer(req.wantModels ? [{ id: "m" }] : undefined));
    }
    expect(wants).toEqual([true, false, false, true, false, false, true]);
  });

  test("a failed read is asked again on the next probe", () => {
    const w = pureWorker({}, { modelRefreshEvery: 0 });
    w.probe(answer("failed"));
    expect(probeRequestOf(w.snapshot)!.wantModels).toBe(true);
  });

  test("refreshModels makes the next probe ask, and starts it at once from the wait", () => {
    const w = pureWorker({}, { modelRefreshEvery: 0, successThreshold: 1 });
    w.probe(answer([{ id: "m" }]));
    w.probe(answer());
    expect(w.snapshot.value).toEqual({ ready: "probing" });
    expect(probeRequestOf(w.snapshot)!.wantModels).toBe(false);
    w.send({ type: "xstate.done.actor.probe", output: answer() });
    expect(w.snapshot.value).toEqual({ ready: "waiting" });
    w.send({ type: "worker.refreshModels", modelsVersion: "v7" });
    expect(w.snapshot.value).toEqual({ ready: "probing" });
    expect(probeRequestOf(w.snapshot)!.wantModels).toBe(true);
    expect(w.snapshot.context.modelsVersion).toBe("v7");
  });

  test("a restart seen without a models read asks for them on the next probe", () => {
    const w = pureWorker({}, { modelRefreshEvery: 0, successThreshold: 1 });
    w.probe(answer([{ id: "m" }]));
    w.probe(ok({ incarnation: "i2" }));
    expect(w.snapshot.context.restarts).toBe(1);
    expect(probeRequestOf(w.snapshot)!.wantModels).toBe(true);
  });

  test("with a model given at registration the list is never asked for", () => {
    const w = pureWorker({ modelId: "given" }, { modelRefreshEvery: 1 });
    for (let i = 0; i < 4; i++) {
      expect(probeRequestOf(w.snapshot)!.wantModels).toBe(false);
      w.probe(ok({ incarnation: "i1" }));
    }
  });
});

describe("restart whose first read names no engine id", () => {
  test("keeps the old id but leaves it unconfirmed, so it is read again", () => {
    const known = ctxFor({ engineId: "old", workerType: "prefill" }, { incarnation: "i1", models: [{ id: "m" }], modelsKnown: true });
    const after = applyProbe(known, "ready", { healthy: true, detail: "ok", latencyMs: 1, incarnation: "i2", identity: { engineId: null, incarnation: "i2" } });
    expect(after.restarts).toBe(1);
    expect(after.engineId).toBe("old");
    expect(after.engineIdConfirmed).toBe(false);
    const later = applyProbe(after, "ready", { healthy: true, detail: "ok", latencyMs: 1, incarnation: "i2", identity: { engineId: "new", incarnation: "i2" } });
    expect(later.engineId).toBe("new");
    expect(later.engineIdConfirmed).toBe(true);
  });
});
