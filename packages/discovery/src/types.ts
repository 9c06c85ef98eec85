import type { WorkerSpec } from "@switchboard/workers";

/**
 * A discovery source says which workers should exist. It never probes engines: it reports its
 * complete desired set, and the fleet reconciles the live worker actors against it.
 */
export interface DesiredWorker extends Omit<WorkerSpec, "id"> {
  /** A worker id chosen by the source (the admin API answers with it); else the fleet picks one. */
  id?: string;
  /** The object is terminating (pod deletionTimestamp): its worker drains instead of taking new work. */
  drain?: boolean;
  /** Opaque; when it changes, the worker re-reads its models (pod annotation `lora-modified`). */
  modelsVersion?: string;
}

export interface SourceStatus {
  source: string;
  kind: "static" | "admin" | "k8s-pods" | "k8s-services";
  connected: boolean;
  /** ms since epoch of the last completed list+reconcile. */
  lastSyncAt: number | null;
  lastError: string | null;
  /** How many times the watch has reconnected. */
  reconnects: number;
  workers: number;
}

/**
 * Events a discovery actor sends to its parent (the fleet) with `sendParent`.
 * `source.desired` is always the whole set for that source; anything not in it is removed.
 */
export type DiscoveryEvent =
  | { type: "source.desired"; source: string; workers: DesiredWorker[] }
  | { type: "source.status"; status: SourceStatus };
