import { startMockEngine, type MockEngine, type MockEngineOptions } from "@switchboard/mock-engine";
import type { FakeKubeApi } from "@switchboard/testkit";
import { Writable } from "node:stream";
import pino from "pino";
import type { DiscoveryTiming } from "@switchboard/discovery";
import type { RunningGateway } from "../src";
import { Harness, testConfig } from "./harness";

export const NS = "serving";

/** Short bounds so a reconnect takes tens of milliseconds, not seconds. */
export const testTiming: Partial<DiscoveryTiming> = {
  listTimeoutMs: 3_000,
  watchConnectTimeoutMs: 3_000,
  watchTimeoutSeconds: 60,
  backoffInitialMs: 40,
  backoffCapMs: 300,
  stableAfterMs: 100,
};

/**
 * Engines that look like pods: each on its own loopback address (127.0.0.2, .3, …), all on
 * one port, since `--service-discovery-port` is the same for every pod.
 */
export async function loopbackEngines(n: number, opts: MockEngineOptions = {}): Promise<{ port: number; engines: MockEngine[] }> {
  for (let tries = 0; tries < 5; tries++) {
    const first = await startMockEngine({ models: ["mock-model"], ...opts, host: "127.0.0.2", port: 0 });
    const engines = [first];
    try {
      for (let i = 1; i < n; i++) engines.push(await startMockEngine({ models: ["mock-model"], ...opts, host: `127.0.0.${i + 2}`, port: first.port }));
      return { port: first.port, engines };
    } catch {
      // That port was taken on another loopback address: try another one.
      await Promise.all(engines.map((e) => e.stop()));
    }
  }
  throw new Error("no port free on all loopback addresses");
}

export interface LogCapture {
  lines: Record<string, unknown>[];
  logger: pino.Logger;
}

/** A real pino logger whose JSON lines are kept for assertions. */
export function captureLogs(): LogCapture {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: "debug" }, stream) };
}

/** A gateway discovering from the fake API server through a real kubeconfig (TLS, client cert). */
export function k8sGateway(
  h: Harness,
  api: FakeKubeApi,
  flags: string[],
  parts: Parameters<Harness["gateway"]>[1] = {},
  timing: Partial<DiscoveryTiming> = {},
): RunningGateway {
  const config = testConfig(["--service-discovery", "--kubeconfig", api.kubeconfig(), "--service-discovery-namespace", NS, ...flags]);
  config.serviceDiscovery!.timing = { ...testTiming, ...timing };
  return h.gateway(config, parts);
}

export interface WorkerJson {
  id: string;
  url: string;
  status: string;
  source: string;
  source_key: string;
  models: { id: string; parent: string | null }[];
  sleeping: boolean;
  worker_type: string;
  bootstrap_port: number | null;
}

export async function workersJson(gw: RunningGateway): Promise<{ workers: WorkerJson[]; sources: Record<string, unknown>[] }> {
  const res = await fetch(`${gw.url}/workers`, { signal: AbortSignal.timeout(2_000) });
  return (await res.json()) as { workers: WorkerJson[]; sources: Record<string, unknown>[] };
}

export async function chat(gw: RunningGateway, model = "mock-model"): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    signal: AbortSignal.timeout(5_000),
  });
}

export { seededRandom } from "@switchboard/testkit";
