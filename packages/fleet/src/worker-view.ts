import type { Candidate, EngineLoad } from "@switchboard/policies";
import type { ModelInfo, WorkerSpec, WorkerStatus } from "@switchboard/workers";
import type { JournalEntry, LastProbe } from "@switchboard/workers";

/**
 * What the gateway sees of a worker: a plain object kept in step with the worker actor's
 * snapshots. It doubles as the policy's Candidate, so a routing decision allocates nothing.
 */
export class WorkerView implements Candidate {
  status: WorkerStatus = "pending";
  models: ModelInfo[] = [];
  engineId: string | null = null;
  engineIdConfirmed = false;
  dataParallelSize = 1;
  incarnation: string | null = null;
  restarts = 0;
  reason = "";
  since = Date.now();
  lastProbe: LastProbe | null = null;
  journal: JournalEntry | null = null;
  /** Requests this gateway has in flight to the worker. */
  inFlight = 0;
  engineLoad?: EngineLoad;
  /** Set when the worker leaves the fleet: a late release on it must not touch a successor. */
  gone = false;

  constructor(public spec: WorkerSpec) {}

  get id() {
    return this.spec.id;
  }
  get url() {
    return this.spec.url;
  }
  get priority() {
    return this.spec.priority;
  }
  get labels() {
    return this.spec.labels;
  }
}

/** The /workers JSON shape of one worker. */
export function describeWorker(v: WorkerView) {
  return {
    id: v.id,
    url: v.url,
    status: v.status,
    model_id: v.spec.modelId ?? v.models[0]?.id ?? null,
    models: v.models.map((m) => ({ id: m.id, parent: m.parent ?? null })),
    worker_type: v.spec.workerType,
    connection_mode: v.spec.connectionMode,
    labels: v.spec.labels,
    priority: v.spec.priority,
    load: v.inFlight,
    engine_load: v.engineLoad ?? null,
    source: v.spec.source,
    source_key: v.spec.sourceKey,
    bootstrap_port: v.spec.bootstrapPort ?? null,
    kv_connector: v.spec.kvConnector ?? null,
    engine_id: v.engineId,
    engine_id_confirmed: v.engineIdConfirmed,
    engine_id_pinned: v.spec.engineIdPinned ?? false,
    data_parallel_size: v.dataParallelSize,
    incarnation: v.incarnation,
    restarts: v.restarts,
    sleeping: v.spec.sleeping ?? false,
    reason: v.reason,
    since: new Date(v.since).toISOString(),
    last_probe: v.lastProbe && { ...v.lastProbe, at: new Date(v.lastProbe.at).toISOString() },
  };
}
