import { createEmptyActor } from "xstate";
import { toDirectedGraph, getStateNodes } from "@xstate/graph";
import { workerMachine } from "../src";
import { fastConfig, spec } from "./helpers";

const g = toDirectedGraph(workerMachine);
function walk(n: any, out: any[]) { out.push(...n.edges); n.children.forEach((c: any) => walk(c, out)); return out; }
const edges = walk(g, []);
for (const e of edges) console.log(e.id, e.source.id, "--", e.transition.eventType, "->", e.target.id, e.transition.guard);
console.log(getStateNodes(workerMachine.root).map((n: any) => n.id));
for (const n of getStateNodes(workerMachine.root) as any[]) if (n.always) console.log("always", n.id, n.always.map((t: any) => [t.guard, t.target?.map((x: any) => x.id)]));
const empty = createEmptyActor();
const recorded: any[] = [];
const scope: any = { self: empty, logger: () => {}, id: "", sessionId: "x", defer: () => {}, system: { ...(empty as any).system, _sendInspectionEvent: (e: any) => recorded.push(e) }, stopChild: () => {}, emit: () => {}, actionExecutor: () => {} };
let s = workerMachine.getInitialSnapshot(scope, { spec: spec(), config: fastConfig });
console.log(s.value, Object.keys(s.children), (s.children as any).probe?.options?.input);
s = workerMachine.transition(s, { type: "xstate.done.actor.probe", output: { healthy: true, detail: "ok", latencyMs: 1, models: [{ id: "m" }] } } as any, scope);
console.log(s.value, s.context.successes, recorded.map((r) => [r.type, r.event?.type, r._transitions?.map((t: any) => t.source.id + ":" + t.eventType)]));
console.log(workerMachine.getStateNodeById("worker.pending.waiting").after.map((t: any) => t.eventType));
console.log(workerMachine.getStateNodeById("worker.draining").invoke.map((t: any) => [t.id, t.src]));
