import { startMockEngine, type MockEngine, type MockEngineOptions } from "@switchboard/mock-engine";
import { parseFlags, startGateway, type GatewayConfig, type GatewayParts, type RunningGateway } from "../src";
import pino from "pino";

/** Config as the CLI would build it, on an ephemeral loopback port with test-friendly probing. */
export function testConfig(flags: string[] = []): GatewayConfig {
  const parsed = parseFlags([
    "--host", "127.0.0.1", "--port", "0",
    "--health-check-interval-secs", "0.2", "--health-check-timeout-secs", "0.5",
    "--health-check-fast-interval-secs", "0.05", "--retry-initial-backoff-ms", "5",
    "--log-level", "silent", "--policy", "round_robin",
    ...flags,
  ]);
  if ("exitCode" in parsed) throw new Error(parsed.output);
  return parsed.config;
}

export class Harness {
  engines: MockEngine[] = [];
  gateways: RunningGateway[] = [];

  async engine(opts: MockEngineOptions = {}): Promise<MockEngine> {
    const e = await startMockEngine({ models: ["mock-model"], ...opts });
    this.engines.push(e);
    return e;
  }

  gateway(config: GatewayConfig, parts: GatewayParts = {}): RunningGateway {
    const gw = startGateway(config, { logger: pino({ level: "silent" }), ...parts });
    this.gateways.push(gw);
    return gw;
  }

  async close() {
    await Promise.all(this.gateways.splice(0).map((g) => g.stop(200)));
    await Promise.all(this.engines.splice(0).map((e) => e.stop()));
  }
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 5000, what = "condition"): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}

export async function readyCount(gw: RunningGateway): Promise<number> {
  return gw.fleet.index.readyCount();
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
}
