/** A gateway process for one policy, started from the real CLI, ready when every engine is. */
import { firstMatch } from "./engines.ts";

export interface GatewayProcess {
  url: string;
  stop(): Promise<void>;
}

const root = new URL("../../", import.meta.url).pathname;

export async function startGateway(policy: string, workerUrls: string[], extraFlags: string[]): Promise<GatewayProcess> {
  const args = [
    "--host", "127.0.0.1", "--port", "0", "--policy", policy, "--log-level", "info",
    "--health-check-interval-secs", "2", "--health-check-fast-interval-secs", "0.05",
    ...extraFlags, "--worker-urls", ...workerUrls,
  ];
  const proc = Bun.spawn([process.execPath, `${root}apps/gateway/src/main.ts`, ...args], { stdout: "pipe", stderr: "inherit", cwd: root });
  const stop = async () => {
    proc.kill("SIGTERM");
    await Promise.race([proc.exited, Bun.sleep(5_000)]);
    if (proc.exitCode === null) proc.kill("SIGKILL");
  };
  try {
    const url = await firstMatch(proc.stdout, /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"switchboard listening"/, 15_000);
    await allReady(url, workerUrls.length, 15_000);
    return { url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function allReady(url: string, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/workers`, { signal: AbortSignal.timeout(2_000) });
      const body = (await res.json()) as { workers: { status: string }[] };
      if (body.workers.filter((w) => w.status === "ready").length === count) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`gateway ${url}: ${count} workers not Ready within ${timeoutMs} ms`);
}
