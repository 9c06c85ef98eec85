/**
 * Model-based paths through the worker machine with @xstate/graph: every state and every transition
 * the machine defines is exercised by some path, and the lifecycle rules of issue 2 (thresholds,
 * routability, draining) and the identity rules of issue 4 hold on every step of every path.
 * Pure transitions only: no timers, no invoked actors.
 */
import { describe, expect, test } from "bun:test";
import { getSimplePaths, getStateNodes, toDirectedGraph, type DirectedGraphNode } from "@xstate/graph";
import type { AnyStateMachine, AnyTransitionDefinition, EventObject } from "xstate";
import { isRoutable, shouldReadIdentity, statusOf, workerMachine, type WorkerSnapshot } from "../src";
import { explore, isProbeEvent, nodeIdsOf, phaseOf, probeOutput, probeRequestOf, type Edge, type Exploration, type Phase } from "./machine-model";

const health = ["healthy", "unhealthy", "modelsFailed", "modelsEmpty", "error"] as const;
const identity = ["healthy", "unhealthy", "restart", "restartBare", "restartIdentityFailed", "identityFailed", "identityNone"] as const;
// Explored once, at load (a second or two): every test below reads the same edges.
const runs: Exploration[] = [
  // Thresholds, all events. A second setting catches a guard that only works for threshold 1.
  explore({ name: "ft=1 st=2", config: { failureThreshold: 1, successThreshold: 2 }, outcomes: [...health], operatorEvents: true }),
  explore({ name: "ft=2 st=3", config: { failureThreshold: 2, successThreshold: 3 }, outcomes: ["healthy", "unhealthy", "modelsEmpty"], operatorEvents: false }),
  // Identity: the model is given at registration and Pending probes are not counted, so the id,
  // confirmation and incarnation dimensions can be walked in full.
  ...([
    ["no id known", {}],
    ["seeded id", { engineId: "e-seed" }],
    ["pinned id", { engineId: "e-pin", engineIdPinned: true }],
  ] as const).map(([name, id]) =>
    explore({ name, spec: { modelId: "m", ...id }, config: { failureThreshold: 1, successThreshold: 2 }, outcomes: [...identity], operatorEvents: false, countPendingProbes: false }),
  ),
];
const edges: Edge[] = runs.flatMap((r) => r.edges);

const configOf = (e: Edge) => runs.find((r) => r.options.name === e.run)!.config;
const pinned = (s: WorkerSnapshot) => !!s.context.spec.engineIdPinned;

/** Fails with the first few offending paths, readable. */
function expectNone(violations: string[]) {
  expect(violations.slice(0, 5)).toEqual([]);
}
function check(pred: (e: Edge) => string | undefined): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const why = pred(e);
    if (why) out.push(`[${e.run}] ${why}\n    path: ${e.path()}`);
  }
  return out;
}

function allGraphNodes(g: DirectedGraphNode): DirectedGraphNode[] {
  return [g, ...g.children.flatMap(allGraphNodes)];
}
/** Every transition the machine defines: the directed graph's edges, plus eventless (`always`) ones, which it leaves out. */
function definedTransitions(): Map<AnyTransitionDefinition, string> {
  const defined = new Map<AnyTransitionDefinition, string>();
  const label = (t: AnyTransitionDefinition) =>
    `${t.source.id} --${t.eventType || "always"}${t.guard ? `[${typeof t.guard === "object" ? (t.guard as { type: string }).type : String(t.guard)}]` : ""}--> ${t.target?.map((n) => n.id).join(",") ?? "(self)"}`;
  for (const node of allGraphNodes(toDirectedGraph(workerMachine as AnyStateMachine))) {
    for (const edge of node.edges) defined.set(edge.transition, label(edge.transition));
    for (const t of node.stateNode.always ?? []) defined.set(t, label(t));
  }
  return defined;
}

