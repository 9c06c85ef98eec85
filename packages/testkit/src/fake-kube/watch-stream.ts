import type { ServerResponse } from "node:http";
import type { KubeObject } from "../kube-objects.ts";
import type { Matcher } from "./selectors.ts";
import { type Change, type ChangeType, type FakeResource, RESOURCE_KINDS } from "./store.ts";

/** How event writes are cut into pieces, to exercise lines split across chunks. */
export interface Chunking {
  pieces: number;
  delayMs: number;
}

export interface WatchFilter {
  resource: FakeResource;
  namespace?: string;
  labels: Matcher;
  fields: Matcher;
}

/** One open watch response: filters changes the way the API server's watch cache does. */
export class WatchStream {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    readonly filter: WatchFilter,
    readonly bookmarks: boolean,
    private readonly chunking: () => Chunking | null,
    private readonly onClose: () => void,
  ) {
    res.on("close", () => this.markClosed());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  private matches(obj: KubeObject | undefined): boolean {
    if (!obj) return false;
    const f = this.filter;
    if (f.namespace && obj.metadata.namespace !== f.namespace) return false;
    return f.labels(obj) && f.fields(obj);
  }

  /**
   * An object moving into the selection is ADDED, out of it DELETED (with its previous
   * content at the new resourceVersion), as a real watch reports it.
   */
  eventFor(c: Change): { type: ChangeType; object: KubeObject } | null {
    if (c.resource !== this.filter.resource) return null;
    const now = c.type !== "DELETED" && this.matches(c.object);
    const before = c.type !== "ADDED" && this.matches(c.prev);
    if (c.type === "DELETED") return before ? { type: "DELETED", object: c.object } : null;
    if (now && before) return { type: "MODIFIED", object: c.object };
    if (now) return { type: "ADDED", object: c.object };
    if (before) {
      const gone = structuredClone(c.prev!);
      gone.metadata.resourceVersion = c.object.metadata.resourceVersion;
      return { type: "DELETED", object: gone };
    }
    return null;
  }

  sendChange(c: Change): void {
    const ev = this.eventFor(c);
    if (ev) this.sendEvent(ev.type, ev.object);
  }

  sendEvent(type: string, object: unknown): void {
    this.write(`${JSON.stringify({ type, object })}\n`);
  }

  sendBookmark(rv: number): void {
    if (!this.bookmarks) return;
    const { kind, apiVersion } = RESOURCE_KINDS[this.filter.resource];
    this.sendEvent("BOOKMARK", { kind, apiVersion, metadata: { resourceVersion: String(rv) } });
  }

  /** Writes text as-is, in `pieces` parts `delayMs` apart when asked (else the chunking setting). */
  write(text: string, cut?: Chunking): void {
    const how = cut ?? this.chunking();
    this.chain = this.chain.then(async () => {
      if (this.closed) return;
      if (!how || how.pieces <= 1) {
        this.res.write(text);
        return;
      }
      // Cut bytes, not characters: a piece may end inside a multi-byte character.
      const bytes = Buffer.from(text);
      const size = Math.ceil(bytes.length / how.pieces);
      for (let i = 0; i < bytes.length && !this.closed; i += size) {
        this.res.write(bytes.subarray(i, i + size));
        if (i + size < bytes.length) await Bun.sleep(how.delayMs);
      }
    });
  }

  /** Ends the stream cleanly after what is queued (server timeout, ERROR event). */
  end(): void {
    this.chain = this.chain.then(() => {
      if (!this.closed) this.res.end();
      this.markClosed();
    });
  }

  /** Cuts the connection without ending the chunked body: a dropped watch. */
  drop(): void {
    this.markClosed();
    this.res.socket?.destroy();
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}
