import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockGrpcEngine, type MockGrpcEngine } from "@switchboard/mock-engine/src/grpc/index.ts";
import { createEngineGrpcClient, EngineRpcError, parseGrpcTarget, type EngineGrpcClient } from "../src/grpc/index.ts";

let engine: MockGrpcEngine;
let hanging: MockGrpcEngine;
let client: EngineGrpcClient;
let hangingClient: EngineGrpcClient;

beforeAll(async () => {
  engine = await startMockGrpcEngine({
    engineId: "engine-a",
    kvConnector: "MooncakeConnector",
    kvRole: "kv_producer",
    dataParallelSize: 2,
    model: "served-name",
    modelPath: "/models/llama",
    uptimeSeconds: 120,
    loads: [{ dpRank: 1, numRunningReqs: 3, numWaitingReqs: 4, tokenUsage: 0.25 }],
  });
  hanging = await startMockGrpcEngine({ faults: { hangServerInfo: true } });
  client = createEngineGrpcClient(engine.url);
  hangingClient = createEngineGrpcClient(hanging.target);
});

afterAll(async () => {
  client?.close();
  hangingClient?.close();
  await engine?.stop();
  await hanging?.stop();
});

describe("gRPC client ↔ mock engine", () => {
  test("HealthCheck", async () => {
    expect(await client.healthCheck(2_000)).toEqual({ healthy: true, message: "" });
    engine.setFault("unhealthy");
    try {
      expect((await client.healthCheck(2_000)).healthy).toBe(false);
    } finally {
      engine.clearFaults();
    }
  });

  test("GetServerInfo in camelCase", async () => {
    const info = await client.getServerInfo(2_000);
    expect(info.kvEngineId).toBe("engine-a");
    expect(info.kvConnector).toBe("MooncakeConnector");
    expect(info.kvRole).toBe("kv_producer");
    expect(info.dataParallelSize).toBe(2);
    expect(info.serverType).not.toBe("");
    expect(info.uptimeSeconds).toBeGreaterThanOrEqual(120);
    expect(info).not.toHaveProperty("kv_engine_id");
  });

  test("GetModelInfo", async () => {
    const info = await client.getModelInfo(2_000);
    expect(info.servedModelName).toBe("served-name");
    expect(info.modelPath).toBe("/models/llama");
    expect(info.isGeneration).toBe(true);
    expect(info.architectures).toEqual(["LlamaForCausalLM"]);
    expect(info.eosTokenIds).toEqual([2]);
  });

  test("GetLoads: all ranks, and one rank (rank 0 is a real value, not 'unset')", async () => {
    const all = await client.getLoads(2_000);
    expect(all.dpRankCount).toBe(2);
    expect(all.loads.map((l) => l.dpRank)).toEqual([0, 1]);
    expect(all.loads[1]).toMatchObject({ numRunningReqs: 3, numWaitingReqs: 4, tokenUsage: 0.25 });
    const rank0 = await client.getLoads(2_000, { dpRank: 0 });
    expect(rank0.loads.map((l) => l.dpRank)).toEqual([0]);
    const rank1 = await client.getLoads(2_000, { dpRank: 1, include: ["core"] });
    expect(rank1.loads.map((l) => l.dpRank)).toEqual([1]);
  });

  test("Abort", async () => {
    await client.abort(["req-1", "req-2"], 2_000);
    expect(engine.state.abortedRequestIds).toEqual(["req-1", "req-2"]);
  });

  test("grpc.health.v1 Check", async () => {
    expect(await client.standardHealth("", 2_000)).toBe("SERVING");
    expect(await client.standardHealth("vllm.grpc.engine.VllmEngine", 2_000)).toBe("SERVING");
    expect(await client.standardHealth("no.such.Service", 2_000)).toBe("SERVICE_UNKNOWN");
    engine.setFault("unhealthy");
    try {
      expect(await client.standardHealth("", 2_000)).toBe("NOT_SERVING");
    } finally {
      engine.clearFaults();
    }
  });

  test("concurrent calls on one client each reach the engine once", async () => {
    const before = { ...engine.calls };
    await Promise.all([client.healthCheck(2_000), client.getServerInfo(2_000), client.getModelInfo(2_000), client.getLoads(2_000)]);
    expect(engine.calls.health).toBe(before.health + 1);
    expect(engine.calls.serverInfo).toBe(before.serverInfo + 1);
    expect(engine.calls.modelInfo).toBe(before.modelInfo + 1);
    expect(engine.calls.loads).toBe(before.loads + 1);
  });
});

describe("deadlines", () => {
  test("a GetServerInfo that never answers rejects with DEADLINE_EXCEEDED", async () => {
    const err = await hangingClient.getServerInfo(300).catch((e) => e);
    expect(err).toBeInstanceOf(EngineRpcError);
    expect((err as EngineRpcError).deadlineExceeded).toBe(true);
    expect((err as EngineRpcError).rpc).toBe("GetServerInfo");
    expect((err as Error).message).toContain("DEADLINE_EXCEEDED");
    expect((err as Error).message).toContain(hanging.target);
  });

  test("a hanging call blocks neither another server nor HealthCheck on the same channel", async () => {
    let settled = false;
    const stuck = hangingClient.getServerInfo(1_500).finally(() => (settled = true));
    stuck.catch(() => {});
    expect((await client.healthCheck(2_000)).healthy).toBe(true);
    expect((await hangingClient.healthCheck(2_000)).healthy).toBe(true);
    expect(settled).toBe(false);
    const err = await stuck.catch((e) => e);
    expect((err as EngineRpcError).deadlineExceeded).toBe(true);
  });

  test("an aborted signal cancels the call", async () => {
    const ac = new AbortController();
    const pending = hangingClient.getServerInfo(10_000, { signal: ac.signal }).catch((e) => e);
    setTimeout(() => ac.abort(), 50);
    const err = (await pending) as EngineRpcError;
    expect(err).toBeInstanceOf(EngineRpcError);
    expect(err.deadlineExceeded).toBe(false);
    expect(err.message).toContain("CANCELLED");
  });

  test("nothing listening → UNAVAILABLE, not a hang", async () => {
    const gone = await startMockGrpcEngine();
    const port = gone.port;
    await gone.stop();
    const dead = createEngineGrpcClient(`grpc://127.0.0.1:${port}`);
    try {
      const err = (await dead.healthCheck(5_000).catch((e) => e)) as EngineRpcError;
      expect(err).toBeInstanceOf(EngineRpcError);
      expect(err.message).toContain("UNAVAILABLE");
    } finally {
      dead.close();
    }
  });
});

describe("targets", () => {
  test("grpc://, grpcs:// and bare host:port", () => {
    expect(parseGrpcTarget("grpc://10.0.0.1:50051")).toEqual({ address: "10.0.0.1:50051", tls: false });
    expect(parseGrpcTarget("grpc://engine:50051/")).toEqual({ address: "engine:50051", tls: false });
    expect(parseGrpcTarget("grpcs://engine:443")).toEqual({ address: "engine:443", tls: true });
    expect(parseGrpcTarget("127.0.0.1:9")).toEqual({ address: "127.0.0.1:9", tls: false });
    expect(() => parseGrpcTarget("http://engine:8000")).toThrow();
  });
});
