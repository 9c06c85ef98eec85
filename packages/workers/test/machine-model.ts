/**
 * A timer-free model of the worker machine for @xstate/graph. Timers and invoked actors are stood in
 * for by the events they would deliver (`xstate.after.*`, `xstate.done.actor.*`, `xstate.error.actor.*`),
 * sent through the machine's pure `transition`. Each explored edge is replayed on a real snapshot with
 * the transitions xstate took recorded, next to an independent count of probe outcomes (`History`)
 * that the invariants are checked against.
 */
import { createActor, fromTransition, type AnyActorScope, type AnyEventObject, type AnyStateMachine, type AnyTransitionDefinition, type EventObject, type InspectionEvent } from "xstate";
import { getShortestPaths } from "@xstate/graph";
import { statusOf, workerMachine, type HealthConfig, type ProbeInput, type ProbeResult, type WorkerSnapshot, type WorkerSpec, type WorkerStatus } from "../src";
import { fastConfig, spec as makeSpec } from "./helpers";

export type Phase = WorkerStatus | "stopped";
export type Outcome = "healthy" | "unhealthy" | "modelsFailed" | "modelsEmpty" | "restart" | "restartBare" | "restartIdentityFailed" | "identityFailed" | "identityNone" | "error";

export interface ModelOptions {
  name: string;
  spec?: Partial<WorkerSpec>;
  config: Partial<HealthConfig>;
  /** Which engine answers the traversal may give a probe. */
  outcomes: Outcome[];
  /** Whether to send the operator/request-path events (passive failure, update, refresh). Drain is always sent. */
  operatorEvents: boolean;
  /**
   * Tell Pending snapshots apart by their probe count (default). Off, Pending→Failed is left to other
   * runs and the identity dimensions can be walked without multiplying by 10 × failureThreshold.
   */
  countPendingProbes?: boolean;
}

/** Consecutive probe outcomes counted from the events alone, not from the machine's counters. */
export interface History {
  successRun: number; // successes since the last failure (probe or passive)
  successInState: number; // successes since the worker entered its current state
  failureRun: number; // failures since the last success
  pendingProbes: number; // probes answered while Pending
  modelsKnown: boolean;
  sleeping: boolean;
}

export interface Edge {
  run: string;
  before: WorkerSnapshot;
  event: EventObject;
  after: WorkerSnapshot;
  /** The machine transitions xstate took for this event, eventless ones included. */
  taken: AnyTransitionDefinition[];
  /** State values passed through, transient `judging` included. */
  passed: unknown[];
  probe?: "success" | "failure";
  passiveFailure: boolean;
  h: History; // counts after the event, before resetting for a new state
  path: () => string;
}

export interface Exploration {
  options: ModelOptions;
  config: HealthConfig;
  initial: WorkerSnapshot;
  edges: Edge[];
  statesSeen: number;
  serialize: (s: WorkerSnapshot) => string;
  events: (s: WorkerSnapshot) => EventObject[];
}

export const phaseOf = (s: WorkerSnapshot): Phase => (s.status === "done" ? "stopped" : statusOf(s));

/** The request the running probe was invoked with, if a probe is running. */
export function probeRequestOf(s: WorkerSnapshot): ProbeInput["request"] | undefined {
  const child = (s.children as Record<string, { options?: { input?: ProbeInput } } | undefined>).probe;
  return child?.options?.input?.request;
}

const PROBE_DONE = "xstate.done.actor.probe";
const PROBE_ERROR = "xstate.error.actor.probe";
export const isProbeEvent = (e: EventObject) => e.type === PROBE_DONE || e.type === PROBE_ERROR;
export const probeOutput = (e: EventObject): ProbeResult | undefined => (e.type === PROBE_DONE ? (e as unknown as { output: ProbeResult }).output : undefined);

