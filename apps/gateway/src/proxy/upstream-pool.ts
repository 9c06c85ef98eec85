/**
 * Keep-alive HTTP/1.1 connections to plain-HTTP engines, on Bun's own TCP sockets in the gateway's
 * event loop. fetch() hands every request to a separate HTTP-client thread and back; on the hot
 * path that hop cost more than the whole proxying (see bench/proxy). One connection carries one
 * request at a time; idle ones wait per engine address (most recent first) and do not keep the
 * process alive.
 */
import type { Socket, SocketHandler } from "bun";
import { ProtocolError, ResponseParser, type ParserSink, type ResponseHead } from "./http1";

export type UpstreamFailure = "connect" | "reset" | "timeout" | "aborted" | "protocol";

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailure,
    message: string,
    /** Whether the engine's answer had begun (its head arrived): then no other worker may be tried. */
    readonly answered = false,
  ) {
    super(message);
  }
}

export interface UpstreamCall {
  /** Path after the worker URL, e.g. /v1/chat/completions. */
  path: string;
  /** Header lines beyond Host and Content-Length, each ending in \r\n. */
  headers: string;
  body: string;
  /** Hand the reply over at its head and stream a body of unknown length (SSE); else read it whole first. */
  stream: boolean;
  /** Bound on the whole exchange, body included; expiry fails it with kind "timeout". */
  timeoutMs: number;
  /**
   * The client's abort signal, asked for lazily: an exchange still running after a second starts
   * watching it (the client gone → cut, kind "aborted", and the engine sees the close). Short ones
   * never create it, which saves a signal and two listener calls per request.
   */
  clientSignal?: () => AbortSignal;
}

export interface UpstreamReply {
  status: number;
  contentType: string | null;
  contentEncoding: string | null;
  /** The whole body, when it was read before the reply was handed over. */
  body: Uint8Array | null;
  /** Otherwise the body as it arrives; cancelling it closes the connection. */
  stream: ReadableStream<Uint8Array> | null;
}

/** Idle connections kept per engine address; more are closed when they come back. */
const MAX_IDLE_PER_ORIGIN = 64;
/** An idle connection older than this is closed (nginx's upstream keepalive_timeout default). */
const IDLE_TIMEOUT_MS = 60_000;
/** How long an exchange runs before it watches for the client going away. */
const CANCEL_WATCH_MS = 1_000;
const EMPTY = new Uint8Array(0);

class Origin {
  readonly idle: Conn[] = [];
  /** Exchanges under way: an origin with some is never dropped from the pool's map. */
  active = 0;
  constructor(
    readonly hostname: string,
    readonly port: number,
    /** "POST <base>" and "HTTP/1.1\r\nHost: …\r\n" around each path. */
    readonly requestLineStart: string,
    readonly hostLine: string,
  ) {}
}

class Conn {
  socket: Socket<Conn> | null = null;
  exchange: Exchange | null = null;
  /** Requests completed on this connection: a reused one may meet a close the engine sent while it idled. */
  uses = 0;
  idleSince = 0;
  closed = false;
  /** Bytes of the request the socket has not taken yet (written on drain). */
  unsent: Uint8Array | null = null;

  constructor(
    readonly pool: UpstreamPool,
    readonly origin: Origin,
  ) {}

  write(payload: string) {
    const s = this.socket!;
    const n = s.write(payload);
    const total = Buffer.byteLength(payload);
    if (n < total) this.unsent = Buffer.from(payload).subarray(Math.max(0, n));
  }

  drain() {
    if (!this.unsent || !this.socket) return;
    const n = this.socket.write(this.unsent);
    this.unsent = n >= this.unsent.length ? null : this.unsent.subarray(Math.max(0, n));
  }

  /** Back to the idle list, or closed when the answer said so or the list is full. */
  release() {
    this.exchange = null;
    this.uses++;
    const s = this.socket;
    if (this.closed || !s) return;
    if (this.origin.idle.length >= MAX_IDLE_PER_ORIGIN) return this.destroy();
    s.unref();
    this.idleSince = performance.now();
    this.origin.idle.push(this);
    this.pool.noteIdle();
  }

  destroy() {
    if (this.closed) return;
    this.closed = true;
    this.forgetIdle();
    this.socket?.terminate();
  }

  forgetIdle() {
    const i = this.origin.idle.indexOf(this);
    if (i >= 0) this.origin.idle.splice(i, 1);
  }

