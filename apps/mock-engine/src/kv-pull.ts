/**
 * The decode side of a Mooncake transfer, reduced to what a router can get wrong: the decode asks
 * the prefill's bootstrap server who is there, and the transfer works only if the engine id the
 * router minted is among them. A real decode that fails here recomputes the prompt itself.
 */
export interface KvPullOutcome {
  ok: boolean;
  reason: string;
}

const PULL_TIMEOUT_MS = 2_000;

export async function checkRemotePrefill(bootstrapAddr: string, engineId: unknown, signal: AbortSignal): Promise<KvPullOutcome> {
  if (typeof engineId !== "string" || !engineId) return { ok: false, reason: "no remote_engine_id" };
  try {
    const res = await fetch(`${bootstrapAddr.replace(/\/+$/, "")}/query`, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(PULL_TIMEOUT_MS)]),
    });
    if (!res.ok) return { ok: false, reason: `bootstrap answered ${res.status}` };
    const ranks = (await res.json()) as Record<string, { engine_id?: unknown } | undefined>;
    const known = Object.values(ranks ?? {}).map((r) => r?.engine_id);
    if (known.includes(engineId)) return { ok: true, reason: "engine id matches" };
    return { ok: false, reason: `engine id ${engineId} not at bootstrap (has ${known.join(",") || "none"})` };
  } catch (e) {
    return { ok: false, reason: `bootstrap unreachable: ${(e as Error).name}` };
  }
}