/** Ids of the state nodes a state value passes through, e.g. {pending: "judging"} → worker.pending, worker.pending.judging. */
export function nodeIdsOf(value: unknown): string[] {
  if (typeof value === "string") return [`worker.${value}`];
  return Object.entries(value as Record<string, string>).flatMap(([top, sub]) => [`worker.${top}`, `worker.${top}.${sub}`]);
}

/** A pure actor scope that records the microsteps (and the transitions behind them) xstate resolves. */
function recordingScope(onStep: (e: Extract<InspectionEvent, { type: "@xstate.microstep" }>) => void): AnyActorScope {
  const self = createActor(fromTransition((s: null) => s, null), {
    inspect: (e) => {
      if (e.type === "@xstate.microstep") onStep(e);
    },
  });
  return {
    self,
    id: "",
    sessionId: "model",
    logger: () => {},
    defer: () => {},
    emit: () => {},
    system: self.system,
    stopChild: () => {},
    actionExecutor: () => {}, // pure: no timers are armed, no invoked actor starts
  } as AnyActorScope;
}

/** A worker machine driven by hand through pure transitions: no timers, no invoked actors. */
export function pureWorker(spec: Partial<WorkerSpec> = {}, config: Partial<HealthConfig> = {}) {
  const scope = recordingScope(() => {});
  let snapshot = workerMachine.getInitialSnapshot(scope, { spec: makeSpec(spec), config: { ...fastConfig, ...config } });
  return {
    get snapshot() {
      return snapshot;
    },
    send(event: AnyEventObject) {
      snapshot = workerMachine.transition(snapshot, event as never, scope);
      return snapshot;
    },
    /** Answer the running probe, then let the wait before the next one elapse. */
    probe(output: ProbeResult) {
      if (!probeRequestOf(snapshot)) throw new Error(`no probe running in ${JSON.stringify(snapshot.value)}`);
      this.send({ type: PROBE_DONE, output } as EventObject);
      for (const t of waitingTimers(snapshot)) this.send({ type: t });
      return snapshot;
    },
  };
}

/** The delayed events the current waiting state would receive. */
function waitingTimers(s: WorkerSnapshot): string[] {
  if (s.status !== "active" || typeof s.value === "string") return [];
  const [top, sub] = Object.entries(s.value)[0]!;
  return sub === "waiting" ? workerMachine.getStateNodeById(`worker.${top}.waiting`).after.map((t) => t.eventType) : [];
}

const otherIncarnation = (i: string) => (i === "i1" ? "i2" : "i1");
const engineIdOf = (incarnation: string) => `e-${incarnation}`;

/** The engine's answer to the running probe: shaped by what the probe asked for, as a real engine's would be. */
function answer(outcome: Outcome, req: ProbeInput["request"], current: string | null): EventObject {
  if (outcome === "error") return { type: PROBE_ERROR, error: new Error("probe threw") } as EventObject;
  const inc = current ?? "i1";
  const base = (incarnation: string, full = false): ProbeResult => ({
    healthy: true,
    detail: "ok",
    latencyMs: 1,
    incarnation,
    models: req.wantModels || full ? [{ id: "m" }] : undefined,
    identity: req.wantIdentity || full ? { engineId: engineIdOf(incarnation), incarnation } : undefined,
  });
  const outputs: Record<Exclude<Outcome, "error">, ProbeResult> = {
    healthy: base(inc),
    unhealthy: { healthy: false, detail: "503", latencyMs: 1 },
    modelsFailed: { ...base(inc), models: "failed" },
    modelsEmpty: { ...base(inc), models: [] },
    // A transport that sees a new incarnation reads identity and models in the same call…
    restart: base(otherIncarnation(inc), true),
    // …or one that only notices the marker.
    restartBare: base(otherIncarnation(inc)),
    // …or one whose identity read after the restart did not complete (a starting engine).
    restartIdentityFailed: { ...base(otherIncarnation(inc), true), identity: "failed" },
    identityFailed: { ...base(inc), identity: "failed" },
    identityNone: { ...base(inc), identity: { engineId: null, incarnation: inc } },
  };
  return { type: PROBE_DONE, output: outputs[outcome] } as EventObject;
}

