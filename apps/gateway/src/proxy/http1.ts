/**
 * An incremental HTTP/1.1 response parser for the upstream pool: status line and the few headers
 * the gateway uses, then the body by Content-Length, chunked coding, or until the connection
 * closes. Body bytes are handed on as views of the socket's buffers (Bun gives each read a fresh
 * buffer), so a small answer that arrives in one read is never copied.
 */

export interface ResponseHead {
  status: number;
  contentType: string | null;
  contentEncoding: string | null;
  /** Whether the connection can carry another request after this answer. */
  keepAlive: boolean;
  /** Body bytes to come when known in advance (Content-Length, or 0); null for chunked or until-close. */
  bodyLength: number | null;
}

export interface ParserSink {
  head(h: ResponseHead): void;
  data(bytes: Uint8Array): void;
  end(): void;
}

export class ProtocolError extends Error {}

const MAX_HEAD = 64 * 1024;
const MAX_CHUNK_LINE = 4096;
const CR = 13;
const LF = 10;

const enum Body {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

/** Index of "\r\n\r\n" in `b` from `from`, or -1. */
function headEnd(b: Uint8Array, from: number): number {
  for (let i = Math.max(0, from); i + 3 < b.length; i++) {
    if (b[i] === CR && b[i + 1] === LF && b[i + 2] === CR && b[i + 3] === LF) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

const latin1 = new TextDecoder("latin1");

const isDigit = (c: number) => c >= 48 && c <= 57;

/** Where the line starting at `from` ends (its CR), or `end`. */
function lineEnd(b: Uint8Array, from: number, end: number): number {
  for (let i = from; i < end; i++) if (b[i] === CR && b[i + 1] === LF) return i;
  return end;
}

const WANTED = ["content-length", "transfer-encoding", "connection", "content-type", "content-encoding"] as const;
type Wanted = (typeof WANTED)[number];

/** The header's name when it is one the gateway reads (case-insensitive), else null. */
function headerName(b: Uint8Array, from: number, to: number): Wanted | null {
  let e = to;
  while (e > from && (b[e - 1] === 32 || b[e - 1] === 9)) e--;
  const len = e - from;
  outer: for (const w of WANTED) {
    if (w.length !== len) continue;
    for (let i = 0; i < len; i++) {
      const want = w.charCodeAt(i);
      const got = b[from + i]!;
      if (want === 45 ? got !== 45 : (got | 0x20) !== want) continue outer;
    }
    return w;
  }
  return null;
}

/** One parser per response; `feed` throws ProtocolError on a malformed answer. */
export class ResponseParser {
  private state = Body.Head;
  private pending: Uint8Array | null = null;
  private remaining = 0;
  private line = "";
  private keepAlive = true;

  constructor(
    private readonly sink: ParserSink,
    /** A HEAD request or similar whose answer has no body regardless of its headers. */
    private readonly noBody = false,
  ) {}

  get done(): boolean {
    return this.state === Body.Done;
  }

  /** Whether the body runs until the connection closes (then `close` ends it). */
  get endsAtClose(): boolean {
    return this.state === Body.UntilClose;
  }

  /** Whether any byte of the answer has been seen. */
  get started(): boolean {
    return this.state !== Body.Head || this.pending !== null;
  }

  /** The connection closed: the end of an until-close body, an error for anything else unfinished. */
  close(): void {
    if (this.state === Body.UntilClose) {
      this.state = Body.Done;
      this.sink.end();
      return;
    }
    if (this.state !== Body.Done) throw new ProtocolError("connection closed before the answer was complete");
  }

  feed(chunk: Uint8Array): void {
    let b = chunk;
    let at = 0;
    while (at < b.length) {
      switch (this.state) {
        case Body.Head: {
          const prior = this.pending ? this.pending.length : 0;
          if (this.pending) {
            b = concat(this.pending, b.subarray(at));
            at = 0;
            this.pending = null;
          }
          const end = headEnd(b, Math.max(at, prior - 3));
          if (end < 0) {
            if (b.length - at > MAX_HEAD) throw new ProtocolError("response head too large");
            this.pending = b.subarray(at);
            return;
          }
          const informational = this.parseHead(b, at, end);
          at = end + 4;
          if (informational) continue; // 1xx: the real answer follows
          break;
        }
        case Body.Length: {
          const n = Math.min(this.remaining, b.length - at);
          this.sink.data(b.subarray(at, at + n));
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) this.finish();
          break;
        }
        case Body.ChunkSize:
        case Body.Trailers: {
          const nl = b.indexOf(LF, at);
          const piece = latin1.decode(b.subarray(at, nl < 0 ? b.length : nl));
          this.line += piece;
          if (this.line.length > MAX_CHUNK_LINE) throw new ProtocolError("chunk line too long");
          if (nl < 0) return;
          at = nl + 1;
          const line = this.line.endsWith("\r") ? this.line.slice(0, -1) : this.line;
          this.line = "";
          if (this.state === Body.Trailers) {
            if (line === "") this.finish();
            break;
          }
          const hex = line.split(";", 1)[0]!.trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new ProtocolError(`bad chunk size '${line.slice(0, 40)}'`);
          const size = Number.parseInt(hex, 16);
          if (size === 0) this.state = Body.Trailers;
          else {
            this.remaining = size;
            this.state = Body.ChunkData;
          }
          break;
        }
        case Body.ChunkData: {
          const n = Math.min(this.remaining, b.length - at);
          this.sink.data(b.subarray(at, at + n));
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            this.state = Body.ChunkDataEnd;
            this.remaining = 2;
          }
          break;
        }
        case Body.ChunkDataEnd: {
          // The CRLF after a chunk's data (it may be split across reads).
          const c = b[at++];
          if (c !== (this.remaining === 2 ? CR : LF)) throw new ProtocolError("missing CRLF after chunk data");
          if (--this.remaining === 0) this.state = Body.ChunkSize;
          break;
        }
        case Body.UntilClose:
          this.sink.data(at === 0 ? b : b.subarray(at));
          return;
        case Body.Done:
          // Bytes after a complete answer: the server sent something we did not ask for.
          throw new ProtocolError("unexpected bytes after the response");
      }
    }
  }

  private finish() {
    this.state = Body.Done;
    this.sink.end();
  }

  /** Parses a head; returns true for a 1xx interim answer. Works on bytes: only wanted values are decoded. */
  private parseHead(b: Uint8Array, start: number, end: number): boolean {
    // "HTTP/1.x SSS" then a space or the end of the line.
    const ok =
      end - start >= 12 &&
      b[start] === 72 && b[start + 1] === 84 && b[start + 2] === 84 && b[start + 3] === 80 && b[start + 4] === 47 &&
      b[start + 5] === 49 && b[start + 6] === 46 && (b[start + 7] === 48 || b[start + 7] === 49) && b[start + 8] === 32 &&
      isDigit(b[start + 9]!) && isDigit(b[start + 10]!) && isDigit(b[start + 11]!) &&
      (end - start === 12 || b[start + 12] === 32 || b[start + 12] === CR);
    if (!ok) throw new ProtocolError(`bad status line '${latin1.decode(b.subarray(start, Math.min(end, start + 80)))}'`);
    const http10 = b[start + 7] === 48;
    const status = (b[start + 9]! - 48) * 100 + (b[start + 10]! - 48) * 10 + (b[start + 11]! - 48);
    let length = -1;
    let chunked = false;
    let connection = "";
    let contentType: string | null = null;
    let contentEncoding: string | null = null;
    let line = lineEnd(b, start, end) + 2;
    while (line < end) {
      const stop = lineEnd(b, line, end);
      let colon = line;
      while (colon < stop && b[colon] !== 58) colon++;
      if (colon === line || colon === stop) throw new ProtocolError("bad header line");
      const name = headerName(b, line, colon);
      if (name !== null) {
        const value = latin1.decode(b.subarray(colon + 1, stop)).trim();
        switch (name) {
          case "content-length": {
            if (!/^\d+$/.test(value)) throw new ProtocolError("bad content-length");
            const n = Number(value);
            if (length >= 0 && length !== n) throw new ProtocolError("conflicting content-length");
            length = n;
            break;
          }
          case "transfer-encoding":
            chunked = value.toLowerCase().split(",").pop()!.trim() === "chunked";
            if (!chunked) throw new ProtocolError(`unsupported transfer-encoding '${value}'`);
            break;
          case "connection":
            connection = value.toLowerCase();
            break;
          case "content-type":
            contentType = value;
            break;
          case "content-encoding":
            contentEncoding = value;
            break;
        }
      }
      line = stop + 2;
    }
    if (status < 200) return true;
    this.keepAlive = http10 ? connection.includes("keep-alive") : !connection.includes("close");
    const empty = this.noBody || status === 204 || status === 304;
    if (!empty && !chunked && length < 0) this.keepAlive = false; // the body ends when the connection does
    this.sink.head({ status, contentType, contentEncoding, keepAlive: this.keepAlive, bodyLength: empty ? 0 : chunked ? null : length >= 0 ? length : null });
    if (empty) this.finish();
    else if (chunked) this.state = Body.ChunkSize;
    else if (length >= 0) {
      this.remaining = length;
      if (length === 0) this.finish();
      else this.state = Body.Length;
    } else this.state = Body.UntilClose;
    return false;
  }

  /** Whether the connection may be reused once the answer is done. */
  get reusable(): boolean {
    return this.keepAlive && this.state === Body.Done;
  }
}
