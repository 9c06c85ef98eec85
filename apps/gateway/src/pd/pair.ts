/** Choosing the prefill and decode workers for one request, each with its own policy. */
import type { WorkerIndex, WorkerView } from "@switchboard/fleet";
import { promptTextOf, sessionKeyFrom, type Policy, type RouteRequest } from "@switchboard/policies";
import { errors, OpenAIError } from "@switchboard/protocol";
import { inferenceUrl } from "./data-path";

export interface PdPolicies {
  prefill: Policy;
  decode: Policy;
}

export interface Picked {
  worker: WorkerView;
  /** HTTP inference base URL. */
  base: string;
}

export type PairChoice =
  | { kind: "pair"; prefill: Picked; decode: Picked }
  /** Not a PD model: the regular path serves it (or answers 404/503 as usual). */
  | { kind: "decline" }
  | { kind: "error"; error: OpenAIError };

export interface PairInput {
  model: string;
  body: Record<string, unknown>;
  headers: Headers;
  sessionHeader?: string;
  dpRank?: number;
  retryAfterSecs: number;
}

function routeRequest(policy: Policy, input: PairInput): RouteRequest {
  const r: RouteRequest = { model: input.model };
  if (input.dpRank !== undefined) r.dpRank = input.dpRank;
  if (policy.needsText) r.text = promptTextOf(input.body);
  if (policy.needsSessionKey) r.sessionKey = sessionKeyFrom(input.headers, input.body, input.sessionHeader);
  return r;
}

const grpcOnly = (role: string, ws: readonly WorkerView[]) =>
  new OpenAIError(
    501,
    `Every Ready ${role} worker (${ws.map((w) => w.url).join(", ")}) is gRPC-only: the gRPC inference path is not supported yet. ` +
      "Give the worker an HTTP front with an 'http-url' or 'http-port' label.",
    "upstream_error",
    "grpc_data_path_unsupported",
  );

function pick(role: "prefill" | "decode", policy: Policy, all: readonly WorkerView[], input: PairInput): Picked | OpenAIError {
  const usable = all.filter((w) => inferenceUrl(w) !== null);
  if (usable.length === 0) return grpcOnly(role, all);
  const worker = policy.pick(usable, routeRequest(policy, input)) as WorkerView;
  return { worker, base: inferenceUrl(worker)! };
}

/**
 * A model with Ready prefill and decode workers is served disaggregated. A model with regular
 * workers only, or with no worker at all, is left to the regular path; a model with only one PD
 * role Ready gets a 503 naming the missing role.
 */
export function choosePair(index: WorkerIndex, policies: PdPolicies, input: PairInput): PairChoice {
  const prefills = index.candidates(input.model, "prefill");
  const decodes = index.candidates(input.model, "decode");
  if (prefills.length === 0 || decodes.length === 0) {
    if (index.candidates(input.model, "regular").length > 0 || (prefills.length === 0 && decodes.length === 0)) return { kind: "decline" };
    const missing = prefills.length === 0 ? "prefill" : "decode";
    const e = errors.noReadyWorker(input.model, input.retryAfterSecs);
    return { kind: "error", error: new OpenAIError(503, `No ${missing} worker is ready to serve '${input.model}' right now; retry shortly.`, e.type, `no_ready_${missing}_worker`, "model", e.headers) };
  }
  const prefill = pick("prefill", policies.prefill, prefills, input);
  if (prefill instanceof OpenAIError) return { kind: "error", error: prefill };
  const decode = pick("decode", policies.decode, decodes, input);
  if (decode instanceof OpenAIError) return { kind: "error", error: decode };
  return { kind: "pair", prefill, decode };
}
