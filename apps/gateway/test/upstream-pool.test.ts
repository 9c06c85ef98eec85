/** The gateway's own keep-alive HTTP/1.1 client, against real loopback servers (Bun.serve and raw TCP). */
import { afterAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { ResponseParser, type ResponseHead } from "../src/proxy/http1";
import { UpstreamError, UpstreamPool } from "../src/proxy/upstream-pool";
import { waitFor } from "./harness";

const closers: (() => void)[] = [];
afterAll(() => closers.forEach((c) => c()));

const call = (over: Partial<Parameters<UpstreamPool["request"]>[1]> = {}) => ({ path: "/echo", headers: "Content-Type: application/json\r\n", body: '{"a":1}', stream: false, timeoutMs: 5000, ...over });
const text = (b: Uint8Array | null) => new TextDecoder().decode(b ?? new Uint8Array());

/** A raw TCP server whose answer to the n-th request on a connection is up to `onRequest`. */
function rawServer(onRequest: (sock: { write(s: string | Uint8Array): void; end(): void }, n: number, request: string) => void) {
  let connections = 0;
  const received: string[] = [];
  const server: TCPSocketListener<{ buf: string; n: number }> = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        connections++;
        s.data = { buf: "", n: 0 };
      },
      data(s, chunk) {
        s.data.buf += chunk.toString("latin1");
        for (;;) {
          const he = s.data.buf.indexOf("\r\n\r\n");
          if (he < 0) return;
          const len = Number(/content-length: *(\d+)/i.exec(s.data.buf.slice(0, he))?.[1] ?? 0);
          if (s.data.buf.length < he + 4 + len) return;
          const req = s.data.buf.slice(0, he + 4 + len);
          s.data.buf = s.data.buf.slice(he + 4 + len);
          received.push(req);
          onRequest({ write: (x) => s.write(x), end: () => s.end() }, s.data.n++, req);
        }
      },
    },
  });
  closers.push(() => server.stop(true));
  return { url: `http://127.0.0.1:${server.port}`, connections: () => connections, received };
}

