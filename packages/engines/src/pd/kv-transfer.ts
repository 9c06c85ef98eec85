/**
 * kv_transfer_params for vLLM PD disaggregation, as pure functions: the router mints both legs'
 * params for MooncakeConnector, tags and relays them for NixlConnector.
 */
import { DEFAULT_MOONCAKE_BOOTSTRAP_PORT } from "../http/bootstrap";

export type KvTransferParams = Record<string, unknown>;

export function newTransferId(): string {
  return `xfer-${crypto.randomUUID()}`;
}

/** What the router knows about the prefill side of a Mooncake transfer. */
export interface MooncakePrefill {
  /** The prefill engine's current KV engine id (the base id, without a `_dp` suffix). */
  engineId: string | null;
  dataParallelSize: number;
  /** The prefill's URL (its host runs the bootstrap server) and bootstrap port. */
  url: string;
  bootstrapPort?: number;
}

/** Why nothing could be minted for the decode leg. */
export type UnmintedReason = "no_engine_id" | "dp_rank_not_pinned" | "dp_rank_out_of_range";

export type MooncakeMint =
  | { ok: true; transferId: string; prefill: KvTransferParams; decode: KvTransferParams }
  | { ok: false; reason: UnmintedReason };

/**
 * The engine id a decode must name: the base id, or `E_dp<r>` for a pinned rank when the prefill
 * runs data parallel. With dp > 1 and no pinned rank the rank that will serve is unknown.
 */
export function rankEngineId(engineId: string | null, dataParallelSize: number, dpRank?: number): { id: string } | { reason: UnmintedReason } {
  if (!engineId) return { reason: "no_engine_id" };
  if (dataParallelSize <= 1) return { id: engineId };
  if (dpRank === undefined) return { reason: "dp_rank_not_pinned" };
  if (dpRank < 0 || dpRank >= dataParallelSize) return { reason: "dp_rank_out_of_range" };
  return { id: `${engineId}_dp${dpRank}` };
}

/** `http://<prefill host>:<bootstrap port>` — the Mooncake bootstrap server a decode pulls from. */
export function bootstrapAddr(prefillUrl: string, port = DEFAULT_MOONCAKE_BOOTSTRAP_PORT): string {
  const host = new URL(prefillUrl.replace(/^grpc:/, "http:")).hostname;
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/** Both legs' params for one Mooncake transfer, from the prefill's current identity. */
export function mintMooncake(prefill: MooncakePrefill, dpRank?: number, transferId = newTransferId()): MooncakeMint {
  const ranked = rankEngineId(prefill.engineId, prefill.dataParallelSize, dpRank);
  if ("reason" in ranked) return { ok: false, reason: ranked.reason };
  return {
    ok: true,
    transferId,
    prefill: { do_remote_decode: true, do_remote_prefill: false, transfer_id: transferId },
    decode: {
      do_remote_decode: false,
      do_remote_prefill: true,
      transfer_id: transferId,
      remote_engine_id: ranked.id,
      remote_bootstrap_addr: bootstrapAddr(prefill.url, prefill.bootstrapPort),
    },
  };
}

/** NIXL: the prefill is only told to keep its KV for a remote decode. */
export function nixlPrefillParams(): KvTransferParams {
  return { do_remote_decode: true, do_remote_prefill: false };
}

/** NIXL: the params the prefill answered with, passed to decode verbatim; null when it sent none. */
export function nixlRelay(prefillResponse: unknown): KvTransferParams | null {
  if (prefillResponse === null || typeof prefillResponse !== "object") return null;
  const p = (prefillResponse as { kv_transfer_params?: unknown }).kv_transfer_params;
  return p !== null && typeof p === "object" && !Array.isArray(p) ? (p as KvTransferParams) : null;
}
