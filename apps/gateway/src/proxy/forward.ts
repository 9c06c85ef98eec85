import type { Fleet, WorkerView } from "@switchboard/fleet";
import type { Policy, RouteRequest } from "@switchboard/policies";
import { errors, OpenAIError } from "@switchboard/protocol";
import type { GatewayConfig } from "../config/types";
import type { GatewayMetrics } from "../observability/metrics";
import type { Logger } from "../observability/logging";
import { backoffMs } from "./backoff";
import { sendUpstream, UpstreamError, type UpstreamReply } from "./upstream";
import { passThrough } from "./upstream-body";

export interface ForwardDeps {
  fleet: Fleet;
  policy: Policy;
  config: GatewayConfig;
  metrics: GatewayMetrics;
  log: Logger;
}

export interface ForwardRequest {
  route: string;
  /** Upstream path, e.g. /v1/chat/completions. */
  path: string;
  model: string;
  /** The body bytes as the client sent them: forwarded untouched when nothing changes. */
  body: BodyInit;
  stream: boolean;
  route_request: RouteRequest;
  clientSignal: AbortSignal;
  headers: Headers;
  /** Which role serves it (regular, or a PD leg). */
  role?: "regular" | "prefill" | "decode";
}

/** Statuses from an engine that mean "try another worker" when nothing has reached the client yet. */
const RETRYABLE = new Set([502, 503]);
const FORWARDED_HEADERS = ["authorization", "x-request-id", "x-data-parallel-rank", "traceparent"];

/** The client's headers that go upstream, as header lines (pool) and as a record (fetch). */
function upstreamHeaders(h: Headers): { lines: string; record: Record<string, string> } {
  let lines = "Content-Type: application/json\r\n";
  const record: Record<string, string> = { "content-type": "application/json" };
  for (const name of FORWARDED_HEADERS) {
    const v = h.get(name);
    if (v === null) continue;
    record[name] = v;
    lines += `${name}: ${v}\r\n`;
  }
  return { lines, record };
}

/**
 * Sends a request to a worker chosen by the policy and pipes the answer back. Connect failures
 * and 502/503 answers before the first byte go to another Ready worker (bounded, with backoff).
 * Each worker's in-flight count is released on every path. No actor is told anything unless a
 * worker could not be reached (passive health).
 */
export async function forward(req: ForwardRequest, deps: ForwardDeps): Promise<Response> {
  const { fleet, policy, config, metrics } = deps;
  const role = req.role ?? "regular";
  const started = performance.now();
  const deadline = started + config.requestTimeoutMs;
  const headers = upstreamHeaders(req.headers);
  let tried: Set<string> | undefined;
  let lastProblem = "no attempt";

  for (let attempt = 0; attempt <= config.retry.maxRetries; attempt++) {
    const all = fleet.index.candidates(req.model, role);
    let pool = tried === undefined ? all : all.filter((c) => !tried!.has(c.id));
    if (pool.length === 0) {
      if (attempt === 0) return noWorker(req.model, deps);
      if (all.length === 0) break;
      tried!.clear(); // every Ready worker was tried: go round again (the backoff already ran)
      pool = all;
    }
    const worker = policy.pick(pool, req.route_request) as WorkerView;
    const timeoutMs = deadline - performance.now();
    if (timeoutMs <= 0) return done(req, worker, errors.upstreamTimeout(config.requestTimeoutMs / 1000).toResponse(), started, deps);
    acquire(worker, metrics);
    let reply: UpstreamReply;
    try {
      reply = await sendUpstream({
        url: worker.url,
        path: req.path,
        body: req.body,
        headerLines: headers.lines,
        headers: headers.record,
        stream: req.stream,
        timeoutMs,
        clientSignal: () => req.clientSignal,
      });
    } catch (err) {
      release(worker, metrics);
      const e = err instanceof UpstreamError ? err : new UpstreamError("connect", String(err));
      if (e.kind === "aborted" || req.clientSignal.aborted) return clientGone();
      if (e.kind === "timeout") return done(req, worker, errors.upstreamTimeout(config.requestTimeoutMs / 1000).toResponse(), started, deps);
      // The engine had begun to answer: nothing is retried, the client gets the failure.
      if (e.answered) return done(req, worker, errors.upstream(`${worker.url}: ${e.message}`).toResponse(), started, deps);
      lastProblem = `${worker.url}: ${e.message}`;
      metrics.upstreamErrors.inc({ worker: worker.id, kind: "connect" });
      fleet.passiveFailure(worker.id, e.message);
      (tried ??= new Set()).add(worker.id);
      if (attempt < config.retry.maxRetries) await retryPause(req, attempt, "connect", deps);
      continue;
    }
    if (RETRYABLE.has(reply.status) && attempt < config.retry.maxRetries) {
      await reply.stream?.cancel().catch(() => {});
      release(worker, metrics);
      lastProblem = `${worker.url} answered ${reply.status}`;
      metrics.upstreamErrors.inc({ worker: worker.id, kind: `status_${reply.status}` });
      (tried ??= new Set()).add(worker.id);
      await retryPause(req, attempt, `status_${reply.status}`, deps);
      continue;
    }
    const ok = reply.status >= 200 && reply.status < 300;
    return req.stream && ok ? streamBack(req, worker, reply, started, deps) : bufferBack(req, worker, reply, started, deps);
  }
  return done(req, undefined, errors.upstream(lastProblem).toResponse(), started, deps);
}

