/** The request bodies of the two PD legs, built from the client's body. Pure: the input is never changed. */
import type { KvTransferParams } from "./kv-transfer";

type Body = Record<string, unknown>;

/**
 * The vLLM prefill leg: computes the prompt's KV and one token, answered whole. `n` must be 1 and a
 * `min_tokens` above 1 would be refused against `max_tokens: 1`.
 */
export function prefillLegBody(body: Body, params: KvTransferParams): Body {
  const { stream_options: _so, min_tokens: _mt, ...rest } = body;
  const leg: Body = { ...rest, max_tokens: 1, stream: false, n: 1, kv_transfer_params: params };
  // vLLM's chat endpoint prefers max_completion_tokens over max_tokens when both are given.
  if ("max_completion_tokens" in body) leg.max_completion_tokens = 1;
  return leg;
}

/** The decode leg: the client's request as sent, plus the transfer params (if any could be had). */
export function decodeLegBody(body: Body, params: KvTransferParams | null): Body {
  const { kv_transfer_params: _client, ...rest } = body;
  return params ? { ...rest, kv_transfer_params: params } : rest;
}

export interface SglangBootstrap {
  host: string;
  port: number;
  /** 0..2^63-1: beyond a JS number's exact range, so it is kept as a bigint. */
  room: bigint;
}

/** A random bootstrap room in 0..2^63-1. */
export function newBootstrapRoom(): bigint {
  const b = crypto.getRandomValues(new BigUint64Array(1))[0]!;
  return b & 0x7fff_ffff_ffff_ffffn;
}

/**
 * The SGLang leg body (the same for prefill and decode) as JSON text: the room is written as an
 * exact integer literal, which JSON.stringify cannot do for a bigint.
 */
export function sglangLegJson(body: Body, boot: SglangBootstrap): string {
  const { bootstrap_host: _h, bootstrap_port: _p, bootstrap_room: _r, ...rest } = body;
  const head = JSON.stringify({ ...rest, bootstrap_host: boot.host, bootstrap_port: boot.port });
  return `${head.slice(0, -1)},"bootstrap_room":${boot.room.toString()}}`;
}
