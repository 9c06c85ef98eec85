import { createEmptyActor } from "xstate";
import { getShortestPaths, getAdjacencyMap } from "@xstate/graph";
import { workerMachine, type ProbeResult, type WorkerSnapshot } from "../src";
import { fastConfig, spec } from "./helpers";

const FT = Number(process.argv[2] ?? 1), ST = Number(process.argv[3] ?? 2), MODE = process.argv[4] ?? "A";
const config = { ...fastConfig, failureThreshold: FT, successThreshold: ST, modelRefreshEvery: 0 };
const empty = createEmptyActor();
const scope: any = { self: empty, logger: () => {}, id: "", sessionId: "x", defer: () => {}, system: (empty as any).system, stopChild: () => {}, emit: () => {}, actionExecutor: () => {} };
const initial = workerMachine.getInitialSnapshot(scope, { spec: spec(MODE === "B" ? { modelId: "m" } : {}), config });
const cap = (n: number, m: number) => Math.min(n, m);
function ser(s: WorkerSnapshot) {
  const c = s.context;
  return JSON.stringify([s.status, s.value, cap(c.successes, ST), cap(c.failures, 3 * FT), cap(c.pendingProbes, 10 * FT), c.modelsKnown, c.modelsRefreshRequested, c.engineId, c.engineIdConfirmed, c.incarnation, !!c.spec.sleeping]);
}
const other = (i: string | null) => (i === "i1" ? "i2" : "i1");
function events(s: WorkerSnapshot) {
  if (s.status !== "active") return [];
  const ev: any[] = [
    { type: "worker.passiveFailure", detail: "ECONNREFUSED" },
    { type: "worker.drain", reason: "t" },
    { type: "worker.refreshModels" },
    { type: "worker.update", patch: { sleeping: !s.context.spec.sleeping } },
  ];
  const probe: any = (s.children as any).probe;
  if (probe) {
    const req = probe.options.input.request;
    const inc = s.context.incarnation ?? "i1";
    const ok = (incarnation: string, over: Partial<ProbeResult> = {}): ProbeResult => ({ healthy: true, detail: "ok", latencyMs: 1, incarnation, models: req.wantModels ? [{ id: "m" }] : undefined, identity: req.wantIdentity ? { engineId: "e-" + incarnation, incarnation } : undefined, ...over });
    const outs: ProbeResult[] = [
      ok(inc),
      { healthy: false, detail: "503", latencyMs: 1 },
      ...(MODE === "B" ? [ok(other(inc))] : []),
      ...(req.wantModels ? [ok(inc, { models: "failed" })] : []),
      ...(req.wantIdentity && MODE === "B" ? [ok(inc, { identity: "failed" }), ok(inc, { identity: { engineId: null, incarnation: inc } })] : []),
    ];
    for (const output of outs) ev.push({ type: "xstate.done.actor.probe", output });
    ev.push({ type: "xstate.error.actor.probe", error: new Error("boom") });
  }
  const v = s.value as any;
  const top = typeof v === "string" ? v : Object.keys(v)[0];
  if (v[top] === "waiting") for (const t of workerMachine.getStateNodeById(`worker.${top}.waiting`).after) ev.push({ type: t.eventType });
  if (top === "draining") { ev.push({ type: "xstate.done.actor.0.worker.draining" }); ev.push({ type: "xstate.error.actor.0.worker.draining", error: "x" }); }
  return ev;
}
let t0 = performance.now();
const adj = getAdjacencyMap(workerMachine as any, { fromState: initial as any, serializeState: ser as any, events: events as any });
console.log("adj states", Object.keys(adj).length, "edges", Object.values(adj).reduce((n: number, a: any) => n + Object.keys(a.transitions).length, 0), (performance.now() - t0).toFixed(0), "ms");
t0 = performance.now();
const paths = getShortestPaths(workerMachine as any, { fromState: initial as any, serializeState: ser as any, events: events as any });
console.log("paths", paths.length, (performance.now() - t0).toFixed(0), "ms", Math.max(...paths.map((p) => p.steps.length)));
