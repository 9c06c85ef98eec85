import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockGrpcEngine, type MockGrpcEngine } from "@switchboard/mock-engine/src/grpc/index.ts";
import { defaultHealthConfig, type EngineIdentity, type ProbeResult, type WorkerSpec } from "@switchboard/workers";
import { closeGrpcClients, grpcProbe, incarnationMarker } from "../src/grpc/index.ts";

const engines: MockGrpcEngine[] = [];
async function engine(opts: Parameters<typeof startMockGrpcEngine>[0] = {}) {
  const e = await startMockGrpcEngine({ uptimeSeconds: 3_600, ...opts });
  engines.push(e);
  return e;
}

afterAll(async () => {
  closeGrpcClients();
  await Promise.all(engines.map((e) => e.stop()));
});

let seq = 0;
function spec(url: string): WorkerSpec {
  return { id: `w${++seq}`, url, connectionMode: "grpc", workerType: "prefill", labels: {}, priority: 0, source: "static", sourceKey: url };
}

interface Want {
  models?: boolean;
  identity?: boolean;
  known?: string | null;
}

function probe(s: WorkerSpec, want: Want = {}, timeoutMs = 2_000, signal = new AbortController().signal) {
  return grpcProbe({
    spec: s,
    config: { ...defaultHealthConfig, timeoutMs },
    wantModels: want.models ?? false,
    wantIdentity: want.identity ?? false,
    knownIncarnation: want.known ?? null,
    signal,
  });
}

