import type { DesiredWorker, DiscoveryEvent, SourceStatus } from "@switchboard/discovery";
import { workerMachine, type HealthConfig, type WorkerEvent, type WorkerSpec } from "@switchboard/workers";
import { assign, enqueueActions, setup, type AnyActorLogic, type AnyActorRef } from "xstate";
import { reconcile, type RunningWorker } from "./reconcile";

export interface SourceConfig {
  /** Actor id and source name, e.g. "static", "admin", "k8s-pods:default". */
  id: string;
  logic: AnyActorLogic;
  input: unknown;
}

export interface FleetInput {
  health: HealthConfig;
  sources: SourceConfig[];
}

export interface FleetRecord extends RunningWorker {
  source: string;
}

export interface FleetContext {
  health: HealthConfig;
  sources: SourceConfig[];
  workers: Record<string, FleetRecord>;
  sourceStatus: Record<string, SourceStatus>;
}

export type FleetEvent =
  | DiscoveryEvent
  /** A worker actor reached its final state (drained). */
  | { type: "fleet.workerDone"; id: string }
  | { type: "fleet.drain"; id: string; reason: string }
  | { type: "fleet.update"; id: string; patch: Partial<WorkerSpec> }
  /** Restart a discovery source that crashed. */
  | { type: "fleet.restartSource"; id: string };

/** How long a crashed discovery source waits before it is started again. */
export const SOURCE_RESTART_DELAY_MS = 1_000;

let counter = 0;
export function newWorkerId(): string {
  counter = (counter + 1) % 0x10000;
  return `w-${crypto.randomUUID().slice(0, 8)}${counter.toString(16).padStart(4, "0")}`;
}

function toSpec(id: string, d: DesiredWorker): WorkerSpec {
  const { drain: _drain, modelsVersion: _mv, id: _hint, ...spec } = d;
  return { ...spec, id };
}

/**
 * The root of the actor system: discovery actors are its children and say which workers should
 * exist; it reconciles and spawns or stops worker actors accordingly. It never probes anything.
 */
