import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startMockEngine, type MockEngine } from "@switchboard/mock-engine";
import { waitFor } from "./harness";

const MAIN = join(import.meta.dir, "../src/main.ts");
const engines: MockEngine[] = [];
afterAll(() => Promise.all(engines.map((e) => e.stop())));

function run(args: string[]) {
  return Bun.spawnSync([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe", timeout: 15_000 });
}

describe("bun run gateway [flags]", () => {
  test("--help lists every flag with its default and exits 0", () => {
    const r = run(["--help"]);
    expect(r.exitCode).toBe(0);
    const out = r.stdout.toString();
    for (const flag of [
      "--host", "--port", "--worker-urls", "--policy", "--health-check-interval-secs", "--health-check-timeout-secs",
      "--health-failure-threshold", "--health-success-threshold", "--health-check-endpoint", "--request-timeout-secs",
      "--max-retries", "--admin-api-key", "--log-level",
    ])
      expect(out).toContain(flag);
    expect(out).toContain('(default: 30000)');
    expect(out).toContain('(default: 3)');
    expect(out).toContain('(default: 2)');
    expect(out).toContain('(default: "/health")');
  });

  test("an unknown flag exits 2 with a one-line reason", () => {
    const r = run(["--frobnicate"]);
    expect(r.exitCode).toBe(2);
    const err = r.stderr.toString().trim();
    expect(err.split("\n").length).toBe(1);
    expect(err).toContain("--frobnicate");
  });

  test("bad values exit 2 with a one-line reason", () => {
    for (const args of [["--port", "99999"], ["--health-failure-threshold", "0"], ["--policy", "fastest"], ["--worker-urls", "ftp://x"], ["--health-check-timeout-secs", "soon"]]) {
      const r = run(args);
      expect(r.exitCode).toBe(2);
      expect(r.stderr.toString().trim().split("\n").length).toBe(1);
    }
  });

  test("SIGTERM: stops accepting, lets the in-flight request finish, exits 0", async () => {
    const engine = await startMockEngine({ models: ["m"], tokenDelayMs: 50 });
    engines.push(engine);
    // A port the kernel just handed out is free (a random one may not be).
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port!;
    probe.stop(true);
    const proc = Bun.spawn([process.execPath, MAIN, "--host", "127.0.0.1", "--port", String(port), "--worker-urls", engine.url, "--health-check-fast-interval-secs", "0.1", "--log-level", "warn"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const exitedEarly = proc.exited.then((code) => code);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(async () => {
      try {
        const r = await fetch(`${base}/readiness`);
        return r.status === 200;
      } catch {
        return false;
      }
    }, 15_000, "gateway ready");
    expect(await Promise.race([exitedEarly, Bun.sleep(0).then(() => "running")])).toBe("running");
    const inflight = fetch(`${base}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", prompt: "x", max_tokens: 20 }) });
    await waitFor(() => engine.state.counters.running > 0 || engine.state.counters.received > 0, 3000, "request reached the engine");
    proc.kill("SIGTERM");
    const res = await inflight;
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.choices[0].finish_reason).toBe("length");
    const code = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => "hung")]);
    expect(code).toBe(0);
    const after = await fetch(`${base}/health`).then((r) => r.status).catch(() => "refused");
    expect(after).toBe("refused");
  }, 30_000);
});