  /** The socket closed or failed: whatever exchange it carried ends here, or moves on. */
  lost(reason: string) {
    const wasClosed = this.closed;
    this.closed = true;
    this.forgetIdle();
    const ex = this.exchange;
    this.exchange = null;
    if (!ex || wasClosed) return;
    ex.connectionLost(this, reason);
  }
}

/** One request and its answer, possibly moved once to a fresh connection. */
class Exchange implements ParserSink {
  private readonly parser: ResponseParser;
  private answer: ResponseHead | null = null;
  private pieces: Uint8Array[] = [];
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private deadline = 0;
  private watched: AbortSignal | null = null;
  private onAbort: (() => void) | null = null;
  private settled = false;
  private ended = false;
  private retried = false;
  private conn: Conn | null = null;

  constructor(
    private readonly origin: Origin,
    private readonly call: UpstreamCall,
    private readonly payload: string,
    private readonly resolve: (r: UpstreamReply) => void,
    private readonly reject: (e: UpstreamError) => void,
  ) {
    this.parser = new ResponseParser(this);
  }

  start(pool: UpstreamPool) {
    this.origin.active++;
    this.deadline = performance.now() + this.call.timeoutMs;
    this.timer = setTimeout(tick, Math.min(CANCEL_WATCH_MS, this.call.timeoutMs), this);
    this.send(pool, this.origin.idle.pop() ?? null);
  }

  /** The one timer of an exchange: first the start of the client watch, then the deadline. */
  tick() {
    if (this.ended) return;
    const left = this.deadline - performance.now();
    if (left <= 0) return this.fail(new UpstreamError("timeout", `no complete answer within ${this.call.timeoutMs} ms`));
    if (!this.watched && this.call.clientSignal) {
      const signal = (this.watched = this.call.clientSignal());
      this.onAbort = () => this.fail(new UpstreamError("aborted", "the client went away"));
      if (signal.aborted) return this.onAbort();
      signal.addEventListener("abort", this.onAbort);
    }
    this.timer = setTimeout(tick, left, this);
  }

  private send(pool: UpstreamPool, reused: Conn | null) {
    if (reused) return this.attach(reused);
    const conn = new Conn(pool, this.origin);
    Bun.connect<Conn>({ hostname: this.origin.hostname, port: this.origin.port, data: conn, socket: HANDLERS }).then(
      (socket) => {
        conn.socket = socket;
        if (this.ended) return conn.destroy(); // timed out or cancelled while connecting
        this.attach(conn);
      },
      (err: Error) => {
        conn.closed = true;
        this.fail(new UpstreamError("connect", err.message || String(err)));
      },
    );
  }

  private attach(conn: Conn) {
    this.conn = conn;
    conn.exchange = this;
    conn.socket!.ref();
    conn.write(this.payload);
  }

  /** The connection went away before the answer was complete. */
  connectionLost(conn: Conn, reason: string) {
    if (this.ended) return;
    if (this.parser.endsAtClose) {
      this.parser.close();
      return;
    }
    // A kept-alive connection the engine closed while it idled: nothing was answered, so the
    // request goes once more on a fresh connection (the engine never saw it complete).
    if (!this.parser.started && conn.uses > 0 && !this.retried) {
      this.retried = true;
      this.send(conn.pool, null);
      return;
    }
    this.fail(new UpstreamError(this.parser.started ? "reset" : "connect", `connection closed by the engine (${reason})`));
  }

  /** Bytes from the socket. */
  feed(chunk: Uint8Array) {
    const conn = this.conn!;
    try {
      this.parser.feed(chunk);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.fail(new UpstreamError("protocol", e.message));
      return;
    }
    if (this.parser.done) {
      if (this.parser.reusable) conn.release();
      else this.dropConn();
    }
  }

