import type { LiveDelta, LiveEvent, LiveSnapshot, LiveWorker, SourceStatus, Status } from "./wire";

export const STATUSES: Status[] = ["pending", "ready", "not_ready", "failed", "draining"];

/** What changed since the last frame was drawn. */
export interface Dirty {
  workers: boolean;
  sources: boolean;
  events: LiveEvent[];
  /** The selected worker's row or history changed. */
  selected: boolean;
}

export interface StoreLimits {
  /** Lines kept in the event log. */
  logSize: number;
  /** Lines of history kept per worker. */
  historyPerWorker: number;
  /** Workers whose history is kept (removed workers' history goes first). */
  historyWorkers: number;
}

/**
 * The page's copy of the fleet: applies the stream's snapshot and deltas and says what changed.
 * Drawing happens later, once per animation frame, from `dirty`.
 */
export class Store {
  readonly workers = new Map<string, LiveWorker>();
  /** Workers that left the fleet, so their history can still be opened. */
  readonly removed = new Map<string, LiveWorker>();
  sources: SourceStatus[] = [];
  readonly log: LiveEvent[] = [];
  private readonly history = new Map<string, LiveEvent[]>();
  selected: string | null = null;
  lastUpdate = 0;
  dropped = 0;
  dirty: Dirty = { workers: false, sources: false, events: [], selected: false };

  constructor(private readonly limits: StoreLimits = { logSize: 1000, historyPerWorker: 200, historyWorkers: 5000 }) {}

  takeDirty(): Dirty {
    const d = this.dirty;
    this.dirty = { workers: false, sources: false, events: [], selected: false };
    return d;
  }

  applySnapshot(s: LiveSnapshot) {
    this.workers.clear();
    for (const w of s.workers) {
      this.workers.set(w.id, w);
      this.removed.delete(w.id);
    }
    this.sources = s.sources;
    // On a reconnect the snapshot repeats events already shown: only newer ones are added.
    const newest = this.log.length ? this.log[this.log.length - 1]!.at : -Infinity;
    this.addEvents(s.events.filter((e) => e.at > newest));
    this.lastUpdate = s.at;
    this.dirty.workers = this.dirty.sources = this.dirty.selected = true;
  }

  applyDelta(d: LiveDelta) {
    for (const w of d.workers) {
      this.workers.set(w.id, w);
      if (w.id === this.selected) this.dirty.selected = true;
    }
    for (const id of d.removed) {
      const w = this.workers.get(id);
      if (w) this.removed.set(id, w);
      this.workers.delete(id);
      if (id === this.selected) this.dirty.selected = true;
    }
    if (d.sources) {
      this.sources = d.sources;
      this.dirty.sources = true;
    }
    if (d.dropped) this.dropped += d.dropped;
    this.addEvents(d.events);
    this.lastUpdate = d.at;
    if (d.workers.length || d.removed.length) this.dirty.workers = true;
  }

  private addEvents(events: LiveEvent[]) {
    if (!events.length) return;
    for (const e of events) {
      this.log.push(e);
      this.remember(e);
      if (e.worker === this.selected) this.dirty.selected = true;
    }
    if (this.log.length > this.limits.logSize) this.log.splice(0, this.log.length - this.limits.logSize);
    this.dirty.events.push(...events);
  }

  private remember(e: LiveEvent) {
    if (e.kind === "source") return;
    let h = this.history.get(e.worker);
    if (!h) {
      if (this.history.size >= this.limits.historyWorkers) this.forgetOneHistory();
      this.history.set(e.worker, (h = []));
    }
    h.push(e);
    if (h.length > this.limits.historyPerWorker) h.splice(0, h.length - this.limits.historyPerWorker);
  }

  private forgetOneHistory() {
    for (const id of this.history.keys()) {
      if (!this.workers.has(id)) {
        this.history.delete(id);
        this.removed.delete(id);
        return;
      }
    }
    const oldest = this.history.keys().next().value;
    if (oldest !== undefined) this.history.delete(oldest);
  }

  historyOf(id: string): readonly LiveEvent[] {
    return this.history.get(id) ?? [];
  }

  worker(id: string): { worker: LiveWorker; gone: boolean } | null {
    const w = this.workers.get(id);
    if (w) return { worker: w, gone: false };
    const r = this.removed.get(id);
    return r ? { worker: r, gone: true } : null;
  }

  select(id: string | null) {
    this.selected = id;
    this.dirty.selected = true;
  }

  counts(): Record<Status, number> {
    const c = { pending: 0, ready: 0, not_ready: 0, failed: 0, draining: 0 } as Record<Status, number>;
    for (const w of this.workers.values()) c[w.status] = (c[w.status] ?? 0) + 1;
    return c;
  }
}