describe("upstream pool", () => {
  test("keeps connections alive: sequential requests share one connection; the request carries host, length and headers", async () => {
    const seen: { port: number; host: string | null; len: string | null; type: string | null; body: string }[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req, srv) {
        seen.push({ port: srv.requestIP(req)!.port, host: req.headers.get("host"), len: req.headers.get("content-length"), type: req.headers.get("content-type"), body: await req.text() });
        return Response.json({ ok: true });
      },
    });
    closers.push(() => server.stop(true));
    const pool = new UpstreamPool();
    const url = `http://127.0.0.1:${server.port}`;
    for (let i = 0; i < 5; i++) {
      const r = await pool.request(url, call({ body: `{"i":${i},"s":"é"}` }));
      expect(r.status).toBe(200);
      expect(JSON.parse(text(r.body))).toEqual({ ok: true });
      expect(r.contentType).toContain("application/json");
    }
    expect(new Set(seen.map((s) => s.port)).size).toBe(1);
    expect(seen[0]!.host).toBe(`127.0.0.1:${server.port}`);
    expect(seen[4]!.body).toBe('{"i":4,"s":"é"}');
    expect(seen[4]!.len).toBe(String(Buffer.byteLength('{"i":4,"s":"é"}')));
    expect(seen[0]!.type).toBe("application/json");
    expect(pool.idleCount(url)).toBe(1);
  });

  test("a kept-alive connection the engine dropped without answering is retried once on a fresh one", async () => {
    const srv = rawServer((s, n) => {
      if (n === 0) s.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      else s.end(); // the second request on the same connection meets a close
    });
    const pool = new UpstreamPool();
    expect(text((await pool.request(srv.url, call())).body)).toBe("ok");
    expect(text((await pool.request(srv.url, call())).body)).toBe("ok");
    expect(srv.connections()).toBe(2);
    expect(srv.received.length).toBe(3);
  });

  test("a fresh connection closed without an answer is a connect failure, not retried", async () => {
    const srv = rawServer((s) => s.end());
    const pool = new UpstreamPool();
    const err = await pool.request(srv.url, call()).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe("connect");
    expect((err as UpstreamError).answered).toBe(false);
    expect(srv.received.length).toBe(1);
  });

  test("chunked answers split across reads: buffered whole, or streamed in order", async () => {
    const pieces = ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n", "5\r\nhel", "lo\r\n", "6;ext=1\r\n world\r", "\n0\r\n", "X-Trailer: 1\r\n\r\n"];
    const srv = rawServer(async (s) => {
      for (const p of pieces) {
        s.write(p);
        await Bun.sleep(5);
      }
    });
    const pool = new UpstreamPool();
    expect(text((await pool.request(srv.url, call())).body)).toBe("hello world");
    const r = await pool.request(srv.url, call({ stream: true }));
    expect(r.body).toBeNull();
    expect(r.contentType).toBe("text/event-stream");
    expect(await new Response(r.stream).text()).toBe("hello world");
    await waitFor(() => pool.idleCount(srv.url) === 1, 2000, "connection back in the pool");
    expect(srv.connections()).toBe(1);
  });

  test("a body that ends with the connection, and Connection: close, are read whole and never reused", async () => {
    const srv = rawServer((s, _n, req) => {
      if (req.includes("/until-close")) {
        s.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npartial ");
        setTimeout(() => {
          s.write("and the rest");
          s.end();
        }, 20);
      } else s.write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye");
    });
    const pool = new UpstreamPool();
    expect(text((await pool.request(srv.url, call({ path: "/until-close" }))).body)).toBe("partial and the rest");
    expect(text((await pool.request(srv.url, call({ path: "/close" }))).body)).toBe("bye");
    expect(pool.idleCount(srv.url)).toBe(0);
    expect(srv.connections()).toBe(2);
  });

  test("an engine that never answers is cut at the timeout, and the connection is closed", async () => {
    let closed = 0;
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, close: () => void closed++ } });
    closers.push(() => server.stop(true));
    const pool = new UpstreamPool();
    const t0 = performance.now();
    const err = (await pool.request(`http://127.0.0.1:${server.port}`, call({ timeoutMs: 300 })).catch((e) => e)) as UpstreamError;
    expect(err.kind).toBe("timeout");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(performance.now() - t0).toBeLessThan(3000);
    await waitFor(() => closed === 1, 3000, "server saw the close");
  });

  test("a client that goes away cuts the exchange (watched after the first second) and the engine sees the close", async () => {
    let closed = 0;
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, close: () => void closed++ } });
    closers.push(() => server.stop(true));
    const pool = new UpstreamPool();
    const client = new AbortController();
    let asked = 0;
    setTimeout(() => client.abort(), 50);
    const err = (await pool
      .request(`http://127.0.0.1:${server.port}`, call({ timeoutMs: 20_000, clientSignal: () => (asked++, client.signal) }))
      .catch((e) => e)) as UpstreamError;
    expect(err.kind).toBe("aborted");
    expect(asked).toBe(1);
    await waitFor(() => closed === 1, 3000, "server saw the close");
  });

  test("a short exchange never asks for the client's signal", async () => {
    const srv = rawServer((s) => s.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    let asked = 0;
    const r = await new UpstreamPool().request(srv.url, call({ clientSignal: () => (asked++, new AbortController().signal) }));
    expect(r.status).toBe(200);
    expect(text(r.body)).toBe("");
    expect(asked).toBe(0);
  });

  test("a large request body goes out whole (partial writes finish on drain)", async () => {
    let got = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, maxRequestBodySize: 64 << 20, fetch: async (req) => new Response(String((got = (await req.arrayBuffer()).byteLength))) });
    closers.push(() => server.stop(true));
    const big = "x".repeat(16 << 20);
    const r = await new UpstreamPool().request(`http://127.0.0.1:${server.port}`, call({ body: big, timeoutMs: 20_000 }));
    expect(text(r.body)).toBe(String(big.length));
    expect(got).toBe(big.length);
  });

  test("cancelling a streamed body closes the connection, so the engine sees the cancel", async () => {
    let closed = 0;
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(s) {
          s.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
        },
        close: () => void closed++,
      },
    });
    closers.push(() => server.stop(true));
    const pool = new UpstreamPool();
    const url = `http://127.0.0.1:${server.port}`;
    const r = await pool.request(url, call({ stream: true }));
    const reader = r.stream!.getReader();
    expect(text((await reader.read()).value!)).toBe("abc");
    await reader.cancel();
    await waitFor(() => closed === 1, 3000, "server saw the close");
    expect(pool.idleCount(url)).toBe(0);
  });

  test("refused connections and malformed answers fail with their kind", async () => {
    const port = (() => {
      const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      const p = s.port;
      s.stop(true);
      return p;
    })();
    const pool = new UpstreamPool();
    expect(((await pool.request(`http://127.0.0.1:${port}`, call()).catch((e) => e)) as UpstreamError).kind).toBe("connect");
    const srv = rawServer((s) => s.write("SMTP ready\r\n\r\n"));
    expect(((await pool.request(srv.url, call()).catch((e) => e)) as UpstreamError).kind).toBe("protocol");
    const mid = rawServer((s) => {
      s.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
      s.end();
    });
    const err = (await pool.request(mid.url, call()).catch((e) => e)) as UpstreamError;
    expect(err.kind).toBe("reset");
    expect(err.answered).toBe(true);
  });
});

describe("HTTP/1.1 response parser", () => {
  const parse = (bytes: Uint8Array, splits: number[]) => {
    let head: ResponseHead | null = null;
    const body: number[] = [];
    let ended = 0;
    const p = new ResponseParser({ head: (h) => (head = h), data: (d) => body.push(...d), end: () => ended++ });
    let at = 0;
    for (const s of [...splits, bytes.length]) {
      p.feed(bytes.subarray(at, s));
      at = s;
    }
    return { head: head as ResponseHead | null, body: new TextDecoder().decode(new Uint8Array(body)), ended, reusable: p.reusable };
  };
  const wire = new TextEncoder().encode(
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-TYPE: application/json\r\nX-Other: 1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\nA\r\n:123456789\r\n1\r\n}\r\n0\r\n\r\n",
  );

  test("the same answer whatever the read boundaries (every split point)", () => {
    for (let i = 1; i < wire.length; i++) {
      const r = parse(wire, [i]);
      expect(r.head).toEqual({ status: 201, contentType: "application/json", contentEncoding: null, keepAlive: true, bodyLength: null });
      expect(r.body).toBe('{"a":123456789}');
      expect(r.ended).toBe(1);
      expect(r.reusable).toBe(true);
    }
  });

  test("bad chunk sizes and conflicting lengths are protocol errors", () => {
    const bad = (s: string) => () => parse(new TextEncoder().encode(s), []);
    expect(bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")).toThrow(/chunk size/);
    expect(bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")).toThrow(/content-length/);
    expect(bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab")).toThrow(/unexpected bytes/);
  });

  test("HTTP/1.0 without keep-alive, and 204, read right", () => {
    const r = parse(new TextEncoder().encode("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi"), []);
    expect(r.head!.keepAlive).toBe(false);
    expect(r.body).toBe("hi");
    const e = parse(new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\n"), []);
    expect(e.ended).toBe(1);
    expect(e.head!.bodyLength).toBe(0);
  });
});
