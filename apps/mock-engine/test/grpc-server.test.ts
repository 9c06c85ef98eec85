import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createEngineGrpcClient, EngineRpcError, type EngineGrpcClient } from "@switchboard/engines/src/grpc/index.ts";
import { startMockGrpcEngine, type MockGrpcEngine } from "../src/grpc/index.ts";

let engine: MockGrpcEngine;
let client: EngineGrpcClient;

beforeAll(async () => {
  engine = await startMockGrpcEngine({ engineId: "first", kvConnector: "NixlConnector", kvRole: "kv_consumer", uptimeSeconds: 600 });
  client = createEngineGrpcClient(engine.url);
});

afterAll(async () => {
  client?.close();
  await engine?.stop();
});

describe("mock gRPC engine", () => {
  afterEach(() => engine.clearFaults());

  test("binds loopback on an ephemeral port", () => {
    expect(engine.port).toBeGreaterThan(0);
    expect(engine.target).toBe(`127.0.0.1:${engine.port}`);
    expect(engine.url).toBe(`grpc://127.0.0.1:${engine.port}`);
  });

  test("reports its state and counts calls", async () => {
    const before = { ...engine.calls };
    const info = await client.getServerInfo(2_000);
    expect(info).toMatchObject({ kvEngineId: "first", kvConnector: "NixlConnector", kvRole: "kv_consumer", dataParallelSize: 1 });
    expect(info.uptimeSeconds).toBeGreaterThanOrEqual(600);
    await client.healthCheck(2_000);
    await client.getModelInfo(2_000);
    await client.getLoads(2_000);
    await client.standardHealth("", 2_000);
    expect(engine.calls).toEqual({
      health: before.health + 1,
      standardHealth: before.standardHealth + 1,
      serverInfo: before.serverInfo + 1,
      modelInfo: before.modelInfo + 1,
      loads: before.loads + 1,
      abort: before.abort,
    });
  });

  test("faults switch on and off", async () => {
    engine.setFault("noEngineId");
    expect((await client.getServerInfo(2_000)).kvEngineId).toBe("");
    engine.setFault("partialServerInfo");
    const partial = await client.getServerInfo(2_000);
    expect(partial.serverType).toBe("");
    expect(partial.uptimeSeconds).toBe(0);
    engine.setFault("hangServerInfo");
    engine.setFault("partialServerInfo", false);
    expect((await client.healthCheck(2_000)).healthy).toBe(true);
    expect(((await client.getServerInfo(200).catch((e) => e)) as EngineRpcError).deadlineExceeded).toBe(true);
    engine.setFault("hangHealth");
    expect(((await client.healthCheck(200).catch((e) => e)) as EngineRpcError).deadlineExceeded).toBe(true);
    engine.clearFaults();
    expect((await client.healthCheck(2_000)).healthy).toBe(true);
    expect((await client.getServerInfo(2_000)).kvEngineId).toBe("first");
  });

  test("instant restart: new id and start time, never unavailable", async () => {
    const oldId = engine.state.engineId;
    engine.restart();
    expect(engine.state.restarts).toBe(1);
    const info = await client.getServerInfo(2_000);
    expect(info.kvEngineId).not.toBe(oldId);
    expect(info.uptimeSeconds).toBeLessThan(60);
    expect((await client.healthCheck(2_000)).healthy).toBe(true);
  });

  test("restart keeping the id only resets uptime", async () => {
    const id = engine.state.engineId;
    engine.state.startedAtMs -= 3_600_000;
    engine.restart({ newEngineId: false });
    const info = await client.getServerInfo(2_000);
    expect(info.kvEngineId).toBe(id);
    expect(info.uptimeSeconds).toBeLessThan(60);
  });

  test("restart with downtime: every RPC UNAVAILABLE for the window, then back", async () => {
    engine.restart({ downtimeMs: 500 });
    const err = (await client.healthCheck(2_000).catch((e) => e)) as EngineRpcError;
    expect(err.message).toContain("UNAVAILABLE");
    expect((await client.getServerInfo(2_000).catch((e) => e)) as EngineRpcError).toBeInstanceOf(EngineRpcError);
    const until = Date.now() + 10_000;
    while (!(await client.healthCheck(2_000).then((h) => h.healthy, () => false))) {
      if (Date.now() > until) throw new Error("engine did not come back");
      await Bun.sleep(50);
    }
    expect((await client.getServerInfo(2_000)).uptimeSeconds).toBeLessThan(60);
  });

  test("GetLoads builds one load per DP rank, overridable per rank", async () => {
    const dp = await startMockGrpcEngine({ dataParallelSize: 3, loads: [{ dpRank: 2, numWaitingReqs: 7 }] });
    const c = createEngineGrpcClient(dp.target);
    try {
      const loads = await c.getLoads(2_000);
      expect(loads.dpRankCount).toBe(3);
      expect(loads.loads.map((l) => [l.dpRank, l.numWaitingReqs])).toEqual([[0, 0], [1, 0], [2, 7]]);
      expect((await c.getLoads(2_000, { dpRank: 2 })).loads).toHaveLength(1);
    } finally {
      c.close();
      await dp.stop();
    }
  });
});
