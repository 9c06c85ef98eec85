/** The HTTP probe's identity reads that PD depends on: bootstrap /query, DP base ids, bounded reads. */
import { afterAll, describe, expect, test } from "bun:test";
import { startMockEngine, type MockEngine, type MockEngineOptions } from "@switchboard/mock-engine";
import { defaultHealthConfig, type EngineIdentity, type WorkerSpec } from "@switchboard/workers";
import { httpProbe, parseBootstrapQuery } from "../src/index.ts";

const engines: MockEngine[] = [];
afterAll(() => Promise.all(engines.map((e) => e.stop())));
async function engine(o: MockEngineOptions) {
  const e = await startMockEngine(o);
  engines.push(e);
  return e;
}

function spec(e: MockEngine, over: Partial<WorkerSpec> = {}): WorkerSpec {
  return { id: "w", url: e.url, connectionMode: "http", workerType: "prefill", labels: {}, priority: 0, source: "t", sourceKey: e.url, kvConnector: "MooncakeConnector", bootstrapPort: e.bootstrapPort, ...over };
}

const probe = (s: WorkerSpec, timeoutMs = 2000) =>
  httpProbe({ spec: s, config: { ...defaultHealthConfig, timeoutMs }, wantModels: false, wantIdentity: true, knownIncarnation: null, signal: AbortSignal.timeout(timeoutMs + 1000) });

describe("bootstrap /query parsing", () => {
  test("DP ranks named E_dp<r>: the worker keeps the base id E", () => {
    const q = parseBootstrapQuery({ "0": { engine_id: "E_dp0" }, "1": { engine_id: "E_dp1" } });
    expect(q).toMatchObject({ engineId: "E", dataParallelSize: 2 });
    // Ranks that do not follow the pattern: rank 0's id as given.
    expect(parseBootstrapQuery({ "0": { engine_id: "A" }, "1": { engine_id: "B" } }).engineId).toBe("A");
    expect(parseBootstrapQuery({ "0": { engine_id: "E" } })).toMatchObject({ engineId: "E", dataParallelSize: 1 });
    expect(parseBootstrapQuery({}).engineId).toBeNull();
    expect(() => parseBootstrapQuery({ "0": { worker_addr: {} } })).toThrow();
  });
});

describe("httpProbe identity", () => {
  test("a DP prefill's identity is its base id and DP size", async () => {
    const e = await engine({ role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0, dataParallelSize: 2, engineId: "BASE" });
    const r = await probe(spec(e));
    expect(r.identity).toMatchObject({ engineId: "BASE", dataParallelSize: 2 });
  });

  test("decode workers and SGLang/NIXL prefills have no Mooncake bootstrap to ask", async () => {
    const e = await engine({ role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0 });
    for (const over of [{ workerType: "decode" as const }, { kvConnector: "sglang" as const }, { kvConnector: "NixlConnector" as const }]) {
      const before = e.state.bootstrapQueries;
      const r = await probe(spec(e, over));
      expect(r.healthy).toBe(true);
      expect((r.identity as EngineIdentity).engineId).toBeNull();
      expect(e.state.bootstrapQueries).toBe(before);
    }
    const before = e.state.bootstrapQueries;
    await probe(spec(e));
    expect(e.state.bootstrapQueries).toBe(before + 1);
  });

  test("a /query that hangs is a failed read inside a healthy probe", async () => {
    const e = await engine({ role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0 });
    e.setFault({ hangBootstrap: true });
    const r = await probe(spec(e), 400);
    expect(r.healthy).toBe(true);
    expect(r.identity).toBe("failed");
    expect(r.incarnation).toStartWith("start:");
  });
});