describe("worker machine paths (@xstate/graph, pure transitions)", () => {
  test("the traversal is finite, small and explores every run", () => {
    for (const r of runs) {
      expect(r.statesSeen).toBeGreaterThan(20);
      expect(r.edges.length).toBeLessThan(60_000);
    }
  });

  test("the synthetic timer and actor events are exactly the ones the machine defines", () => {
    const machineEvents = new Set(
      allGraphNodes(toDirectedGraph(workerMachine as AnyStateMachine)).flatMap((n) => n.edges.map((e) => e.transition.eventType)),
    );
    const sent = new Set(edges.map((e) => e.event.type));
    expect([...machineEvents].filter((t) => !sent.has(t))).toEqual([]);
    expect([...sent].filter((t) => !machineEvents.has(t))).toEqual([]);
    // The formats the model relies on (xstate 5: after.<delay>.<state node id>, done.actor.<invoke id>).
    for (const t of ["xstate.after.fast.worker.pending.waiting", "xstate.after.interval.worker.ready.waiting", "xstate.after.failedCadence.worker.failed.waiting", "xstate.done.actor.probe", "xstate.done.actor.0.worker.draining"]) {
      expect(machineEvents.has(t)).toBe(true);
    }
  });

  test("every state node of the machine is reached by some path", () => {
    const reached = new Set(edges.flatMap((e) => e.passed.flatMap(nodeIdsOf)));
    const all = getStateNodes(workerMachine.root).map((n) => n.id);
    expect(all.length).toBe(18);
    expect(all.filter((id) => !reached.has(id))).toEqual([]);
  });

  test("every transition defined in the machine is taken by some path", () => {
    const defined = definedTransitions();
    const taken = new Set(edges.flatMap((e) => e.taken));
    expect(defined.size).toBeGreaterThan(35);
    expect([...defined].filter(([t]) => !taken.has(t)).map(([, label]) => label)).toEqual([]);
    // …and the thresholds run alone covers them all.
    const takenByFirst = new Set(runs[0]!.edges.flatMap((e) => e.taken));
    expect([...defined].filter(([t]) => !takenByFirst.has(t)).map(([, label]) => label)).toEqual([]);
  });

  test("only a Ready worker is routable, on every state of every path", () => {
    expect(isRoutable(runs[0]!.initial)).toBe(false);
    expectNone(check((e) => (isRoutable(e.after) !== (e.after.status === "active" && statusOf(e.after) === "ready") ? `routable=${isRoutable(e.after)} in ${phaseOf(e.after)}` : undefined)));
  });

  test("status changes only along the lifecycle's edges", () => {
    const allowed: Record<Phase, Phase[]> = {
      pending: ["ready", "failed", "draining"],
      ready: ["not_ready", "draining"],
      not_ready: ["ready", "failed", "draining"],
      failed: ["ready", "draining"],
      draining: ["stopped"],
      stopped: [],
    };
    expectNone(
      check((e) => {
        const [from, to] = [phaseOf(e.before), phaseOf(e.after)];
        return from !== to && !allowed[from].includes(to) ? `${from} → ${to}` : undefined;
      }),
    );
    // A drain is obeyed from every live state.
    expectNone(check((e) => (e.event.type === "worker.drain" && phaseOf(e.after) !== "draining" ? `drain left it ${phaseOf(e.after)}` : undefined)));
  });

  test("Pending/NotReady/Failed → Ready only after successThreshold consecutive successes, and always after them", () => {
    const promotedFrom = new Set<Phase>();
    expectNone(
      check((e) => {
        const [from, to] = [phaseOf(e.before), phaseOf(e.after)];
        if (!["pending", "not_ready", "failed"].includes(from)) return undefined;
        const st = configOf(e).successThreshold;
        if (to === "ready") {
          promotedFrom.add(from);
          if (e.probe !== "success") return `promoted by ${e.event.type}, not a successful probe`;
          if (e.h.successRun < st) return `promoted after ${e.h.successRun} consecutive successes (threshold ${st})`;
          if (e.h.sleeping) return "promoted while sleeping";
        } else if (e.probe === "success" && e.h.successInState >= st && !e.h.sleeping) {
          return `${e.h.successInState} consecutive successes in ${from} but still ${to}`;
        }
        return undefined;
      }),
    );
    expect([...promotedFrom].sort()).toEqual(["failed", "not_ready", "pending"]);
  });

  test("Ready → NotReady after failureThreshold consecutive failures, at once on a passive failure or on sleep, never otherwise", () => {
    let byProbes = 0;
    expectNone(
      check((e) => {
        if (phaseOf(e.before) !== "ready") return undefined;
        const ft = configOf(e).failureThreshold;
        const due = (e.probe === "failure" && e.h.failureRun >= ft) || e.passiveFailure || (e.event.type === "worker.update" && e.h.sleeping);
        const to = phaseOf(e.after);
        if (to === "draining") return undefined;
        if (due && to !== "not_ready") return `still ${to} after ${e.event.type} (failures ${e.h.failureRun}, threshold ${ft})`;
        if (!due && to !== "ready") return `${to} without cause (failures ${e.h.failureRun}, threshold ${ft})`;
        if (due && e.probe === "failure" && e.h.failureRun === ft && ft > 1) byProbes++;
        return undefined;
      }),
    );
    expect(byProbes).toBeGreaterThan(0); // the threshold > 1 case was really walked
  });

  test("NotReady → Failed after 3 × failureThreshold consecutive failures, not before", () => {
    expectNone(
      check((e) => {
        if (phaseOf(e.before) !== "not_ready") return undefined;
        const limit = 3 * configOf(e).failureThreshold;
        const to = phaseOf(e.after);
        const due = e.probe === "failure" && e.h.failureRun >= limit;
        if (due && to !== "failed") return `${e.h.failureRun} consecutive failures (limit ${limit}) but ${to}`;
        if (to === "failed" && !due) return `failed after ${e.h.failureRun} consecutive failures (limit ${limit})`;
        return undefined;
      }),
    );
  });

  test("Pending → Failed after 10 × failureThreshold probes without promotion, not before", () => {
    let seen = 0;
    expectNone(
      check((e) => {
        if (phaseOf(e.before) !== "pending") return undefined;
        const limit = 10 * configOf(e).failureThreshold;
        const to = phaseOf(e.after);
        const due = isProbeEvent(e.event) && e.h.pendingProbes >= limit && to !== "ready";
        if (to === "failed") seen++;
        if (due && to !== "failed") return `${e.h.pendingProbes} probes in Pending (limit ${limit}) but ${to}`;
        if (to === "failed" && !due) return `failed after ${e.h.pendingProbes} Pending probes (limit ${limit})`;
        return undefined;
      }),
    );
    expect(seen).toBeGreaterThan(0);
  });

  test("Failed keeps being probed: every Failed snapshot is probing or has a timer to probe", () => {
    expectNone(
      check((e) => {
        if (phaseOf(e.after) !== "failed") return undefined;
        const sub = (e.after.value as unknown as Record<string, string>).failed;
        if (sub === "probing" && !probeRequestOf(e.after)) return "failed.probing without a probe";
        if (sub === "waiting" && !runs[0]!.events(e.after).some((ev) => ev.type.startsWith("xstate.after."))) return "failed.waiting without a timer";
        return undefined;
      }),
    );
  });

  test("a probe runs exactly in the probing states, and the judging state is never a resting state", () => {
    expectNone(
      check((e) => {
        if (e.after.status !== "active") return e.after.children && Object.keys(e.after.children).length ? "a stopped worker keeps children" : undefined;
        const sub = typeof e.after.value === "string" ? undefined : Object.values(e.after.value)[0];
        if (sub === "judging") return "rests in judging";
        return (sub === "probing") !== !!probeRequestOf(e.after) ? `probe child ${probeRequestOf(e.after) ? "present" : "absent"} in ${JSON.stringify(e.after.value)}` : undefined;
      }),
    );
  });

  test("Draining never probes and always ends in the final state", () => {
    expectNone(
      check((e) => {
        const [from, to] = [phaseOf(e.before), phaseOf(e.after)];
        if (to === "draining" && probeRequestOf(e.after)) return "a probe runs while draining";
        if (from === "draining" && isProbeEvent(e.event)) return "a probe event was offered while draining";
        if (from === "draining" && /^xstate\.(done|error)\.actor\.0\.worker\.draining$/.test(e.event.type) && (to !== "stopped" || e.after.status !== "done")) return `idle watch ended but ${to}/${e.after.status}`;
        return undefined;
      }),
    );
    // From draining entered out of every status, every simple path stays in draining/stopped and
    // the final state is reachable by both ends of the idle watch.
    const run = runs[0]!;
    const entries = new Map<Phase, WorkerSnapshot>();
    for (const e of run.edges) if (e.event.type === "worker.drain" && !entries.has(phaseOf(e.before))) entries.set(phaseOf(e.before), e.after);
    expect([...entries.keys()].sort()).toEqual(["draining", "failed", "not_ready", "pending", "ready"]);
    for (const [from, start] of entries) {
      const paths = getSimplePaths(workerMachine as AnyStateMachine, { fromState: start, serializeState: run.serialize as (s: unknown) => string, events: run.events as (s: unknown) => EventObject[] });
      expect(paths.length).toBeGreaterThan(2);
      const ends = new Set<string>();
      for (const p of paths) {
        for (const s of p.steps.map((x) => x.state as WorkerSnapshot)) {
          expect([from, phaseOf(s)]).toEqual([from, s.status === "done" ? "stopped" : "draining"]);
          expect(probeRequestOf(s)).toBeUndefined();
        }
        const last = p.steps[p.steps.length - 1]!;
        if ((p.state as WorkerSnapshot).status === "done") ends.add(last.event.type.split(".")[1]!);
      }
      expect([...ends].sort()).toEqual(["done", "error"]);
    }
  });

  test("each probe asks for the engine id exactly when the identity gate says so", () => {
    const asked = new Map<string, Set<boolean>>();
    expectNone(
      check((e) => {
        const req = probeRequestOf(e.after);
        if (!req) return undefined;
        const c = e.after.context;
        const want = shouldReadIdentity(statusOf(e.after), c.engineId !== null, c.engineIdConfirmed, pinned(e.after));
        const key = `${statusOf(e.after)}`;
        asked.set(key, (asked.get(key) ?? new Set()).add(req.wantIdentity));
        if (req.knownIncarnation !== c.incarnation) return `probe told incarnation ${req.knownIncarnation}, worker knows ${c.incarnation}`;
        return req.wantIdentity !== want ? `wantIdentity=${req.wantIdentity} in ${statusOf(e.after)} (id ${c.engineId}, confirmed ${c.engineIdConfirmed}, pinned ${pinned(e.after)})` : undefined;
      }),
    );
    // Both answers really occur where the gate depends on the context.
    expect([...asked.get("pending")!].sort()).toEqual([false, true]);
    expect([...asked.get("ready")!].sort()).toEqual([false, true]);
  });

  test("a known engine id is never cleared, a failed read keeps it unconfirmed, a completed read confirms it", () => {
    expectNone(
      check((e) => {
        const [b, a] = [e.before.context, e.after.context];
        if (b.engineId !== null && a.engineId === null) return `engine id ${b.engineId} cleared`;
        const out = probeOutput(e.event);
        if (!out?.healthy || out.identity === undefined || pinned(e.before)) return undefined;
        if (out.identity === "failed") return a.engineId !== b.engineId || a.engineIdConfirmed ? `failed read: id ${b.engineId} → ${a.engineId}, confirmed ${a.engineIdConfirmed}` : undefined;
        const expected = out.identity.engineId ?? b.engineId;
        return a.engineId !== expected || !a.engineIdConfirmed ? `read ${out.identity.engineId}: id ${a.engineId}, confirmed ${a.engineIdConfirmed}` : undefined;
      }),
    );
  });

  test("an id whose read did not complete is re-read on the next probe, wherever the worker now is", () => {
    let failedReads = 0;
    expectNone(
      check((e) => {
        const out = probeOutput(e.event);
        if (!out?.healthy || out.identity !== "failed" || pinned(e.before)) return undefined;
        failedReads++;
        const a = e.after.context;
        if (e.after.status !== "active" || phaseOf(e.after) === "draining") return undefined;
        return shouldReadIdentity(statusOf(e.after), a.engineId !== null, a.engineIdConfirmed) ? undefined : `failed read (id ${a.engineId}) not retried in ${statusOf(e.after)}`;
      }),
    );
    expect(failedReads).toBeGreaterThan(0);
  });

  test("an incarnation change counts one restart, even without a failed probe; an id not read then is re-read next probe", () => {
    let restarts = 0;
    let unread = 0;
    expectNone(
      check((e) => {
        const [b, a] = [e.before.context, e.after.context];
        const out = probeOutput(e.event);
        const seen = out?.healthy ? (out.incarnation ?? null) : null;
        const restart = seen !== null && b.incarnation !== null && seen !== b.incarnation;
        if (a.restarts !== b.restarts + (restart ? 1 : 0)) return `restarts ${b.restarts} → ${a.restarts} (incarnation ${b.incarnation} → ${seen})`;
        if (!restart) return undefined;
        restarts++;
        if (a.incarnation !== seen) return `incarnation not adopted: ${a.incarnation}`;
        if (typeof out!.identity !== "object" && !pinned(e.after)) {
          unread++;
          if (a.engineIdConfirmed) return "restart without an identity read left the id confirmed";
          // The next probe, wherever the worker now is, asks for the id.
          if (e.after.status === "active" && phaseOf(e.after) !== "draining" && !shouldReadIdentity(statusOf(e.after), a.engineId !== null, a.engineIdConfirmed)) {
            return `after the restart the gate would not re-read in ${statusOf(e.after)}`;
          }
        }
        return undefined;
      }),
    );
    expect(restarts).toBeGreaterThan(0);
    expect(unread).toBeGreaterThan(0);
  });
});
