/**
 * The Mooncake bootstrap server's `/query` reply:
 * `{"<dp_rank>": {"engine_id": "...", "worker_addr": {...}}}`.
 * Returns null when the reply is complete but names no engine (the engine has none),
 * and throws when the reply is not usable (a partial read).
 */
export interface BootstrapIdentity {
  engineId: string | null;
  /** Engine id per data-parallel rank. */
  rankEngineIds: Record<string, string>;
  dataParallelSize: number;
}

export function parseBootstrapQuery(body: unknown): BootstrapIdentity {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new Error("bootstrap /query reply is not an object");
  const ranks = Object.entries(body as Record<string, unknown>);
  if (ranks.length === 0) return { engineId: null, rankEngineIds: {}, dataParallelSize: 1 };
  const rankEngineIds: Record<string, string> = {};
  for (const [rank, entry] of ranks) {
    const id = (entry as { engine_id?: unknown })?.engine_id;
    if (typeof id !== "string" || id.length === 0) throw new Error(`bootstrap /query rank ${rank} has no engine_id`);
    rankEngineIds[rank] = id;
  }
  const first = rankEngineIds["0"] ?? Object.values(rankEngineIds)[0]!;
  return { engineId: baseEngineId(rankEngineIds) ?? first, rankEngineIds, dataParallelSize: ranks.length };
}

/**
 * With data parallelism vLLM names rank r `E_dp<r>`; the worker keeps the base id E (as gRPC's
 * kv_engine_id reports it), so that minting a rank's id never suffixes twice. Null when the ranks
 * do not follow that pattern.
 */
function baseEngineId(rankEngineIds: Record<string, string>): string | null {
  const ranks = Object.keys(rankEngineIds);
  if (ranks.length < 2) return null;
  const zero = rankEngineIds["0"];
  if (!zero?.endsWith("_dp0")) return null;
  const base = zero.slice(0, -"_dp0".length);
  return ranks.every((r) => rankEngineIds[r] === `${base}_dp${r}`) ? base : null;
}

export function bootstrapUrl(workerUrl: string, port: number): string {
  const u = new URL(workerUrl);
  return `http://${u.hostname}:${port}`;
}

export const DEFAULT_MOONCAKE_BOOTSTRAP_PORT = 8998;
