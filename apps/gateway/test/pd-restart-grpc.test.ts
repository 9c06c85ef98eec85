/**
 * gRPC prefills (identity from GetServerInfo) that restart, registered through the admin API with
 * an HTTP front for inference (`http-port` label): decode params must name the current engine id.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { grpcProbe, closeGrpcClients } from "@switchboard/engines";
import { startMockGrpcEngine, type MockEngine, type MockGrpcEngine } from "@switchboard/mock-engine";
import type { ProbeRequest } from "@switchboard/workers";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";
import { chat, moreProbes, probeLog, ready, released, steadyDelta, view, type ProbeSeen } from "./pd-helpers";

const h = new Harness();
const grpcEngines: MockGrpcEngine[] = [];
let g: MockGrpcEngine; // the prefill that restarts
let g2: MockGrpcEngine; // another prefill (own model)
let g3: MockGrpcEngine; // a prefill with no KV engine id
let front: MockEngine; // HTTP inference front shared by the gRPC prefills
let d: MockEngine;
let gw: RunningGateway;
let client: OpenAI;
let gLog: ProbeSeen[];
let g2Log: ProbeSeen[];
let g3Log: ProbeSeen[];
/** Every probe request the gateway made, by worker url: did it ask for the identity? */
const asked = new Map<string, boolean[]>();

async function grpcEngine(model: string, opts: Parameters<typeof startMockGrpcEngine>[0] = {}) {
  const e = await startMockGrpcEngine({ model, uptimeSeconds: 100, ...opts });
  grpcEngines.push(e);
  return e;
}