async function retryPause(req: ForwardRequest, attempt: number, reason: string, deps: ForwardDeps) {
  deps.metrics.retries.inc({ route: req.route, reason });
  await Bun.sleep(backoffMs(attempt, deps.config.retry));
}

function acquire(w: WorkerView, m: GatewayMetrics) {
  w.inFlight++;
  m.inFlight.inc();
}

function release(w: WorkerView, m: GatewayMetrics) {
  w.inFlight--;
  m.inFlight.dec();
}

function noWorker(model: string, deps: ForwardDeps): Response {
  const e = deps.fleet.index.knows(model) ? errors.noReadyWorker(model, Math.max(1, Math.ceil(deps.config.health.fastIntervalMs / 1000))) : errors.modelNotFound(model);
  deps.metrics.rejected.inc({ code: e.status });
  return e.toResponse();
}

function clientGone(): Response {
  // Nobody reads this; 499 marks it in access logs as a client cancel.
  return new Response(null, { status: 499 });
}

function done(req: ForwardRequest, worker: WorkerView | undefined, res: Response, started: number, deps: ForwardDeps): Response {
  deps.metrics.requests.inc({ route: req.route, model: req.model, worker: worker?.id ?? "none", status: res.status });
  deps.metrics.latency.observe({ route: req.route, model: req.model }, (performance.now() - started) / 1000);
  return res;
}

function replyHeaders(reply: UpstreamReply, worker: WorkerView, fallbackType: string): Record<string, string> {
  const h: Record<string, string> = { "content-type": reply.contentType ?? fallbackType, "x-switchboard-worker": worker.id };
  if (reply.contentEncoding) h["content-encoding"] = reply.contentEncoding;
  return h;
}

async function bufferBack(req: ForwardRequest, worker: WorkerView, reply: UpstreamReply, started: number, deps: ForwardDeps): Promise<Response> {
  try {
    const body = reply.body ?? new Uint8Array(await new Response(reply.stream).arrayBuffer());
    return done(req, worker, new Response(body as Uint8Array<ArrayBuffer>, { status: reply.status, headers: replyHeaders(reply, worker, "application/json") }), started, deps);
  } catch (err) {
    if (req.clientSignal.aborted || (err instanceof UpstreamError && err.kind === "aborted")) return clientGone();
    const e = err instanceof UpstreamError && err.kind === "timeout" ? errors.upstreamTimeout(deps.config.requestTimeoutMs / 1000) : errors.upstream(`${worker.url}: ${(err as Error).message}`);
    return done(req, worker, e.toResponse(), started, deps);
  } finally {
    release(worker, deps.metrics);
  }
}

/** A body read whole (its length was known) still goes out through the stream path, hooks and all. */
function oneChunk(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      if (bytes.length) c.enqueue(bytes);
      c.close();
    },
  });
}

function streamBack(req: ForwardRequest, worker: WorkerView, reply: UpstreamReply, started: number, deps: ForwardDeps): Response {
  const { metrics } = deps;
  const upstream = reply.stream ?? oneChunk(reply.body!);
  const body = passThrough(upstream, {
    firstByte: () => metrics.ttft.observe({ route: req.route, model: req.model }, (performance.now() - started) / 1000),
    done: (outcome) => {
      release(worker, metrics);
      metrics.requests.inc({ route: req.route, model: req.model, worker: worker.id, status: outcome === "complete" ? reply.status : outcome === "cancelled" ? 499 : 502 });
      metrics.latency.observe({ route: req.route, model: req.model }, (performance.now() - started) / 1000);
    },
    // Cancelling the upstream body (passThrough does) closes its connection: the engine sees the cancel.
    abortUpstream: () => {},
  });
  return new Response(body, {
    status: reply.status,
    headers: { ...replyHeaders(reply, worker, "text/event-stream"), "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}

export { OpenAIError };
