/** One PD leg: a request to one worker, its in-flight count, and how its failure reads to the client. */
import type { WorkerView } from "@switchboard/fleet";
import { errors, OpenAIError } from "@switchboard/protocol";
import type { PdConfig } from "../config/types";
import type { ForwardDeps } from "../proxy/forward";
import type { PdMetrics } from "./metrics";

export type Role = "prefill" | "decode";

export interface PdDeps extends ForwardDeps {
  pd: PdConfig;
  pdMetrics: PdMetrics;
}

/** What every leg of one PD request shares. */
export interface PdRequest {
  route: string;
  /** Upstream path, e.g. /v1/chat/completions. */
  path: string;
  model: string;
  body: Record<string, unknown>;
  stream: boolean;
  /** The same id goes to both legs (X-Request-Id), so engine logs and aborts line up. */
  requestId: string;
  /** X-data-parallel-rank, when the client pinned one. */
  dpRank?: number;
  headers: Headers;
  clientSignal: AbortSignal;
  /** Bounds the whole request (both legs). */
  timeout: AbortSignal;
  timeoutMs: number;
  started: number;
}

/** A worker taken for a leg: counted in flight from here until `release` (idempotent). */
export class Leg {
  readonly abort = new AbortController();
  private released = false;

  constructor(
    readonly role: Role,
    readonly worker: WorkerView,
    /** Its HTTP inference base URL. */
    readonly base: string,
    private readonly deps: ForwardDeps,
  ) {
    worker.inFlight++;
    deps.metrics.inFlight.inc();
  }

  release() {
    if (this.released) return;
    this.released = true;
    this.worker.inFlight--;
    this.deps.metrics.inFlight.dec();
  }
}

export type LegResult = { ok: true; res: Response } | { ok: false; error: OpenAIError | "client_gone" | "aborted" };

const PASSED_HEADERS = ["authorization", "traceparent"];

function legHeaders(req: PdRequest, role: Role): Record<string, string> {
  const out: Record<string, string> = { "content-type": "application/json", "x-request-id": req.requestId };
  for (const name of PASSED_HEADERS) {
    const v = req.headers.get(name);
    if (v !== null) out[name] = v;
  }
  // The pinned rank is the prefill's: it names which rank's KV (E_dp<r>) the decode pulls.
  if (role === "prefill" && req.dpRank !== undefined) out["x-data-parallel-rank"] = String(req.dpRank);
  return out;
}

/** How much of an engine's error body is read to explain the failure. */
const ERROR_BODY_LIMIT = 16 * 1024;

async function engineMessage(res: Response): Promise<string> {
  try {
    const text = (await res.text()).slice(0, ERROR_BODY_LIMIT);
    const msg = (JSON.parse(text) as { error?: { message?: unknown }; message?: unknown; detail?: unknown }) ?? {};
    const m = msg.error?.message ?? msg.message ?? msg.detail;
    return typeof m === "string" ? m : text;
  } catch {
    return "";
  }
}

/** An engine's refusal, in OpenAI form: a 4xx stays the client's problem, anything else is a 502. */
async function refused(leg: Leg, res: Response): Promise<OpenAIError> {
  const why = await engineMessage(res);
  const what = `${leg.role} engine ${leg.base} answered ${res.status}${why ? `: ${why}` : ""}`;
  return res.status >= 400 && res.status < 500
    ? new OpenAIError(res.status, what, "invalid_request_error", `${leg.role}_rejected`)
    : new OpenAIError(502, `Upstream engine failed: ${what}`, "upstream_error", `${leg.role}_failed`);
}

/**
 * Sends one leg. Bounded by the request timeout; ended by the client going away or by `leg.abort`
 * (the other leg failed). A non-2xx answer is a failure whose body has been read; a 2xx answer's
 * body is the caller's to read or cancel.
 */
export async function sendLeg(req: PdRequest, leg: Leg, body: string, deps: ForwardDeps): Promise<LegResult> {
  const signal = AbortSignal.any([req.clientSignal, req.timeout, leg.abort.signal]);
  let res: Response;
  try {
    res = await fetch(leg.base + req.path, { method: "POST", headers: legHeaders(req, leg.role), body, signal });
  } catch (err) {
    return { ok: false, error: whyAborted(req, leg) ?? connectFailure(leg, err, deps) };
  }
  if (res.ok) return { ok: true, res };
  deps.metrics.upstreamErrors.inc({ worker: leg.worker.id, kind: `${leg.role}_status_${res.status}` });
  return { ok: false, error: await refused(leg, res) };
}

/** Why a leg's signal fired, if it did: client gone, timed out, or aborted by its sibling. */
export function whyAborted(req: PdRequest, leg: Leg): OpenAIError | "client_gone" | "aborted" | null {
  if (req.clientSignal.aborted) return "client_gone";
  if (req.timeout.aborted) return errors.upstreamTimeout(req.timeoutMs / 1000);
  if (leg.abort.signal.aborted) return "aborted";
  return null;
}

function connectFailure(leg: Leg, err: unknown, deps: ForwardDeps): OpenAIError {
  const detail = (err as Error).message;
  deps.metrics.upstreamErrors.inc({ worker: leg.worker.id, kind: `${leg.role}_connect` });
  deps.fleet.passiveFailure(leg.worker.id, detail);
  return new OpenAIError(502, `Upstream engine failed: ${leg.role} engine ${leg.base}: ${detail}`, "upstream_error", `${leg.role}_failed`);
}