  head(h: ResponseHead) {
    this.answer = h;
    // A body of unknown length is streamed when the caller asked for a stream; anything else is read whole.
    if (!this.call.stream || h.bodyLength !== null) return;
    this.settled = true;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
        },
        pull: () => {
          this.conn?.socket?.resume();
        },
        cancel: () => {
          this.finish();
          this.dropConn();
        },
      },
      { highWaterMark: 16 },
    );
    this.resolve({ status: h.status, contentType: h.contentType, contentEncoding: h.contentEncoding, body: null, stream });
  }

  data(bytes: Uint8Array) {
    const c = this.controller;
    if (!c) {
      this.pieces.push(bytes);
      return;
    }
    c.enqueue(bytes);
    if ((c.desiredSize ?? 1) <= 0) this.conn?.socket?.pause();
  }

  end() {
    this.finish();
    if (this.controller) {
      this.controller.close();
      return;
    }
    const h = this.answer!;
    this.settled = true;
    const body = this.pieces.length === 1 ? this.pieces[0]! : this.pieces.length === 0 ? EMPTY : Buffer.concat(this.pieces);
    this.pieces = [];
    this.resolve({ status: h.status, contentType: h.contentType, contentEncoding: h.contentEncoding, body, stream: null });
  }

  private finish() {
    if (!this.ended) this.origin.active--;
    this.ended = true;
    clearTimeout(this.timer);
    if (this.watched && this.onAbort) this.watched.removeEventListener("abort", this.onAbort);
  }

  /** The connection can carry nothing more of this exchange: it is closed, never reused. */
  private dropConn() {
    const conn = this.conn;
    if (!conn) return;
    if (conn.exchange === this) conn.exchange = null;
    conn.destroy();
  }

  fail(failure: UpstreamError) {
    if (this.ended) return;
    const err = this.answer ? new UpstreamError(failure.kind, failure.message, true) : failure;
    this.finish();
    this.dropConn();
    if (!this.settled) {
      this.settled = true;
      this.reject(err);
    } else this.controller?.error(err);
  }
}

function tick(ex: Exchange) {
  ex.tick();
}

const HANDLERS: SocketHandler<Conn> = {
  data(socket, chunk) {
    const ex = socket.data.exchange;
    if (ex) ex.feed(chunk);
    else socket.data.destroy(); // an idle connection has nothing to say
  },
  drain(socket) {
    socket.data.drain();
  },
  end(socket) {
    socket.data.lost("the engine closed the connection");
  },
  close(socket, err) {
    socket.data.lost(err ? err.message : "closed");
  },
  error(socket, err) {
    socket.data.lost(err.message);
  },
};

function originOf(url: string): Origin {
  const u = new URL(url);
  const port = u.port ? Number(u.port) : 80;
  const hostname = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
  const base = u.pathname.replace(/\/+$/, "");
  return new Origin(hostname, port, `POST ${base}`, ` HTTP/1.1\r\nHost: ${u.host}\r\n`);
}

/** Connections by engine URL. One pool serves every gateway in the process. */
export class UpstreamPool {
  private readonly origins = new Map<string, Origin>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  /** Only plain http:// engines go through the pool; https and the rest use fetch. */
  static handles(url: string): boolean {
    return url.startsWith("http://");
  }

  /** Sends `call` to the engine at `url` (an http:// worker URL, possibly with a base path). */
  request(url: string, call: UpstreamCall): Promise<UpstreamReply> {
    let origin = this.origins.get(url);
    if (!origin) this.origins.set(url, (origin = originOf(url)));
    const payload = `${origin.requestLineStart}${call.path}${origin.hostLine}Content-Length: ${Buffer.byteLength(call.body)}\r\n${call.headers}\r\n${call.body}`;
    return new Promise<UpstreamReply>((resolve, reject) => new Exchange(origin, call, payload, resolve, reject).start(this));
  }

  /** Idle connections right now, for tests and the benchmark. */
  idleCount(url?: string): number {
    if (url !== undefined) return this.origins.get(url)?.idle.length ?? 0;
    let n = 0;
    for (const o of this.origins.values()) n += o.idle.length;
    return n;
  }

  /** Closes idle connections (all, or those to one engine). */
  closeIdle(url?: string) {
    for (const [key, o] of this.origins) {
      if (url !== undefined && key !== url) continue;
      for (const c of [...o.idle]) c.destroy();
    }
  }

  noteIdle() {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.sweep(), 5_000);
    this.sweeper.unref?.();
  }

  private sweep() {
    const now = performance.now();
    let left = 0;
    for (const [key, o] of this.origins) {
      // Oldest first: the list is used from its end.
      while (o.idle.length && now - o.idle[0]!.idleSince > IDLE_TIMEOUT_MS) o.idle[0]!.destroy();
      left += o.idle.length;
      if (o.idle.length === 0 && o.active === 0) this.origins.delete(key);
    }
    if (left === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}

export const upstreamPool = new UpstreamPool();