/** Which outcomes make sense for this request (a models answer only when models were asked for, etc.). */
function applicable(outcome: Outcome, req: ProbeInput["request"]): boolean {
  if (outcome === "modelsFailed" || outcome === "modelsEmpty") return req.wantModels;
  if (outcome === "identityFailed" || outcome === "identityNone") return req.wantIdentity;
  return true;
}

export function explore(options: ModelOptions): Exploration {
  const config: HealthConfig = { ...fastConfig, modelRefreshEvery: 0, ...options.config };
  const spec = makeSpec(options.spec);
  const { failureThreshold: ft, successThreshold: st } = config;

  // Counters are capped where the guards stop telling values apart, so the graph is finite.
  const serialize = (s: WorkerSnapshot) => {
    const c = s.context;
    return JSON.stringify([
      s.status,
      s.value,
      Math.min(c.successes, st),
      Math.min(c.failures, 3 * ft),
      options.countPendingProbes === false ? c.pendingProbes > 0 : Math.min(c.pendingProbes, 10 * ft),
      c.modelsKnown,
      c.modelsRefreshRequested,
      c.engineId,
      c.engineIdConfirmed,
      c.incarnation,
      !!c.spec.sleeping,
    ]);
  };

  const events = (s: WorkerSnapshot): EventObject[] => {
    if (s.status !== "active") return [];
    const out: EventObject[] = [{ type: "worker.drain", reason: "model" } as EventObject];
    if (options.operatorEvents) {
      out.push(
        { type: "worker.passiveFailure", detail: "ECONNREFUSED" } as EventObject,
        { type: "worker.refreshModels", modelsVersion: "v2" } as EventObject,
        { type: "worker.update", patch: { sleeping: !s.context.spec.sleeping } } as EventObject,
      );
    }
    const [top, sub] = nodeIdsOf(s.value).map((id) => id.split(".").pop()!);
    if (sub === "waiting") {
      // Timers: the delayed transitions the waiting node itself defines.
      for (const t of workerMachine.getStateNodeById(`worker.${top}.waiting`).after) out.push({ type: t.eventType });
    }
    const req = probeRequestOf(s);
    if (req) for (const o of options.outcomes) if (applicable(o, req)) out.push(answer(o, req, s.context.incarnation));
    if (top === "draining") {
      for (const inv of workerMachine.getStateNodeById("worker.draining").invoke) {
        out.push({ type: `xstate.done.actor.${inv.id}` }, { type: `xstate.error.actor.${inv.id}`, error: new Error("idle watch failed") } as EventObject);
      }
    }
    return out;
  };

  let steps: Extract<InspectionEvent, { type: "@xstate.microstep" }>[] = [];
  const scope = recordingScope((e) => steps.push(e));
  const initial = workerMachine.getInitialSnapshot(scope, { spec, config });

  const paths = getShortestPaths(workerMachine as AnyStateMachine, {
    fromState: initial,
    serializeState: serialize as (s: unknown) => string,
    events: events as (s: unknown) => EventObject[],
  });

  // Replay each shortest path on real snapshots, parent before child, so every snapshot below is one
  // the machine really reaches by that path (capping only merged states, never faked them).
  interface Node {
    snapshot: WorkerSnapshot;
    h: History;
    parent?: Node;
    via?: EventObject;
  }
  const startHistory: History = { successRun: 0, successInState: 0, failureRun: 0, pendingProbes: 0, modelsKnown: !!spec.modelId, sleeping: !!spec.sleeping };
  const nodes = new Map<string, Node>([[serialize(initial), { snapshot: initial, h: startHistory }]]);
  const trail = (n: Node | undefined): string[] => (n?.parent ? [...trail(n.parent), describeEvent(n.via!)] : []);

  const step = (from: Node, event: EventObject) => {
    steps = [];
    const after = workerMachine.transition(from.snapshot, event as never, scope) as WorkerSnapshot;
    const taken = steps.flatMap((m) => m._transitions);
    const passed = steps.map((m) => (m.snapshot as WorkerSnapshot).value);
    const { h, probe, passiveFailure } = advance(from.h, from.snapshot, event, spec);
    const next: History = phaseOf(after) === phaseOf(from.snapshot) ? h : { ...h, successInState: 0 };
    return { after, taken, passed, h, next, probe, passiveFailure };
  };

  for (const path of [...paths].sort((a, b) => a.weight - b.weight)) {
    if (path.steps.length < 2) continue; // the initial state
    const last = path.steps[path.steps.length - 1]!;
    const parent = nodes.get(serialize(path.steps[path.steps.length - 2]!.state as WorkerSnapshot));
    if (!parent) throw new Error(`no replayed parent for ${serialize(path.state as WorkerSnapshot)}`);
    const key = serialize(path.state as WorkerSnapshot);
    if (nodes.has(key)) continue;
    const r = step(parent, last.event as EventObject);
    nodes.set(key, { snapshot: r.after, h: r.next, parent, via: last.event as EventObject });
  }

  // Every edge of the explored graph: the shortest path to a state, then each event it may receive.
  const edges: Edge[] = [];
  for (const node of nodes.values()) {
    for (const event of events(node.snapshot)) {
      const r = step(node, event);
      edges.push({
        run: options.name,
        before: node.snapshot,
        event,
        after: r.after,
        taken: r.taken,
        passed: r.passed,
        probe: r.probe,
        passiveFailure: r.passiveFailure,
        h: r.h,
        path: () => [...trail(node), describeEvent(event)].join(" → "),
      });
    }
  }
  return { options, config, initial, edges, statesSeen: nodes.size, serialize, events };
}

