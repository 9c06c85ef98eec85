import type { SourceStatus } from "@switchboard/discovery";
import type { Fleet, WorkerChange } from "@switchboard/fleet";
import { eventOf, liveWorker, sourceEvent, type LiveDelta, type LiveEvent, type LiveSnapshot } from "./messages";

export interface LiveHubOptions {
  /** Changes are gathered this long before one delta goes out (per worker, the latest wins). */
  batchMs?: number;
  /** A comment line this often keeps idle streams (and proxies in between) open. */
  keepaliveMs?: number;
  /** Events kept for the snapshot of a newly connected page. */
  recentEvents?: number;
  /** Most events in one delta; older ones of a burst are counted as dropped. */
  maxEventsPerDelta?: number;
  /** Chunks a client may fall behind before it is cut (its EventSource reconnects to a fresh snapshot). */
  maxQueuedChunks?: number;
}

interface Client {
  controller: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
}

const encoder = new TextEncoder();

function frame(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * The gateway's live stream: follows the worker index and the discovery sources, and fans one
 * encoded message out to every connected page. Nothing is described or encoded while nobody listens.
 */
export class LiveHub {
  private readonly clients = new Set<Client>();
  private readonly changed = new Set<string>();
  private readonly removed = new Set<string>();
  private pendingEvents: LiveEvent[] = [];
  private droppedEvents = 0;
  private sourcesChanged = false;
  private readonly recent: LiveEvent[] = [];
  private knownSources: Record<string, SourceStatus> = {};
  private seq = 0;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private keepaliveTimer: ReturnType<typeof setInterval> | null = null;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly opts: Required<LiveHubOptions>;

  constructor(
    private readonly fleet: Fleet,
    opts: LiveHubOptions = {},
  ) {
    this.opts = { batchMs: 200, keepaliveMs: 15_000, recentEvents: 300, maxEventsPerDelta: 2_000, maxQueuedChunks: 1_000, ...opts };
    this.unsubscribe.push(fleet.index.onChange((c) => this.onWorkerChange(c)));
    // Source status lives in the root actor's context; a new object there means some source changed.
    const sub = fleet.actor.subscribe({
      next: (snap: { context: { sourceStatus: Record<string, SourceStatus> } }) => this.onSources(snap.context.sourceStatus),
      error: () => {},
    });
    this.unsubscribe.push(() => sub.unsubscribe());
  }

  get clientCount(): number {
    return this.clients.size;
  }

  private note(e: LiveEvent) {
    this.recent.push(e);
    if (this.recent.length > this.opts.recentEvents) this.recent.splice(0, this.recent.length - this.opts.recentEvents);
    if (this.clients.size === 0) return;
    this.pendingEvents.push(e);
    if (this.pendingEvents.length > this.opts.maxEventsPerDelta) {
      const over = this.pendingEvents.length - this.opts.maxEventsPerDelta;
      this.pendingEvents.splice(0, over);
      this.droppedEvents += over;
    }
  }

  private onWorkerChange(c: WorkerChange) {
    const e = eventOf(c);
    if (e) this.note(e);
    if (this.clients.size === 0) return;
    if (c.kind === "removed") {
      this.changed.delete(c.view.id);
      this.removed.add(c.view.id);
    } else {
      this.changed.add(c.view.id);
    }
    this.schedule();
  }

  private onSources(status: Record<string, SourceStatus>) {
    if (status === this.knownSources) return;
    const before = this.knownSources;
    this.knownSources = status;
    for (const s of Object.values(status)) {
      const e = sourceEvent(s, before[s.source]);
      if (e) this.note(e);
    }
    if (this.clients.size === 0) return;
    this.sourcesChanged = true;
    this.schedule();
  }

  private schedule() {
    this.flushTimer ??= setTimeout(() => this.flush(), this.opts.batchMs);
  }

  /** Sends one delta with everything gathered since the last one. */
  flush() {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const delta: LiveDelta = { seq: ++this.seq, at: Date.now(), workers: [], removed: [...this.removed], events: this.pendingEvents };
    for (const id of this.changed) {
      const v = this.fleet.index.get(id);
      if (v) delta.workers.push(liveWorker(v));
    }
    if (this.sourcesChanged) delta.sources = this.fleet.sources();
    if (this.droppedEvents) delta.dropped = this.droppedEvents;
    this.changed.clear();
    this.removed.clear();
    this.pendingEvents = [];
    this.droppedEvents = 0;
    this.sourcesChanged = false;
    if (delta.workers.length || delta.removed.length || delta.sources || delta.events.length || delta.dropped) this.broadcast(frame("delta", delta));
  }

  snapshot(): LiveSnapshot {
    return {
      seq: this.seq,
      at: Date.now(),
      workers: [...this.fleet.index.views.values()].map(liveWorker),
      sources: this.fleet.sources(),
      events: [...this.recent],
    };
  }

  private broadcast(chunk: Uint8Array) {
    for (const c of this.clients) this.send(c, chunk);
  }

  private send(c: Client, chunk: Uint8Array) {
    if (c.closed) return;
    // A page that stopped reading is cut rather than buffered without bound; it reconnects to a snapshot.
    if ((c.controller.desiredSize ?? 0) < -this.opts.maxQueuedChunks) return this.drop(c, true);
    try {
      c.controller.enqueue(chunk);
    } catch {
      this.drop(c, false);
    }
  }

  private drop(c: Client, close: boolean) {
    if (c.closed) return;
    c.closed = true;
    this.clients.delete(c);
    if (close) {
      try {
        c.controller.close();
      } catch {
        // already closed by the runtime
      }
    }
    if (this.clients.size === 0) this.idle();
  }

  private idle() {
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.changed.clear();
    this.removed.clear();
    this.pendingEvents = [];
    this.sourcesChanged = false;
  }

  /** An SSE response: `retry`, then the snapshot at once, then deltas and keepalives until the page goes. */
  stream(signal?: AbortSignal): ReadableStream<Uint8Array> {
    let client: Client;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        client = { controller, closed: false };
        // Changes gathered so far belong to the snapshot the new page gets; send them to the others first.
        if (this.clients.size > 0) this.flush();
        this.clients.add(client);
        controller.enqueue(encoder.encode("retry: 2000\n\n"));
        controller.enqueue(frame("snapshot", this.snapshot()));
        this.keepaliveTimer ??= setInterval(() => this.broadcast(encoder.encode(": keepalive\n\n")), this.opts.keepaliveMs);
        signal?.addEventListener("abort", () => this.drop(client, true), { once: true });
      },
      cancel: () => this.drop(client, false),
    });
  }

  /** Ends every stream (at shutdown: open streams must not hold the server's drain) and stops following. */
  close() {
    for (const c of [...this.clients]) this.drop(c, true);
    this.idle();
    for (const u of this.unsubscribe.splice(0)) u();
  }
}
