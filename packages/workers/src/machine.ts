import { assign, fromPromise, setup } from "xstate";
import { applyProbe } from "./probe-outcome";
import { initialContext, journal, type WorkerContext, type WorkerInput } from "./context";
import { shouldReadIdentity } from "./identity-gate";
import type { ProbeRequest, ProbeResult, WorkerSpec, WorkerStatus } from "./types";

export type WorkerEvent =
  /** A request could not connect: stop routing here now; probes bring it back. */
  | { type: "worker.passiveFailure"; detail: string }
  /** Take no new requests, finish in-flight ones, then stop. */
  | { type: "worker.drain"; reason: string }
  /** The model list may have changed (e.g. LoRA adapters): re-read it on the next probe, now. */
  | { type: "worker.refreshModels"; modelsVersion?: string }
  /** Labels, priority, sleeping: never the worker's identity (that is a new worker). */
  | { type: "worker.update"; patch: Partial<Pick<WorkerSpec, "labels" | "priority" | "sleeping" | "bootstrapPort" | "kvConnector">> };

export interface ProbeInput {
  request: Omit<ProbeRequest, "signal">;
}

export interface IdleInput {
  workerId: string;
  timeoutMs: number;
}

/** Stand-ins: the fleet provides the real probe (HTTP or gRPC) and the in-flight watcher. */
const unprovidedProbe = fromPromise<ProbeResult, ProbeInput>(async () => ({ healthy: false, detail: "no probe provided", latencyMs: 0 }));
const unprovidedIdle = fromPromise<void, IdleInput>(async () => {});

function probeRequest(ctx: WorkerContext, status: WorkerStatus): ProbeInput {
  const modelsDue =
    !ctx.spec.modelId &&
    (!ctx.modelsKnown || ctx.modelsRefreshRequested || (ctx.config.modelRefreshEvery > 0 && ctx.probeCount > 0 && ctx.probeCount % ctx.config.modelRefreshEvery === 0));
  return {
    request: {
      spec: ctx.spec,
      config: ctx.config,
      wantModels: modelsDue,
      wantIdentity: shouldReadIdentity(status, ctx.engineId !== null, ctx.engineIdConfirmed, ctx.spec.engineIdPinned),
      knownIncarnation: ctx.incarnation,
    },
  };
}

const lastDetail = (ctx: WorkerContext) => ctx.lastProbe?.detail ?? "no probe yet";

/** Why a worker is where it is, in an operator's words. */
function reasonFor(status: WorkerStatus, c: WorkerContext): string {
  switch (status) {
    case "pending":
      return "waiting for the engine to answer";
    case "ready":
      return `${c.config.successThreshold} consecutive healthy probes`;
    case "not_ready":
      return c.spec.sleeping ? "engine is sleeping" : `${c.failures} consecutive failures: ${lastDetail(c)}`;
    case "failed":
      return `${c.failures} consecutive failures: ${lastDetail(c)}`;
    case "draining":
      return "draining: no new requests, waiting for in-flight ones";
  }
}

/** The probing loop shared by every serving-or-recovering state: wait, probe, judge. */
// Returned loosely typed: the spread into the machine config below is checked by setup().
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function probeLoop(status: WorkerStatus, delay: "interval" | "fast" | "failedCadence", judge: unknown[]): any {
  return {
    initial: status === "pending" ? "probing" : "waiting",
    states: {
      waiting: {
        after: { [delay]: "probing" },
        on: { "worker.refreshModels": { target: "probing", actions: "requestModels" } },
      },
      probing: {
        invoke: {
          id: "probe",
          src: "probe",
          input: ({ context }: { context: WorkerContext }) => probeRequest(context, status),
          onDone: { target: "judging", actions: { type: "recordProbe", params: { status } } },
          onError: { target: "judging", actions: { type: "recordProbeError", params: { status } } },
        },
        on: { "worker.refreshModels": { actions: "requestModels" } },
      },
      judging: { always: [...judge, { target: "waiting" }] },
    },
  };
}