async function register(e: MockGrpcEngine): Promise<string> {
  const res = await post(`${gw.url}/workers`, {
    url: e.url,
    worker_type: "prefill",
    kv_connector: "MooncakeConnector",
    bootstrap_port: front.bootstrapPort,
    labels: { "http-port": String(front.port) },
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function decodeIds(n: number, model = "mock-model"): Promise<(string | undefined)[]> {
  const from = d.received.length;
  for (let i = 0; i < n; i++) {
    if (i % 2) {
      const s = await client.chat.completions.create({ ...chat(`g${i}`), model, stream: true });
      for await (const _ of s);
    } else {
      await client.completions.create({ model, prompt: `g${i}`, max_tokens: 2 });
    }
  }
  return d.received.slice(from).map((r) => r.kv_transfer_params?.remote_engine_id as string | undefined);
}

beforeAll(async () => {
  g = await grpcEngine("mock-model");
  g2 = await grpcEngine("other-model");
  g3 = await grpcEngine("noid-model", { faults: { noEngineId: true }, kvConnector: "" });
  front = await h.engine({ models: ["mock-model", "other-model", "noid-model"], role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0 });
  d = await h.engine({ models: ["mock-model", "other-model", "noid-model"], role: "decode", kvConnector: "MooncakeConnector" });
  const probe = (req: ProbeRequest) => {
    const list = asked.get(req.spec.url) ?? [];
    list.push(req.wantIdentity);
    asked.set(req.spec.url, list);
    return grpcProbe(req);
  };
  gw = h.gateway(testConfig(["--pd-disaggregation", "--decode", d.url]), { probes: { grpc: probe } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
  gLog = probeLog(gw, g.url);
  g2Log = probeLog(gw, g2.url);
  g3Log = probeLog(gw, g3.url);
  for (const e of [g, g2, g3]) await register(e);
  await ready(gw, [g.url, g2.url, g3.url, d.url]);
  await waitFor(() => view(gw, g.url).engineId === g.state.engineId, 5000, "engine id read");
});
afterAll(async () => {
  await h.close();
  closeGrpcClients();
  await Promise.all(grpcEngines.map((e) => e.stop()));
});

describe("gRPC prefill restarts (GetServerInfo kv_engine_id)", () => {
  test("registered prefill: gRPC probed, HTTP front serves the leg, decode names the gRPC-reported id", async () => {
    const v = view(gw, g.url);
    expect(v.spec).toMatchObject({ connectionMode: "grpc", workerType: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: front.bootstrapPort });
    front.clearReceived();
    expect(await decodeIds(2)).toEqual([g.state.engineId, g.state.engineId]);
    expect(front.received).toHaveLength(2);
    expect(d.received.at(-1)!.kv_transfer_params!.remote_bootstrap_addr).toBe(`http://127.0.0.1:${front.bootstrapPort}`);
  });

  test("restart with downtime and a new id: after Ready again every decode names the new id, none the old", async () => {
    const old = g.state.engineId;
    g.restart({ downtimeMs: 1_200 });
    const fresh = g.state.engineId;
    expect(fresh).not.toBe(old);
    await waitFor(() => view(gw, g.url).status === "not_ready", 5000, "prefill NotReady");
    await ready(gw, [g.url]);
    expect(view(gw, g.url).engineId).toBe(fresh);
    const ids = await decodeIds(6);
    expect(ids).toEqual(Array(6).fill(fresh));
    await released(gw);
  });

  test("in-place restart faster than any failed probe: the first probe after it adopts the new id", async () => {
    const before = view(gw, g.url).restarts;
    const from = gLog.length;
    const t0 = Date.now();
    g.restart();
    const fresh = g.state.engineId;
    await waitFor(() => gLog.slice(from).some((s) => s.healthy && s.startedAt > t0 + 20), 5000, "a healthy probe that started after the restart");
    const firstAfter = gLog.slice(from).find((s) => s.healthy && s.startedAt > t0 + 20)!;
    expect(firstAfter.engineId).toBe(fresh);
    expect(firstAfter.restarts).toBe(before + 1);
    expect(gLog.slice(from).every((s) => s.status === "ready")).toBe(true);
    expect(await decodeIds(4)).toEqual(Array(4).fill(fresh));
  });

  test("GetServerInfo hangs while HealthCheck answers: old id kept, Ready and probed; other workers' probes go on", async () => {
    const old = g.state.engineId;
    g.setFault("hangServerInfo");
    try {
      g.restart({ downtimeMs: 800 }); // it fails probes, then answers health but never GetServerInfo
      const fresh = g.state.engineId;
      await waitFor(() => view(gw, g.url).status === "not_ready", 5000, "prefill NotReady");
      await ready(gw, [g.url]);
      expect(view(gw, g.url).engineId).toBe(old);
      expect(view(gw, g.url).engineIdConfirmed).toBe(false);

      const mine = gLog.length;
      const theirs = g2Log.length;
      const g2Id = g2.state.engineId;
      g2.restart(); // the other worker's restart is noticed while this one's reads hang
      await moreProbes(gLog, 3);
      const hung = gLog.slice(mine);
      expect(hung.every((s) => s.healthy && s.status === "ready" && s.engineId === old && !s.confirmed)).toBe(true);
      expect(asked.get(g.url)!.slice(-3)).toEqual([true, true, true]); // asked again on every probe
      expect(g2Log.length - theirs).toBeGreaterThanOrEqual(3);
      await waitFor(() => view(gw, g2.url).engineId === g2.state.engineId, 3000, "other worker's new id");
      expect(view(gw, g2.url).engineId).not.toBe(g2Id);

      g.clearFaults();
      await waitFor(() => view(gw, g.url).engineId === fresh && view(gw, g.url).engineIdConfirmed, 5000, "new id read once GetServerInfo answers");
      expect(await decodeIds(2)).toEqual([fresh, fresh]);
    } finally {
      g.clearFaults();
    }
  });

  test("partial GetServerInfo: previous id kept, asked again every probe, adopted once a read completes", async () => {
    const old = g.state.engineId;
    g.setFault("partialServerInfo");
    try {
      g.restart({ downtimeMs: 800 });
      const fresh = g.state.engineId;
      await waitFor(() => view(gw, g.url).status === "not_ready", 5000, "prefill NotReady");
      await ready(gw, [g.url]);
      expect(view(gw, g.url).engineId).toBe(old);
      expect(view(gw, g.url).engineIdConfirmed).toBe(false);
      const calls = g.calls.serverInfo;
      await moreProbes(gLog, 3);
      expect(asked.get(g.url)!.slice(-3)).toEqual([true, true, true]);
      expect(g.calls.serverInfo).toBeGreaterThanOrEqual(calls + 3);
      expect(view(gw, g.url).engineId).toBe(old);

      g.clearFaults();
      await waitFor(() => view(gw, g.url).engineId === fresh && view(gw, g.url).engineIdConfirmed, 5000, "new id");
      expect(await steadyDelta(gLog, 3, () => asked.get(g.url)!.filter(Boolean).length)).toBe(0); // confirmed: not asked again
      expect(await decodeIds(2)).toEqual([fresh, fresh]);
    } finally {
      g.clearFaults();
    }
  });

  test("an engine with no id: asked once, not on every probe", async () => {
    expect(view(gw, g3.url).engineId).toBeNull();
    expect(view(gw, g3.url).engineIdConfirmed).toBe(true);
    const asks = () => asked.get(g3.url)!.filter(Boolean).length;
    expect(asks()).toBeGreaterThanOrEqual(1);
    expect(await steadyDelta(g3Log, 6, asks)).toBe(0);
    const res = await post(`${gw.url}/v1/completions`, { model: "noid-model", prompt: "x", max_tokens: 2 });
    expect(res.status).toBe(200);
    expect(d.received.at(-1)!.kv_transfer_params).toBeUndefined();
  });

  test("a gRPC-only prefill (no HTTP front) is refused with a clear error, not faked", async () => {
    const bare = await grpcEngine("bare-model");
    const dec = await h.engine({ models: ["bare-model"], role: "decode" });
    const ids: string[] = [];
    for (const [url, worker_type] of [[bare.url, "prefill"], [dec.url, "decode"]]) {
      ids.push(((await (await post(`${gw.url}/workers`, { url, worker_type })).json()) as { id: string }).id);
    }
    await waitFor(() => ids.every((id) => gw.fleet.index.get(id)?.status === "ready"), 5000, "bare gRPC prefill and its decode ready");
    const r = await post(`${gw.url}/v1/completions`, { model: "bare-model", prompt: "x", max_tokens: 2 });
    expect(r.status).toBe(501);
    const e = ((await r.json()) as any).error;
    expect(e.code).toBe("grpc_data_path_unsupported");
    expect(e.message).toContain(bare.url);
    expect(dec.received).toHaveLength(0);
  });
});
