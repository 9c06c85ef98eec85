import type { EngineIdentity, ModelInfo, ProbeFn, ProbeRequest, ProbeResult } from "@switchboard/workers";
import { createEngineGrpcClient, type EngineGrpcClient } from "./client.ts";
import { IncarnationTracker } from "./incarnation.ts";
import type { EngineModelInfo, EngineServerInfo } from "./types.ts";

/** One channel per engine target, reused across probes. */
const clients = new Map<string, EngineGrpcClient>();
const incarnations = new IncarnationTracker();

function clientFor(url: string): EngineGrpcClient {
  let client = clients.get(url);
  if (!client) {
    client = createEngineGrpcClient(url);
    clients.set(url, client);
  }
  return client;
}

/** Closes every cached channel and forgets incarnations (shutdown, tests). */
export function closeGrpcClients(): void {
  for (const client of clients.values()) client.close();
  clients.clear();
  incarnations.forget();
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** An engine mid-start may answer with an empty GetServerInfo: that is not a completed read. */
const isPartial = (info: EngineServerInfo) => info.serverType === "" && info.uptimeSeconds === 0;

function toModels(info: EngineModelInfo): ModelInfo[] | "failed" {
  const id = info.servedModelName || info.modelPath;
  if (!id) return "failed";
  return [{ id, root: info.modelPath || undefined, maxModelLen: info.maxContextLength || undefined }];
}

function toIdentity(info: EngineServerInfo, incarnation: string): EngineIdentity {
  return {
    engineId: info.kvEngineId || null,
    incarnation,
    dataParallelSize: info.dataParallelSize > 0 ? info.dataParallelSize : 1,
    kvConnector: info.kvConnector,
    kvRole: info.kvRole,
  };
}

/**
 * Probes a grpc:// worker: HealthCheck decides health; GetServerInfo (every healthy probe) gives
 * the incarnation and the identity; GetModelInfo gives models. Identity and models are reported
 * when asked for, and also when the incarnation differs from the known one (an in-place restart),
 * so the new id is used at once. The whole probe shares one deadline (config.timeoutMs) and the
 * caller's signal; a read that fails after a healthy answer leaves the probe healthy with that
 * part "failed".
 */
export const grpcProbe: ProbeFn = async (req: ProbeRequest): Promise<ProbeResult> => {
  const started = performance.now();
  const deadline = started + req.config.timeoutMs;
  const remaining = () => Math.max(1, Math.floor(deadline - performance.now()));
  // Reads after a healthy answer end before the probe's own bound (boundedProbe), so a hung
  // GetServerInfo is a failed read in a healthy probe, never a probe timeout.
  const readsDeadline = started + req.config.timeoutMs * 0.8;
  const readRemaining = () => Math.max(1, Math.floor(readsDeadline - performance.now()));
  const opts = { signal: req.signal };
  const done = (r: Omit<ProbeResult, "latencyMs">): ProbeResult => ({ ...r, latencyMs: performance.now() - started });

  let client: EngineGrpcClient;
  try {
    client = clientFor(req.spec.url);
  } catch (err) {
    return done({ healthy: false, detail: errorText(err) });
  }

  try {
    const health = await client.healthCheck(remaining(), opts);
    if (!health.healthy) return done({ healthy: false, detail: `HealthCheck: unhealthy${health.message ? ` (${health.message})` : ""}` });
  } catch (err) {
    return done({ healthy: false, detail: errorText(err) });
  }

  const readModels = () => client.getModelInfo(readRemaining(), opts);
  const [server, asked] = await Promise.allSettled([client.getServerInfo(readRemaining(), opts), req.wantModels ? readModels() : undefined]);

  const result: Omit<ProbeResult, "latencyMs"> = { healthy: true, detail: "HealthCheck: healthy" };
  const notes: string[] = [];
  let restarted = false;

  if (server.status === "fulfilled" && !isPartial(server.value)) {
    const info = server.value;
    const incarnation = incarnations.observe(`${req.spec.id}@${req.spec.url}`, info.kvEngineId, info.uptimeSeconds, req.knownIncarnation);
    result.incarnation = incarnation;
    restarted = req.knownIncarnation !== null && incarnation !== req.knownIncarnation;
    if (req.wantIdentity || restarted) result.identity = toIdentity(info, incarnation);
    if (restarted) notes.push(`incarnation ${req.knownIncarnation} → ${incarnation}`);
  } else {
    notes.push(server.status === "rejected" ? errorText(server.reason) : "GetServerInfo: partial answer (no server info)");
    if (req.wantIdentity) result.identity = "failed";
  }

  if (req.wantModels || restarted) {
    // A restart found now reads models in this probe too, within what is left of its deadline.
    const model = req.wantModels ? asked : (await Promise.allSettled([readModels()]))[0];
    if (model.status === "fulfilled" && model.value) {
      result.models = toModels(model.value);
      if (result.models === "failed") notes.push("GetModelInfo: no model name or path");
    } else {
      result.models = "failed";
      notes.push(model.status === "rejected" ? errorText(model.reason) : "GetModelInfo: no answer");
    }
  }

  if (notes.length) result.detail += `; ${notes.join("; ")}`;
  return done(result);
};
