import type { WorkerSnapshot, WorkerStatus, WorkerType } from "@switchboard/workers";
import { statusOf } from "@switchboard/workers";
import { WorkerView } from "./worker-view";

export type WorkerChange =
  | { kind: "added"; view: WorkerView }
  | { kind: "removed"; view: WorkerView }
  | { kind: "status"; view: WorkerView; from: WorkerStatus; to: WorkerStatus }
  | { kind: "restarted"; view: WorkerView; from: string | null; to: string | null }
  | { kind: "journal"; view: WorkerView }
  | { kind: "probed"; view: WorkerView };

const EMPTY: readonly WorkerView[] = Object.freeze([]);

/**
 * The plain structure the gateway reads: workers by id and url, and Ready workers by
 * (role, model). It follows actor snapshots; a request never talks to an actor.
 */
export class WorkerIndex {
  readonly views = new Map<string, WorkerView>();
  private readonly byUrl = new Map<string, WorkerView>();
  /** (role, model) → Ready workers; rebuilt lazily after a status or model change. */
  private routes: Map<string, WorkerView[]> | null = null;
  /** Every model any worker has ever listed: a 404 is for models nobody serves, a 503 for the rest. */
  private readonly everServed = new Set<string>();
  private readonly listeners = new Set<(c: WorkerChange) => void>();

  onChange(listener: (c: WorkerChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(c: WorkerChange) {
    for (const l of this.listeners) l(c);
  }

  add(view: WorkerView) {
    this.views.set(view.id, view);
    this.byUrl.set(view.url, view);
    if (view.spec.modelId) this.everServed.add(view.spec.modelId);
    this.routes = null;
    this.emit({ kind: "added", view });
  }

  remove(id: string) {
    const view = this.views.get(id);
    if (!view) return;
    view.gone = true;
    this.views.delete(id);
    if (this.byUrl.get(view.url) === view) this.byUrl.delete(view.url);
    this.routes = null;
    this.emit({ kind: "removed", view });
  }

  get(id: string) {
    return this.views.get(id);
  }

  byAddress(url: string) {
    return this.byUrl.get(url);
  }

  /** Folds a worker actor's snapshot into its view; touches the route table only when routability changed. */
  applySnapshot(id: string, snap: WorkerSnapshot) {
    const view = this.views.get(id);
    if (!view) return;
    const ctx = snap.context;
    const status = snap.status === "active" ? statusOf(snap) : "draining";
    const from = view.status;
    const modelsChanged = view.models !== ctx.models;
    const specChanged = view.spec !== ctx.spec;
    const restarted = ctx.restarts !== view.restarts;
    const oldIncarnation = view.incarnation;
    const journalChanged = ctx.journal?.seq !== view.journal?.seq;
    const probed = ctx.lastProbe !== view.lastProbe;

    view.status = status;
    view.models = ctx.models;
    view.spec = ctx.spec;
    view.engineId = ctx.engineId;
    view.engineIdConfirmed = ctx.engineIdConfirmed;
    view.dataParallelSize = ctx.dataParallelSize;
    view.incarnation = ctx.incarnation;
    view.restarts = ctx.restarts;
    view.reason = ctx.reason;
    view.since = ctx.since;
    view.lastProbe = ctx.lastProbe;
    view.journal = ctx.journal;

    if (modelsChanged) for (const m of ctx.models) this.everServed.add(m.id);
    if (modelsChanged || from !== status || specChanged) this.routes = null;
    if (restarted) {
      view.engineLoad = undefined; // the old process's load says nothing about the new one
      this.emit({ kind: "restarted", view, from: oldIncarnation, to: ctx.incarnation });
    }
    if (from !== status) this.emit({ kind: "status", view, from, to: status });
    if (journalChanged) this.emit({ kind: "journal", view });
    else if (probed) this.emit({ kind: "probed", view });
  }

  /** Ready workers of a role that serve a model. The array is shared: do not mutate it. */
  candidates(model: string, role: WorkerType = "regular"): readonly WorkerView[] {
    if (this.routes === null) this.routes = this.buildRoutes();
    return this.routes.get(routeKey(role, model)) ?? EMPTY;
  }

  /** Whether any worker has ever served the model (else a request for it is a 404). */
  knows(model: string): boolean {
    return this.everServed.has(model);
  }

  /** Models of Ready workers, with the workers' model info, for GET /v1/models. */
  readyModels(): Map<string, { parent: string | null; maxModelLen?: number }> {
    const out = new Map<string, { parent: string | null; maxModelLen?: number }>();
    for (const v of this.views.values()) {
      if (v.status !== "ready") continue;
      for (const m of v.models) if (!out.has(m.id)) out.set(m.id, { parent: m.parent ?? null, maxModelLen: m.maxModelLen });
    }
    return out;
  }

  readyCount(): number {
    let n = 0;
    for (const v of this.views.values()) if (v.status === "ready") n++;
    return n;
  }

  private buildRoutes(): Map<string, WorkerView[]> {
    const routes = new Map<string, WorkerView[]>();
    for (const v of this.views.values()) {
      if (v.status !== "ready") continue;
      for (const m of v.models) {
        const key = routeKey(v.spec.workerType, m.id);
        let list = routes.get(key);
        if (!list) routes.set(key, (list = []));
        list.push(v);
      }
    }
    return routes;
  }
}

function routeKey(role: WorkerType, model: string) {
  return `${role}\u0000${model}`;
}
