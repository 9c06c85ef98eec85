import type { DesiredWorker } from "@switchboard/discovery";
import type { WorkerSpec } from "@switchboard/workers";

/** A worker the fleet runs for a source, as far as reconciliation cares. */
export interface RunningWorker {
  id: string;
  sourceKey: string;
  spec: WorkerSpec;
  modelsVersion?: string;
  draining: boolean;
}

export type ReconcileAction =
  | { kind: "spawn"; desired: DesiredWorker }
  /** Identity changed (address, role, transport, registered model or engine): a brand-new worker. */
  | { kind: "replace"; oldId: string; desired: DesiredWorker }
  | { kind: "update"; id: string; patch: Partial<WorkerSpec> }
  | { kind: "refreshModels"; id: string; modelsVersion?: string }
  | { kind: "drain"; id: string }
  | { kind: "remove"; id: string };

const IDENTITY_FIELDS = ["url", "workerType", "connectionMode", "modelId", "engineId"] as const;
const MUTABLE_FIELDS = ["priority", "sleeping", "bootstrapPort", "kvConnector"] as const;

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((k) => a[k] === b[k]);
}

/**
 * Compares what a source wants with what runs for it and says what to do. Pure, so that
 * "the worker set equals the truth after every reconnect" is a property of this function.
 * A worker already draining is left to finish even when its object is gone.
 */
export function reconcile(running: Iterable<RunningWorker>, desired: readonly DesiredWorker[]): ReconcileAction[] {
  const actions: ReconcileAction[] = [];
  const byKey = new Map<string, RunningWorker>();
  for (const r of running) byKey.set(r.sourceKey, r);
  const wanted = new Set<string>();

  for (const d of desired) {
    if (wanted.has(d.sourceKey)) continue; // a source listing one key twice: the first wins
    wanted.add(d.sourceKey);
    const current = byKey.get(d.sourceKey);
    if (!current) {
      if (!d.drain) actions.push({ kind: "spawn", desired: d });
      continue;
    }
    if (current.draining) continue;
    if (IDENTITY_FIELDS.some((f) => current.spec[f] !== d[f])) {
      actions.push(d.drain ? { kind: "remove", id: current.id } : { kind: "replace", oldId: current.id, desired: d });
      continue;
    }
    if (d.drain) {
      actions.push({ kind: "drain", id: current.id });
      continue;
    }
    const patch: Partial<WorkerSpec> = {};
    for (const f of MUTABLE_FIELDS) if (current.spec[f] !== d[f]) (patch as Record<string, unknown>)[f] = d[f];
    if (!sameLabels(current.spec.labels, d.labels)) patch.labels = d.labels;
    if (Object.keys(patch).length > 0) actions.push({ kind: "update", id: current.id, patch });
    if ((d.modelsVersion ?? null) !== (current.modelsVersion ?? null)) actions.push({ kind: "refreshModels", id: current.id, modelsVersion: d.modelsVersion });
  }

  for (const r of byKey.values()) {
    if (!wanted.has(r.sourceKey) && !r.draining) actions.push({ kind: "remove", id: r.id });
  }
  return actions;
}