/** Fails the test if the probe does not settle within `ms` (a generous bound, not a timing claim). */
async function bounded(p: Promise<ProbeResult>, ms: number): Promise<ProbeResult> {
  let timer: Timer | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`probe still running after ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(cond: () => Promise<boolean> | boolean, timeoutMs: number, stepMs = 50) {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await Bun.sleep(stepMs);
  }
}

const identityOf = (r: ProbeResult) => r.identity as EngineIdentity;

describe("grpcProbe", () => {
  let healthy: MockGrpcEngine;
  beforeAll(async () => {
    healthy = await engine({ engineId: "eng-1", kvConnector: "MooncakeConnector", kvRole: "kv_producer", dataParallelSize: 2, model: "llama-8b" });
  });

  test("healthy engine: identity, models and an incarnation", async () => {
    const r = await probe(spec(healthy.url), { models: true, identity: true });
    expect(r.healthy).toBe(true);
    expect(r.incarnation).toStartWith("eng-1|");
    expect(r.identity).toEqual({
      engineId: "eng-1",
      incarnation: r.incarnation!,
      dataParallelSize: 2,
      kvConnector: "MooncakeConnector",
      kvRole: "kv_producer",
    });
    expect(r.models).toEqual([{ id: "llama-8b", root: "/models/mock-model", maxModelLen: 4096 }]);
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
  });

  test("parts not asked for are absent; GetServerInfo still runs for the incarnation", async () => {
    const before = healthy.calls.serverInfo;
    const modelReads = healthy.calls.modelInfo;
    const r = await probe(spec(healthy.url));
    expect(r.healthy).toBe(true);
    expect(r).not.toHaveProperty("identity");
    expect(r).not.toHaveProperty("models");
    expect(r.incarnation).toStartWith("eng-1|");
    expect(healthy.calls.serverInfo).toBe(before + 1);
    expect(healthy.calls.modelInfo).toBe(modelReads);
  });

  test("the incarnation is stable across probes of the same process", async () => {
    const s = spec(healthy.url);
    const first = (await probe(s)).incarnation;
    for (let i = 0; i < 5; i++) {
      await Bun.sleep(20);
      expect((await probe(s)).incarnation).toBe(first);
    }
  });

  test("unhealthy engine: not healthy, nothing else read", async () => {
    const e = await engine({ faults: { unhealthy: true } });
    const r = await probe(spec(e.url), { models: true, identity: true });
    expect(r.healthy).toBe(false);
    expect(r.detail).toContain("unhealthy");
    expect(r.identity).toBeUndefined();
    expect(r.incarnation).toBeUndefined();
    expect(e.calls.serverInfo).toBe(0);
  });

  test("HealthCheck that never answers: unhealthy within the probe timeout", async () => {
    const e = await engine({ faults: { hangHealth: true } });
    const r = await bounded(probe(spec(e.url), { identity: true }, 300), 5_000);
    expect(r.healthy).toBe(false);
    expect(r.detail).toContain("DEADLINE_EXCEEDED");
  });

  test("nothing listening: unhealthy", async () => {
    const e = await startMockGrpcEngine();
    await e.stop();
    const r = await bounded(probe(spec(e.url), { identity: true }), 5_000);
    expect(r.healthy).toBe(false);
    expect(r.detail).toContain("UNAVAILABLE");
  });

  test("GetServerInfo hangs while HealthCheck answers: healthy, identity failed, bounded by the probe timeout", async () => {
    const e = await engine({ faults: { hangServerInfo: true } });
    const r = await bounded(probe(spec(e.url), { identity: true, models: true }, 400), 5_000);
    expect(r.healthy).toBe(true);
    expect(r.identity).toBe("failed");
    expect(r.incarnation).toBeUndefined();
    expect(r.models).toEqual([{ id: "mock-model", root: "/models/mock-model", maxModelLen: 4096 }]);
    expect(r.detail).toContain("DEADLINE_EXCEEDED");
    // One deadline for the whole probe: far from 2 × timeout per call, with room for a slow machine.
    expect(r.latencyMs).toBeLessThan(400 + 2_000);
  });

  test("a hung probe does not hold up probes of other engines", async () => {
    const stuck = await engine({ faults: { hangServerInfo: true } });
    let settled = false;
    const slow = probe(spec(stuck.url), { identity: true }, 1_500).finally(() => (settled = true));
    const fast = await probe(spec(healthy.url), { identity: true });
    expect(fast.healthy).toBe(true);
    expect(settled).toBe(false);
    expect((await slow).identity).toBe("failed");
  });

  test("the caller's signal ends the probe", async () => {
    const e = await engine({ faults: { hangHealth: true } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await bounded(probe(spec(e.url), {}, 30_000, ac.signal), 5_000);
    expect(r.healthy).toBe(false);
    expect(r.detail).toContain("CANCELLED");
  });

  test("partial GetServerInfo: healthy, identity failed, no incarnation", async () => {
    const e = await engine({ faults: { partialServerInfo: true } });
    const r = await probe(spec(e.url), { identity: true });
    expect(r.healthy).toBe(true);
    expect(r.identity).toBe("failed");
    expect(r.incarnation).toBeUndefined();
    expect(r.detail).toContain("partial");
  });

  test("engine with no id: a completed read with engineId null", async () => {
    const e = await engine({ faults: { noEngineId: true }, kvConnector: "", kvRole: "" });
    const r = await probe(spec(e.url), { identity: true });
    expect(r.healthy).toBe(true);
    expect(identityOf(r).engineId).toBeNull();
    expect(identityOf(r).incarnation).toBe(r.incarnation!);
    expect(r.incarnation).toBeDefined();
  });

  test("GetModelInfo naming no model: healthy, models failed", async () => {
    const e = await engine();
    const s = spec(e.url);
    const r1 = await probe(s, { models: true });
    expect(r1.models).not.toBe("failed");
    e.state.modelPath = "";
    e.state.model = "";
    const r2 = await probe(s, { models: true });
    expect(r2.healthy).toBe(true);
    expect(r2.models).toBe("failed");
  });
});

describe("restart detection", () => {
  test("instant in-place restart with a new id: no failed probe, new incarnation and id", async () => {
    const e = await engine({ engineId: "before" });
    const s = spec(e.url);
    const r1 = await probe(s, { identity: true });
    e.restart({ newEngineId: true });
    const r2 = await probe(s, { identity: true });
    expect(r2.healthy).toBe(true);
    expect(r2.incarnation).not.toBe(r1.incarnation);
    expect(identityOf(r2).engineId).toBe(e.state.engineId);
    expect(identityOf(r2).engineId).not.toBe("before");
  });

  test("instant restart keeping the id: uptime going backwards is a new incarnation", async () => {
    const e = await engine({ engineId: "pinned" });
    const s = spec(e.url);
    const r1 = await probe(s);
    e.restart({ newEngineId: false });
    const r2 = await probe(s);
    expect(r2.healthy).toBe(true);
    expect(r2.incarnation).toStartWith("pinned|");
    expect(r2.incarnation).not.toBe(r1.incarnation);
  });

  test("restart with downtime: failed probes, then a new incarnation", async () => {
    const e = await engine({ engineId: "old" });
    const s = spec(e.url);
    const r1 = await probe(s, { identity: true });
    e.restart({ newEngineId: true, downtimeMs: 600 });
    const during = await probe(s, { identity: true });
    expect(during.healthy).toBe(false);
    expect(during.detail).toContain("UNAVAILABLE");
    let after: ProbeResult | undefined;
    await waitFor(async () => (after = await probe(s, { identity: true })).healthy, 10_000);
    expect(after!.incarnation).not.toBe(r1.incarnation);
    expect(identityOf(after!).engineId).toBe(e.state.engineId);
    expect(identityOf(after!).engineId).not.toBe("old");
  });

  test("a new process on the same address (socket closed and re-bound) is found by the cached channel", async () => {
    const first = await startMockGrpcEngine({ engineId: "proc-1", uptimeSeconds: 3_600 });
    const s = spec(first.url);
    const r1 = await probe(s, { identity: true });
    await first.stop();
    expect((await probe(s)).healthy).toBe(false);
    const second = await engine({ engineId: "proc-2", port: first.port, uptimeSeconds: 0 });
    let after: ProbeResult | undefined;
    await waitFor(async () => (after = await probe(s, { identity: true })).healthy, 10_000, 100);
    expect(identityOf(after!).engineId).toBe("proc-2");
    expect(after!.incarnation).not.toBe(r1.incarnation);
    expect(second.calls.health).toBeGreaterThan(0);
  });

  test("a restart seen against the known incarnation reads identity and models in the same probe", async () => {
    const e = await engine({ engineId: "gen-1", model: "m" });
    const s = spec(e.url);
    const known = (await probe(s)).incarnation!;
    const steady = await probe(s, { known });
    expect(steady.incarnation).toBe(known);
    expect(steady).not.toHaveProperty("identity");
    expect(steady).not.toHaveProperty("models");
    e.restart();
    const r = await probe(s, { known });
    expect(r.healthy).toBe(true);
    expect(r.incarnation).not.toBe(known);
    expect(identityOf(r).engineId).toBe(e.state.engineId);
    expect(r.models).toEqual([{ id: "m", root: "/models/mock-model", maxModelLen: 4096 }]);
  });

  test("after closeGrpcClients the known incarnation is kept despite jitter (no false restart)", async () => {
    const e = await engine({ engineId: "steady" });
    // Start the engine 0.3 s past a whole second; the worker's marker rounds 1 s lower than a fresh one would.
    const wholeSecond = Math.floor(Date.now() / 1000) - 3_600;
    e.state.startedAtMs = wholeSecond * 1000 + 300;
    const known = incarnationMarker("steady", wholeSecond - 1);
    closeGrpcClients();
    const r = await probe(spec(e.url), { known });
    expect(r.healthy).toBe(true);
    expect(r.incarnation).toBe(known);
    expect(r).not.toHaveProperty("identity");
  });
});
