/**
 * One attempt at one worker, whatever the transport: plain-HTTP engines through the gateway's own
 * keep-alive pool, anything else (https) through fetch. Both answer the same way: a reply, or an
 * UpstreamError saying how it failed and whether the engine had begun to answer.
 */
import { UpstreamError, upstreamPool, UpstreamPool, type UpstreamReply } from "./upstream-pool";

export { UpstreamError, type UpstreamReply };

export interface Attempt {
  url: string;
  path: string;
  body: BodyInit;
  /** Extra header lines (after Host/Content-Length), each "Name: value\r\n"; fetch gets them as a record. */
  headerLines: string;
  headers: Record<string, string>;
  stream: boolean;
  timeoutMs: number;
  /** The client's abort signal; read only when needed (see UpstreamCall.clientSignal). */
  clientSignal: () => AbortSignal;
}

export function sendUpstream(a: Attempt): Promise<UpstreamReply> {
  if (typeof a.body === "string" && UpstreamPool.handles(a.url)) {
    return upstreamPool.request(a.url, { path: a.path, headers: a.headerLines, body: a.body, stream: a.stream, timeoutMs: a.timeoutMs, clientSignal: a.clientSignal });
  }
  return viaFetch(a);
}

async function viaFetch(a: Attempt): Promise<UpstreamReply> {
  const timeout = AbortSignal.timeout(Math.max(1, a.timeoutMs));
  const cut = new AbortController();
  const client = a.clientSignal();
  const signal = AbortSignal.any([client, timeout, cut.signal]);
  const failure = (err: unknown, answered: boolean) =>
    client.aborted
      ? new UpstreamError("aborted", "the client went away", answered)
      : timeout.aborted
        ? new UpstreamError("timeout", `no complete answer within ${a.timeoutMs} ms`, answered)
        : new UpstreamError(answered ? "reset" : "connect", (err as Error).message ?? String(err), answered);
  let res: Response;
  try {
    res = await fetch(a.url + a.path, { method: "POST", headers: a.headers, body: a.body, signal });
  } catch (err) {
    throw failure(err, false);
  }
  const head = { status: res.status, contentType: res.headers.get("content-type"), contentEncoding: null };
  if (a.stream && res.body) {
    // The body streams on; cancelling it also aborts the fetch so the engine sees the close.
    const reader = res.body.getReader();
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(c) {
          try {
            const { value, done } = await reader.read();
            if (done) c.close();
            else c.enqueue(value);
          } catch (err) {
            c.error(failure(err, true));
          }
        },
        cancel(reason) {
          cut.abort();
          return reader.cancel(reason).catch(() => {});
        },
      },
      { highWaterMark: 0 },
    );
    return { ...head, body: null, stream };
  }
  try {
    return { ...head, body: new Uint8Array(await res.arrayBuffer()), stream: null };
  } catch (err) {
    throw failure(err, true);
  }
}
