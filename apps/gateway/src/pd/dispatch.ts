/** PD mode's hook into the inference routes: takes over requests for models served by prefill/decode pairs. */
import { createPolicy } from "@switchboard/policies";
import type { KvConnector } from "@switchboard/workers";
import type { PdConfig } from "../config/types";
import { policyOptions } from "../config/policy-options";
import type { ForwardDeps } from "../proxy/forward";
import type { Dispatch } from "../routes/inference";
import type { PdDeps, PdRequest } from "./leg";
import { PdMetrics } from "./metrics";
import { choosePair, type PdPolicies } from "./pair";
import { sglangPd } from "./sglang";
import { vllmPd } from "./vllm";

/** `X-data-parallel-rank: N` → N; anything else → no pinned rank. */
export function pinnedRank(headers: Headers): number | undefined {
  const v = headers.get("x-data-parallel-rank");
  return v !== null && /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined;
}

/** The worker's own connector (admin API, discovery) wins over the gateway default. */
function connectorFor(spec: { kvConnector?: KvConnector }, fallback: PdConfig["kvConnector"]): PdConfig["kvConnector"] {
  const c = spec.kvConnector;
  return c === "MooncakeConnector" || c === "NixlConnector" || c === "sglang" ? c : fallback;
}

export function createPdDispatch(base: ForwardDeps, pd: PdConfig): { dispatch: Dispatch; metrics: PdMetrics } {
  const pdMetrics = new PdMetrics(base.metrics.registry);
  const deps: PdDeps = { ...base, pd, pdMetrics };
  const policies: PdPolicies = {
    prefill: createPolicy(pd.prefillPolicy, policyOptions(base.config)),
    decode: createPolicy(pd.decodePolicy, policyOptions(base.config)),
  };
  // Routing memory of a worker (or of its engine's previous process) goes with it.
  base.fleet.index.onChange((c) => {
    if (c.kind !== "removed" && c.kind !== "restarted") return;
    policies.prefill.forget?.(c.view.id);
    policies.decode.forget?.(c.view.id);
  });

  const dispatch: Dispatch = ({ route, endpoint, body, request }) => {
    if (endpoint === "embeddings") return null;
    const model = body.model as string;
    const dpRank = pinnedRank(request.headers);
    const choice = choosePair(base.fleet.index, policies, {
      model,
      body,
      headers: request.headers,
      sessionHeader: base.config.sessionHeader,
      dpRank,
      retryAfterSecs: Math.max(1, Math.ceil(base.config.health.fastIntervalMs / 1000)),
    });
    if (choice.kind === "decline") return null;
    if (choice.kind === "error") {
      base.metrics.rejected.inc({ code: choice.error.status });
      return Promise.resolve(choice.error.toResponse());
    }
    const req: PdRequest = {
      route,
      path: route,
      model,
      body,
      stream: body.stream === true,
      requestId: request.headers.get("x-request-id") || `pd-${crypto.randomUUID()}`,
      dpRank,
      headers: request.headers,
      clientSignal: request.signal,
      timeout: AbortSignal.timeout(base.config.requestTimeoutMs),
      timeoutMs: base.config.requestTimeoutMs,
      started: performance.now(),
    };
    const connector = connectorFor(choice.prefill.worker.spec, pd.kvConnector);
    return connector === "sglang" ? sglangPd(req, choice.prefill, choice.decode, deps) : vllmPd(req, connector, choice.prefill, choice.decode, deps);
  };
  return { dispatch, metrics: pdMetrics };
}
