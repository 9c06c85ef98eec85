import type { Fleet, WorkerView } from "@switchboard/fleet";
import type { Policy, RouteRequest } from "@switchboard/policies";
import { errors, OpenAIError } from "@switchboard/protocol";
import type { GatewayConfig } from "../config/types";
import type { GatewayMetrics } from "../observability/metrics";
import type { Logger } from "../observability/logging";
import { backoffMs } from "./backoff";
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

function upstreamHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = { "content-type": "application/json" };
  for (const name of FORWARDED_HEADERS) {
    const v = h.get(name);
    if (v !== null) out[name] = v;
  }
  return out;
}

/**
 * Sends a request to a worker chosen by the policy and pipes the answer back. Connect failures
 * and 502/503 answers before the first byte go to another Ready worker (bounded, with backoff).
 * Each worker's in-flight count is released on every path.
 */
export async function forward(req: ForwardRequest, deps: ForwardDeps): Promise<Response> {
  const { fleet, policy, config, metrics } = deps;
  const role = req.role ?? "regular";
  const started = performance.now();
  const timeout = AbortSignal.timeout(config.requestTimeoutMs);
  const tried = new Set<string>();
  let lastProblem = "no attempt";

  for (let attempt = 0; attempt <= config.retry.maxRetries; attempt++) {
    const all = fleet.index.candidates(req.model, role);
    let pool = tried.size === 0 ? all : all.filter((c) => !tried.has(c.id));
    if (pool.length === 0) {
      if (attempt === 0) return noWorker(req.model, deps);
      if (all.length === 0) break;
      tried.clear(); // every Ready worker was tried: go round again (the backoff already ran)
      pool = all;
    }
    const worker = policy.pick(pool, req.route_request) as WorkerView;
    tried.add(worker.id);
    const upstreamAbort = new AbortController();
    const signal = AbortSignal.any([req.clientSignal, timeout, upstreamAbort.signal]);
    acquire(worker, metrics);
    let res: Response;
    try {
      res = await fetch(worker.url + req.path, { method: "POST", headers: upstreamHeaders(req.headers), body: req.body, signal });
    } catch (err) {
      release(worker, metrics);
      if (req.clientSignal.aborted) return clientGone();
      if (timeout.aborted) return done(req, worker, errors.upstreamTimeout(config.requestTimeoutMs / 1000).toResponse(), started, deps);
      lastProblem = `${worker.url}: ${(err as Error).message}`;
      metrics.upstreamErrors.inc({ worker: worker.id, kind: "connect" });
      fleet.passiveFailure(worker.id, (err as Error).message);
      if (attempt < config.retry.maxRetries) await retryPause(req, attempt, "connect", deps);
      continue;
    }
    if (RETRYABLE.has(res.status) && attempt < config.retry.maxRetries) {
      await res.body?.cancel().catch(() => {});
      release(worker, metrics);
      lastProblem = `${worker.url} answered ${res.status}`;
      metrics.upstreamErrors.inc({ worker: worker.id, kind: `status_${res.status}` });
      await retryPause(req, attempt, `status_${res.status}`, deps);
      continue;
    }
    return req.stream && res.ok && res.body
      ? streamBack(req, worker, res, upstreamAbort, started, deps)
      : bufferBack(req, worker, res, timeout, started, deps);
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

async function bufferBack(req: ForwardRequest, worker: WorkerView, res: Response, timeout: AbortSignal, started: number, deps: ForwardDeps): Promise<Response> {
  try {
    const body = await res.arrayBuffer();
    const headers = { "content-type": res.headers.get("content-type") ?? "application/json", "x-switchboard-worker": worker.id };
    return done(req, worker, new Response(body, { status: res.status, headers }), started, deps);
  } catch (err) {
    if (req.clientSignal.aborted) return clientGone();
    const e = timeout.aborted ? errors.upstreamTimeout(deps.config.requestTimeoutMs / 1000) : errors.upstream(`${worker.url}: ${(err as Error).message}`);
    return done(req, worker, e.toResponse(), started, deps);
  } finally {
    release(worker, deps.metrics);
  }
}

function streamBack(req: ForwardRequest, worker: WorkerView, res: Response, upstreamAbort: AbortController, started: number, deps: ForwardDeps): Response {
  const { metrics } = deps;
  const body = passThrough(res.body!, {
    firstByte: () => metrics.ttft.observe({ route: req.route, model: req.model }, (performance.now() - started) / 1000),
    done: (outcome) => {
      release(worker, metrics);
      metrics.requests.inc({ route: req.route, model: req.model, worker: worker.id, status: outcome === "complete" ? res.status : outcome === "cancelled" ? 499 : 502 });
      metrics.latency.observe({ route: req.route, model: req.model }, (performance.now() - started) / 1000);
    },
    abortUpstream: () => upstreamAbort.abort(),
  });
  return new Response(body, {
    status: res.status,
    headers: {
      "content-type": res.headers.get("content-type") ?? "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      "x-switchboard-worker": worker.id,
    },
  });
}

export { OpenAIError };
