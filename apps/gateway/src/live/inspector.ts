import { createInspector, type StatelyInspectionEvent } from "@statelyai/inspect";
import type { AnyActorRef, InspectionEvent } from "xstate";
import type { Server, ServerWebSocket } from "bun";

export interface InspectorOptions {
  host: string;
  port: number;
  /** With --admin-api-key, a viewer connects with `?token=<key>`. */
  guard: (request: Request) => Response | null;
  /** A viewer this far behind (bytes buffered) is disconnected rather than buffered without bound. */
  maxBufferedBytes?: number;
}

type Viewer = ServerWebSocket<unknown>;

/**
 * The Stately inspector protocol over a local WebSocket (`--inspector-port`): the gateway converts
 * its actor system's inspection events with @statelyai/inspect and sends them to every viewer, as
 * the package's own inspector server would relay them. A viewer is `createWebSocketReceiver` (or any
 * tool speaking that protocol); it first gets every live actor, then the stream. Viewers only listen:
 * messages they send are ignored.
 */
export class InspectorRelay {
  private server: Server<unknown> | null = null;
  private readonly viewers = new Set<Viewer>();
  /** While replaying the system to a new viewer, converted events go to that viewer alone. */
  private replayTo: Viewer | null = null;
  private root: AnyActorRef | null = null;
  private readonly inspector = createInspector(
    {
      send: (event: StatelyInspectionEvent) => this.deliver(event),
      start: () => {},
      stop: () => {},
    },
    { serializationDepthLimit: 12 },
  );

  constructor(private readonly opts: InspectorOptions) {}

  /** The xstate `inspect` callback; costs nothing while no viewer is connected. */
  readonly inspect = (event: InspectionEvent) => {
    if (this.viewers.size > 0) this.inspector.inspect.next?.(event);
  };

  private deliver(event: StatelyInspectionEvent) {
    let text: string;
    try {
      text = JSON.stringify(event);
    } catch {
      return; // something in a snapshot does not serialize: that event is not shown
    }
    const targets = this.replayTo ? [this.replayTo] : this.viewers;
    const limit = this.opts.maxBufferedBytes ?? 16 * 1024 * 1024;
    for (const v of targets) {
      if (v.getBufferedAmount() > limit) {
        v.close(1013, "viewer too slow");
        continue;
      }
      v.send(text);
    }
  }

  /** Every live actor of the system, parents before children, as `@xstate.actor` events. */
  private replay(viewer: Viewer) {
    if (!this.root) return;
    this.replayTo = viewer;
    try {
      const walk = (ref: AnyActorRef) => {
        const snap = ref.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> };
        this.inspector.actor(ref, snap as never);
        for (const child of Object.values(snap.children ?? {})) if (child) walk(child);
      };
      walk(this.root);
    } finally {
      this.replayTo = null;
    }
  }

  /** Starts listening; `root` is the actor system's root, replayed to each new viewer. */
  listen(root: AnyActorRef): void {
    this.root = root;
    this.server = Bun.serve({
      hostname: this.opts.host,
      port: this.opts.port,
      fetch: (request, server) => {
        const denied = this.opts.guard(request);
        if (denied) return denied;
        if (server.upgrade(request, { data: undefined })) return undefined;
        return new Response("This is a Stately inspector WebSocket: connect with createWebSocketReceiver.\n", { status: 426 });
      },
      websocket: {
        open: (ws) => {
          this.viewers.add(ws);
          this.replay(ws);
        },
        message: () => {},
        close: (ws) => {
          this.viewers.delete(ws);
        },
      },
    });
  }

  get port(): number | undefined {
    return this.server?.port;
  }

  get url(): string | undefined {
    if (!this.server) return undefined;
    const host = this.opts.host === "0.0.0.0" ? "127.0.0.1" : this.opts.host;
    return `ws://${host}:${this.server.port}`;
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  stop(): void {
    for (const v of this.viewers) v.close(1001, "gateway stopping");
    this.viewers.clear();
    this.server?.stop(true);
    this.server = null;
  }
}
