import type { HealthConfig, ModelInfo, WorkerSpec, WorkerStatus } from "./types";

/** The last thing worth telling an operator about this worker (the visualizer's log line). */
export interface JournalEntry {
  seq: number;
  at: number;
  kind: "probe" | "transition" | "restart" | "models" | "identity" | "drain" | "passive" | "update";
  message: string;
}

export interface LastProbe {
  at: number;
  healthy: boolean;
  detail: string;
  latencyMs: number;
}

export interface WorkerContext {
  spec: WorkerSpec;
  config: HealthConfig;
  /** Consecutive successful / failed probes. */
  successes: number;
  failures: number;
  /** Probes since the worker entered Pending without being promoted (Pending→Failed bound). */
  pendingProbes: number;
  probeCount: number;
  models: ModelInfo[];
  modelsKnown: boolean;
  modelsRefreshRequested: boolean;
  modelsVersion?: string;
  /** KV-transfer engine id; null = none known. */
  engineId: string | null;
  /** False when the last identity read did not complete: the next successful probe re-reads. */
  engineIdConfirmed: boolean;
  dataParallelSize: number;
  /** Marker of the engine process; a change means the engine restarted in place. */
  incarnation: string | null;
  restarts: number;
  lastProbe: LastProbe | null;
  /** Why the worker is in its current state, in words. */
  reason: string;
  since: number;
  journal: JournalEntry | null;
}

export interface WorkerInput {
  spec: WorkerSpec;
  config: HealthConfig;
  modelsVersion?: string;
}

export function initialContext({ spec, config, modelsVersion }: WorkerInput): WorkerContext {
  const given = spec.modelId ? [{ id: spec.modelId }] : [];
  return {
    spec,
    config,
    successes: 0,
    failures: 0,
    pendingProbes: 0,
    probeCount: 0,
    models: given,
    modelsKnown: given.length > 0,
    modelsRefreshRequested: false,
    modelsVersion,
    engineId: spec.engineId ?? null,
    // A registered or pinned id is taken as confirmed until the engine is seen to change.
    engineIdConfirmed: spec.engineId != null,
    dataParallelSize: 1,
    incarnation: null,
    restarts: 0,
    lastProbe: null,
    reason: "registered; waiting for the first probe",
    since: Date.now(),
    journal: null,
  };
}

export function journal(ctx: WorkerContext, kind: JournalEntry["kind"], message: string): JournalEntry {
  return { seq: (ctx.journal?.seq ?? 0) + 1, at: Date.now(), kind, message };
}

export const statusOfState: Record<string, WorkerStatus> = {
  pending: "pending",
  ready: "ready",
  not_ready: "not_ready",
  failed: "failed",
  draining: "draining",
  stopped: "draining",
};