export const fleetMachine = setup({
  types: { context: {} as FleetContext, events: {} as FleetEvent, input: {} as FleetInput },
  actors: { worker: workerMachine },
  actions: {
    startSources: enqueueActions(({ context, enqueue }) => {
      // Sources are plugged in at run time, so their logic is not among the typed `actors`.
      const spawn = enqueue.spawnChild as unknown as (logic: AnyActorLogic, o: { id: string; systemId: string; input: unknown }) => void;
      for (const s of context.sources) spawn(s.logic, { id: s.id, systemId: s.id, input: s.input });
    }),
    reconcileSource: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "source.desired") return;
      const source = event.source;
      const running = Object.values(context.workers).filter((w) => w.source === source);
      const workers = { ...context.workers };
      const stop = (id: string) => {
        enqueue.stopChild(id);
        delete workers[id];
      };
      const spawn = (d: DesiredWorker) => {
        // One worker per address: a new registration of a URL replaces whoever held it.
        for (const w of Object.values(workers)) if (w.spec.url === d.url) stop(w.id);
        const id = d.id && !workers[d.id] ? d.id : newWorkerId();
        const spec = toSpec(id, { ...d, source });
        workers[id] = { id, source, sourceKey: d.sourceKey, spec, modelsVersion: d.modelsVersion, draining: false };
        enqueue.spawnChild("worker", { id, input: { spec, config: context.health, modelsVersion: d.modelsVersion } });
      };
      const actions = reconcile(running, event.workers);
      // Removals first, so a replacement never collides with the worker it replaces.
      for (const a of actions) if (a.kind === "remove" || a.kind === "replace") stop(a.kind === "remove" ? a.id : a.oldId);
      for (const a of actions) {
        switch (a.kind) {
          case "spawn":
          case "replace":
            spawn(a.desired);
            break;
          case "update":
            workers[a.id] = { ...workers[a.id]!, spec: { ...workers[a.id]!.spec, ...a.patch } };
            enqueue.sendTo(a.id, { type: "worker.update", patch: a.patch } satisfies WorkerEvent);
            break;
          case "refreshModels":
            workers[a.id] = { ...workers[a.id]!, modelsVersion: a.modelsVersion };
            enqueue.sendTo(a.id, { type: "worker.refreshModels", modelsVersion: a.modelsVersion } satisfies WorkerEvent);
            break;
          case "drain":
            workers[a.id] = { ...workers[a.id]!, draining: true };
            enqueue.sendTo(a.id, { type: "worker.drain", reason: `${source}: object is terminating` } satisfies WorkerEvent);
            break;
        }
      }
      enqueue.assign({ workers });
    }),
    noteStatus: assign(({ context, event }) =>
      event.type === "source.status" ? { sourceStatus: { ...context.sourceStatus, [event.status.source]: event.status } } : {},
    ),
    forgetWorker: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "fleet.workerDone" || !context.workers[event.id]) return;
      const { [event.id]: _gone, ...rest } = context.workers;
      enqueue.stopChild(event.id);
      enqueue.assign({ workers: rest });
    }),
    drainWorker: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "fleet.drain") return;
      const w = context.workers[event.id];
      if (!w || w.draining) return;
      enqueue.assign({ workers: { ...context.workers, [w.id]: { ...w, draining: true } } });
      enqueue.sendTo(w.id, { type: "worker.drain", reason: event.reason } satisfies WorkerEvent);
    }),
    /**
     * A child that throws would otherwise take the whole fleet down (xstate escalates unhandled
     * child errors). A crashed source is marked disconnected and restarted; its workers stay until
     * its next list says otherwise. A crashed worker actor leaves the fleet.
     */
    childCrashed: enqueueActions(({ context, event, enqueue }) => {
      const id = event.type.slice("xstate.error.actor.".length);
      const error = String((event as { error?: unknown }).error);
      const source = context.sources.find((s) => s.id === id);
      if (source) {
        const prev = context.sourceStatus[id];
        enqueue.assign({
          sourceStatus: {
            ...context.sourceStatus,
            [id]: { source: id, kind: prev?.kind ?? "static", connected: false, lastSyncAt: prev?.lastSyncAt ?? null, lastError: `source crashed: ${error}`, reconnects: (prev?.reconnects ?? 0) + 1, workers: prev?.workers ?? 0 },
          },
        });
        enqueue.raise({ type: "fleet.restartSource", id }, { delay: SOURCE_RESTART_DELAY_MS });
        return;
      }
      if (context.workers[id]) {
        const { [id]: _gone, ...rest } = context.workers;
        enqueue.assign({ workers: rest });
      }
    }),
    restartSource: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "fleet.restartSource") return;
      const s = context.sources.find((x) => x.id === event.id);
      if (!s) return;
      const spawn = enqueue.spawnChild as unknown as (logic: AnyActorLogic, o: { id: string; systemId: string; input: unknown }) => void;
      enqueue.stopChild(s.id);
      spawn(s.logic, { id: s.id, systemId: s.id, input: s.input });
    }),
    updateWorker: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "fleet.update") return;
      const w = context.workers[event.id];
      if (!w) return;
      enqueue.assign({ workers: { ...context.workers, [w.id]: { ...w, spec: { ...w.spec, ...event.patch } } } });
      enqueue.sendTo(w.id, { type: "worker.update", patch: event.patch } satisfies WorkerEvent);
    }),
  },
}).createMachine({
  id: "fleet",
  context: ({ input }) => ({ health: input.health, sources: input.sources, workers: {}, sourceStatus: {} }),
  entry: "startSources",
  on: {
    "source.desired": { actions: "reconcileSource" },
    "source.status": { actions: "noteStatus" },
    "fleet.workerDone": { actions: "forgetWorker" },
    "fleet.drain": { actions: "drainWorker" },
    "fleet.update": { actions: "updateWorker" },
    "fleet.restartSource": { actions: "restartSource" },
    "xstate.error.actor.*": { actions: "childCrashed" },
  },
});

export type FleetActor = AnyActorRef;
