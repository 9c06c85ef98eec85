import { parseFlags, startGateway, type GatewayParts, type RunningGateway } from "@switchboard/gateway";
import { startMockEngine, type MockEngine } from "@switchboard/mock-engine";
import pino from "pino";

/** Gateways and mock engines for the page tests, on loopback ephemeral ports; `close` stops them all. */
export class Rig {
  engines: MockEngine[] = [];
  gateways: RunningGateway[] = [];

  async engine(): Promise<MockEngine> {
    const e = await startMockEngine({ models: ["mock-model"] });
    this.engines.push(e);
    return e;
  }

  gateway(flags: string[], parts: GatewayParts = {}): RunningGateway {
    const parsed = parseFlags([
      "--host", "127.0.0.1", "--port", "0",
      "--health-check-interval-secs", "0.2", "--health-check-timeout-secs", "0.5",
      "--health-check-fast-interval-secs", "0.05", "--log-level", "silent",
      ...flags,
    ]);
    if ("exitCode" in parsed) throw new Error(parsed.output);
    const gw = startGateway(parsed.config, { logger: pino({ level: "silent" }), ...parts });
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
    await Bun.sleep(20);
  }
}
