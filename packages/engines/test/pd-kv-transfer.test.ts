import { describe, expect, test } from "bun:test";
import {
  bootstrapAddr,
  decodeLegBody,
  mintMooncake,
  newBootstrapRoom,
  newTransferId,
  nixlPrefillParams,
  nixlRelay,
  prefillLegBody,
  rankEngineId,
  sglangLegJson,
} from "../src/pd/index.ts";

const prefill = { engineId: "E", dataParallelSize: 1, url: "http://10.0.0.5:8000", bootstrapPort: 9000 };

describe("Mooncake minting", () => {
  test("both legs from one transfer id; decode names the engine id and the bootstrap server", () => {
    const m = mintMooncake(prefill, undefined, "xfer-1");
    expect(m).toEqual({
      ok: true,
      transferId: "xfer-1",
      prefill: { do_remote_decode: true, do_remote_prefill: false, transfer_id: "xfer-1" },
      decode: { do_remote_decode: false, do_remote_prefill: true, transfer_id: "xfer-1", remote_engine_id: "E", remote_bootstrap_addr: "http://10.0.0.5:9000" },
    });
  });

  test("transfer ids are xfer-<uuid>, fresh each time", () => {
    const a = newTransferId();
    expect(a).toMatch(/^xfer-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(newTransferId()).not.toBe(a);
    const m = mintMooncake(prefill);
    expect(m.ok && m.prefill.transfer_id === m.decode.transfer_id).toBe(true);
  });

  test("default bootstrap port 8998; a gRPC prefill's host; IPv6 in brackets", () => {
    expect(bootstrapAddr("http://h:1")).toBe("http://h:8998");
    expect(bootstrapAddr("grpc://g.example:50051", 7000)).toBe("http://g.example:7000");
    expect(bootstrapAddr("http://[::1]:8000", 8998)).toBe("http://[::1]:8998");
  });

  test("data parallel: the pinned rank's id; no pinned rank, a rank out of range or no id: nothing", () => {
    expect(rankEngineId("E", 4, 3)).toEqual({ id: "E_dp3" });
    expect(rankEngineId("E", 1, 3)).toEqual({ id: "E" });
    expect(rankEngineId("E", 4)).toEqual({ reason: "dp_rank_not_pinned" });
    expect(rankEngineId("E", 4, 4)).toEqual({ reason: "dp_rank_out_of_range" });
    expect(rankEngineId(null, 1, 0)).toEqual({ reason: "no_engine_id" });
    expect(mintMooncake({ ...prefill, dataParallelSize: 2 }, 1, "x")).toMatchObject({ ok: true, decode: { remote_engine_id: "E_dp1" } });
    expect(mintMooncake({ ...prefill, dataParallelSize: 2 })).toEqual({ ok: false, reason: "dp_rank_not_pinned" });
    expect(mintMooncake({ ...prefill, engineId: null })).toEqual({ ok: false, reason: "no_engine_id" });
  });
});

describe("NIXL", () => {
  test("prefill is tagged; whatever it answers is relayed verbatim", () => {
    expect(nixlPrefillParams()).toEqual({ do_remote_decode: true, do_remote_prefill: false });
    const params = { do_remote_prefill: true, remote_block_ids: [1, 2], remote_engine_id: "N", extra: { x: 1 } };
    expect(nixlRelay({ id: "c", choices: [], kv_transfer_params: params })).toBe(params);
    expect(nixlRelay({ kv_transfer_params: null })).toBeNull();
    expect(nixlRelay({})).toBeNull();
    expect(nixlRelay(null)).toBeNull();
    expect(nixlRelay({ kv_transfer_params: [1] })).toBeNull();
  });
});

describe("leg bodies", () => {
  const body = { model: "m", messages: [], max_tokens: 50, stream: true, stream_options: { include_usage: true }, n: 1, min_tokens: 5, temperature: 0.3 };

  test("prefill: one whole token, n 1, no stream options, params attached; the client's body untouched", () => {
    const copy = structuredClone(body);
    const leg = prefillLegBody(body, { a: 1 });
    expect(leg).toEqual({ model: "m", messages: [], max_tokens: 1, stream: false, n: 1, temperature: 0.3, kv_transfer_params: { a: 1 } });
    expect(body).toEqual(copy);
    expect(prefillLegBody({ model: "m", max_completion_tokens: 99, n: 3 }, {})).toMatchObject({ max_tokens: 1, max_completion_tokens: 1, n: 1 });
  });

  test("decode: the client's body, with the router's params (a client's own are replaced) or none", () => {
    expect(decodeLegBody(body, { b: 2 })).toEqual({ ...body, kv_transfer_params: { b: 2 } });
    expect(decodeLegBody({ ...body, kv_transfer_params: { evil: true } }, null)).toEqual(body);
  });

  test("SGLang: bootstrap fields injected, the room an exact 63-bit integer", () => {
    const room = (1n << 62n) + 12345n; // beyond a double's exact range
    const text = sglangLegJson({ model: "m", stream: true, bootstrap_room: 1 }, { host: "10.0.0.5", port: 8998, room });
    expect(text).toContain(`"bootstrap_room":${room.toString()}}`);
    expect(JSON.parse(text)).toMatchObject({ model: "m", stream: true, bootstrap_host: "10.0.0.5", bootstrap_port: 8998 });
    expect(text.match(/bootstrap_room/g)).toHaveLength(1);
    for (let i = 0; i < 200; i++) {
      const r = newBootstrapRoom();
      expect(r >= 0n && r < 1n << 63n).toBe(true);
    }
    expect(newBootstrapRoom()).not.toBe(newBootstrapRoom());
  });
});