/** Counts what an event means for health, from the event alone. */
function advance(h: History, before: WorkerSnapshot, event: EventObject, spec: WorkerSpec): { h: History; probe?: "success" | "failure"; passiveFailure: boolean } {
  const phase = phaseOf(before);
  if (event.type === "worker.update") {
    const patch = (event as unknown as { patch: Partial<WorkerSpec> }).patch;
    return { h: { ...h, sleeping: patch.sleeping ?? h.sleeping }, passiveFailure: false };
  }
  if (event.type === "worker.passiveFailure" && phase === "ready") {
    return { h: { ...h, successRun: 0, successInState: 0, failureRun: h.failureRun + 1 }, passiveFailure: true };
  }
  if (!isProbeEvent(event)) return { h, passiveFailure: false };
  const out = probeOutput(event);
  const modelsKnown = spec.modelId ? true : out?.healthy && Array.isArray(out.models) ? out.models.length > 0 : h.modelsKnown;
  const pendingProbes = h.pendingProbes + (phase === "pending" ? 1 : 0);
  const ok = !!out?.healthy && modelsKnown;
  const counted = ok
    ? { successRun: h.successRun + 1, successInState: h.successInState + 1, failureRun: 0 }
    : { successRun: 0, successInState: 0, failureRun: h.failureRun + 1 };
  return { h: { ...h, ...counted, pendingProbes, modelsKnown }, probe: ok ? "success" : "failure", passiveFailure: false };
}

export function describeEvent(e: EventObject): string {
  const out = probeOutput(e);
  if (out) {
    const parts = [out.healthy ? "healthy" : "unhealthy"];
    if (out.models !== undefined) parts.push(`models=${Array.isArray(out.models) ? out.models.length : out.models}`);
    if (out.identity !== undefined) parts.push(`identity=${typeof out.identity === "object" ? (out.identity.engineId ?? "none") : out.identity}`);
    if (out.incarnation) parts.push(`inc=${out.incarnation}`);
    return `probe(${parts.join(",")})`;
  }
  if (e.type === "worker.update") return `update(${JSON.stringify((e as unknown as { patch: unknown }).patch)})`;
  return e.type.replace(/^xstate\./, "");
}
