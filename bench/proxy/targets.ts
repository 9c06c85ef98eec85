/** The processes under test: mock engines and switchboard gateways, each started from its real CLI. */
import { bunScript, freePort, spawnChild, waitHttp, type Child } from "./procs.ts";

export interface Engine {
  url: string;
  child: Child;
}

export interface GatewayProc {
  url: string;
  pid: number;
  child: Child;
}

/** One engine per process, so no engine shares an event loop with the gateway or another engine. */
export async function startEngines(logDir: string, name: string, model: string, count: number, tokenDelayMs: number): Promise<Engine[]> {
  const engines = Array.from({ length: count }, (_, i) => {
    const port = freePort();
    const args = ["--port", String(port), "--model", model, "--token-delay-ms", String(tokenDelayMs), "--record-limit", "0"];
    return { url: `http://127.0.0.1:${port}`, child: spawnChild(`${name}-${i}`, bunScript("apps/mock-engine/src/main.ts", args), logDir) };
  });
  await Promise.all(engines.map((e) => waitHttp(`${e.url}/health`, 15_000, (s) => s === 200, e.child)));
  return engines;
}

/** A gateway process, ready once `expectReady` workers are Ready (bounded by `timeoutMs`). */
export async function startGateway(
  logDir: string,
  name: string,
  policy: string,
  workerUrls: string[],
  extraFlags: string[] = [],
  timeoutMs = 30_000,
): Promise<GatewayProc & { readyAfterMs: number }> {
  const port = freePort();
  const args = ["--host", "127.0.0.1", "--port", String(port), "--policy", policy, "--log-level", "warn", ...extraFlags, "--worker-urls", ...workerUrls];
  const started = performance.now();
  const child = spawnChild(name, bunScript("apps/gateway/src/main.ts", args), logDir);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHttp(`${url}/readiness`, timeoutMs, (_s, body) => (JSON.parse(body) as { ready_workers?: number }).ready_workers === workerUrls.length, child);
  } catch (e) {
    await child.stop();
    throw e;
  }
  return { url, pid: child.pid, child, readyAfterMs: performance.now() - started };
}
