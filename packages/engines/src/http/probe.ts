import type { EngineIdentity, ProbeFn, ProbeRequest, ProbeResult, ModelInfo } from "@switchboard/workers";
import { bootstrapUrl, DEFAULT_MOONCAKE_BOOTSTRAP_PORT, parseBootstrapQuery } from "./bootstrap";
import { parseEngineMetrics } from "./engine-metrics";
import { parseModelList } from "./models";

async function getJson(url: string, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(url, { signal });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${res.status}`);
  }
  return res.json();
}

/** The process start time from /metrics: the engine's incarnation. Undefined when it cannot be read. */
async function readIncarnation(base: string, signal: AbortSignal): Promise<string | undefined> {
  try {
    const res = await fetch(`${base}/metrics`, { signal });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const start = parseEngineMetrics(await res.text()).processStartTime;
    return start === undefined ? undefined : `start:${start}`;
  } catch {
    return undefined;
  }
}

/**
 * Only a Mooncake prefill (or a kv_both engine) runs the bootstrap server: a decode has none, and an
 * SGLang or NIXL engine's bootstrap port does not answer `/query`.
 */
function hasBootstrap(req: ProbeRequest): boolean {
  if (req.spec.workerType === "decode") return false;
  const connector = req.spec.kvConnector;
  return connector === "MooncakeConnector" || ((connector === undefined || connector === "") && req.spec.bootstrapPort !== undefined);
}

/**
 * Optional reads (incarnation, models, identity) end before the probe's own deadline, so a read that
 * hangs on an engine whose health answers is a failed read in a healthy probe, not a failed probe.
 */
const READ_SHARE = 0.8;

/** Reads the KV engine id from the Mooncake bootstrap server; "failed" when the read does not complete. */
async function readIdentity(req: ProbeRequest, incarnation: string | undefined): Promise<EngineIdentity | "failed"> {
  if (!hasBootstrap(req)) return { engineId: null, incarnation: incarnation ?? null };
  try {
    const port = req.spec.bootstrapPort ?? DEFAULT_MOONCAKE_BOOTSTRAP_PORT;
    const q = parseBootstrapQuery(await getJson(`${bootstrapUrl(req.spec.url, port)}/query`, req.signal));
    return { engineId: q.engineId, incarnation: incarnation ?? null, dataParallelSize: q.dataParallelSize };
  } catch {
    return "failed";
  }
}

async function readModels(base: string, signal: AbortSignal): Promise<ModelInfo[] | "failed"> {
  try {
    return parseModelList(await getJson(`${base}/v1/models`, signal));
  } catch {
    return "failed";
  }
}

/**
 * Probes an HTTP (vLLM / SGLang) engine: the health endpoint, then — only if healthy — its
 * incarnation, and the models and engine id when asked for or when the incarnation changed.
 * The caller bounds the whole probe with `req.signal`.
 */
export const httpProbe: ProbeFn = async (req) => {
  const started = performance.now();
  const base = req.spec.url.replace(/\/+$/, "");
  const elapsed = () => performance.now() - started;
  try {
    const res = await fetch(`${base}${req.config.endpoint}`, { signal: req.signal });
    await res.body?.cancel();
    if (!res.ok) return { healthy: false, detail: `${req.config.endpoint} answered ${res.status}`, latencyMs: elapsed() };
  } catch (err) {
    const detail = req.signal.aborted ? `health check timed out after ${req.config.timeoutMs} ms` : `health check failed: ${(err as Error).message}`;
    return { healthy: false, detail, latencyMs: elapsed() };
  }

  const readsLeftMs = Math.max(1, Math.floor(started + req.config.timeoutMs * READ_SHARE - performance.now()));
  const reads = { ...req, signal: AbortSignal.any([req.signal, AbortSignal.timeout(readsLeftMs)]) };
  const incarnation = await readIncarnation(base, reads.signal);
  const restarted = incarnation !== undefined && req.knownIncarnation !== null && incarnation !== req.knownIncarnation;
  const [models, identity] = await Promise.all([
    req.wantModels || restarted ? readModels(base, reads.signal) : undefined,
    req.wantIdentity || restarted ? readIdentity(reads, incarnation) : undefined,
  ]);
  const result: ProbeResult = { healthy: true, detail: "healthy", latencyMs: elapsed(), incarnation: incarnation ?? null };
  if (models !== undefined) result.models = models;
  if (identity !== undefined) result.identity = identity;
  return result;
};