export const workerMachine = setup({
  types: {
    context: {} as WorkerContext,
    events: {} as WorkerEvent,
    input: {} as WorkerInput,
  },
  actors: { probe: unprovidedProbe, waitForIdle: unprovidedIdle },
  delays: {
    // A Ready worker with something left to re-read (an unconfirmed engine id after a restart or a
    // failed read, a requested model refresh) is probed again on the fast cadence, not an interval later.
    interval: ({ context }) =>
      (!context.engineIdConfirmed && !context.spec.engineIdPinned) || context.modelsRefreshRequested
        ? Math.min(context.config.fastIntervalMs, context.config.intervalMs)
        : context.config.intervalMs,
    fast: ({ context }) => context.config.fastIntervalMs,
    // A failed engine is probed less eagerly until it answers again, then on the fast cadence.
    failedCadence: ({ context }) =>
      context.successes > 0 ? context.config.fastIntervalMs : Math.min(context.config.intervalMs, context.config.fastIntervalMs * 5),
  },
  guards: {
    promotable: ({ context }) => context.successes >= context.config.successThreshold && context.modelsKnown && !context.spec.sleeping,
    failedEnough: ({ context }) => context.failures >= context.config.failureThreshold,
    failedLong: ({ context }) => context.failures >= 3 * context.config.failureThreshold,
    pendingTooLong: ({ context }) => context.pendingProbes >= 10 * context.config.failureThreshold,
    sleeping: ({ context }) => !!context.spec.sleeping,
  },
  actions: {
    recordProbe: assign(({ context, event }, { status }: { status: WorkerStatus }) =>
      applyProbe(context, status, (event as unknown as { output: ProbeResult }).output),
    ),
    recordProbeError: assign(({ context, event }, { status }: { status: WorkerStatus }) =>
      applyProbe(context, status, { healthy: false, detail: `probe error: ${String((event as { error?: unknown }).error)}`, latencyMs: 0 }),
    ),
    enterState: assign(({ context }, { status }: { status: WorkerStatus }) => {
      const why = reasonFor(status, context);
      return { since: Date.now(), reason: why, successes: status === "ready" ? 0 : context.successes, journal: journal(context, "transition", `→ ${status}: ${why}`) };
    }),
    requestModels: assign(({ context, event }) => ({
      modelsRefreshRequested: true,
      modelsVersion: event.type === "worker.refreshModels" ? (event.modelsVersion ?? context.modelsVersion) : context.modelsVersion,
      journal: journal(context, "models", "model list refresh requested"),
    })),
    applyUpdate: assign(({ context, event }) => {
      if (event.type !== "worker.update") return {};
      return { spec: { ...context.spec, ...event.patch }, journal: journal(context, "update", `updated ${Object.keys(event.patch).join(", ")}`) };
    }),
    notePassive: assign(({ context, event }) => ({
      failures: context.failures + 1,
      successes: 0,
      journal: journal(context, "passive", `request could not connect: ${event.type === "worker.passiveFailure" ? event.detail : ""}`),
    })),
  },
}).createMachine({
  id: "worker",
  context: ({ input }) => initialContext(input),
  initial: "pending",
  on: {
    "worker.drain": { target: ".draining" },
    "worker.update": { actions: "applyUpdate" },
    "worker.refreshModels": { actions: "requestModels" },
  },
  states: {
    pending: {
      entry: { type: "enterState", params: { status: "pending" } },
      ...probeLoop("pending", "fast", [
        { guard: "promotable", target: "#worker.ready" },
        { guard: "pendingTooLong", target: "#worker.failed" },
      ]),
    },
    ready: {
      entry: { type: "enterState", params: { status: "ready" } },
      on: {
        "worker.passiveFailure": { target: "not_ready", actions: "notePassive" },
      },
      always: { guard: "sleeping", target: "not_ready" },
      ...probeLoop("ready", "interval", [{ guard: "failedEnough", target: "#worker.not_ready" }]),
    },
    not_ready: {
      entry: { type: "enterState", params: { status: "not_ready" } },
      ...probeLoop("not_ready", "fast", [
        { guard: "promotable", target: "#worker.ready" },
        { guard: "failedLong", target: "#worker.failed" },
      ]),
    },
    failed: {
      entry: { type: "enterState", params: { status: "failed" } },
      ...probeLoop("failed", "failedCadence", [{ guard: "promotable", target: "#worker.ready" }]),
    },
    draining: {
      entry: { type: "enterState", params: { status: "draining" } },
      on: { "worker.drain": {} },
      invoke: {
        src: "waitForIdle",
        input: ({ context }) => ({ workerId: context.spec.id, timeoutMs: context.config.drainTimeoutMs }),
        onDone: "stopped",
        onError: "stopped",
      },
    },
    stopped: { type: "final" },
  },
});

export type WorkerMachine = typeof workerMachine;
