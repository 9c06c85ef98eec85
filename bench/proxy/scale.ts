/**
 * The same gateway over 10, 1,000 and 5,000 registered workers (one engine-farm process, one
 * loopback port per worker): added latency under load, GET /workers time, resident memory per
 * worker, and what probing costs when no request is flowing.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { percentile } from "./cases.ts";
import { bunScript, cpuSeconds, rssBytes, spawnChild } from "./procs.ts";
import { startGateway } from "./targets.ts";
import type { Tool } from "./tools.ts";
import { chatBodies, runWrk, writeScript } from "./wrk.ts";

export interface ScaleRow {
  workers: number;
  readyAfterS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  addedP50Ms: number;
  addedP99Ms: number;
  errors: number;
  listMs: number;
  listKb: number;
  rssMb: number;
  /** (RSS − RSS of the smallest fleet) / (workers − its workers). */
  kbPerWorker: number;
  idleCpuPct: number;
  /** (idle CPU − that of the smallest fleet) / (probes − its probes): what one more probe costs. */
  usPerProbe: number;
}

export interface ScaleResult {
  rows: ScaleRow[];
  direct: { p50Ms: number; p99Ms: number; rps: number };
  policy: string;
  intervalS: number;
  idleWindowS: number;
  loadSeconds: number;
}

const MODEL = "bench-scale";

async function listTime(url: string): Promise<{ ms: number; kb: number }> {
  const times: number[] = [];
  let kb = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}/workers`, { signal: AbortSignal.timeout(30_000) });
    const body = await r.arrayBuffer();
    times.push(performance.now() - t0);
    kb = body.byteLength / 1024;
  }
  return { ms: percentile(times, 50), kb };
}

export async function scaleSection(
  wrk: Tool,
  dir: string,
  sizes: number[],
  opts: { policy: string; intervalS: number; idleWindowS: number; loadSeconds: number },
  log: (s: string) => void,
): Promise<ScaleResult> {
  const max = Math.max(...sizes);
  const urlsFile = join(dir, "farm-urls.json");
  rmSync(urlsFile, { force: true });
  const farm = spawnChild("engine-farm", bunScript("bench/proxy/engine-farm.ts", [String(max), MODEL, urlsFile]), dir);
  const rows: ScaleRow[] = [];
  try {
    const until = Date.now() + 60_000;
    while (!existsSync(urlsFile)) {
      if (Date.now() > until || farm.proc.exitCode !== null) throw new Error("engine farm did not start");
      await Bun.sleep(100);
    }
    const urls = JSON.parse(readFileSync(urlsFile, "utf8")) as string[];
    log(`  engine farm: ${urls.length} engines on loopback ports`);
    const script = writeScript(dir, "scale", "/v1/chat/completions", chatBodies(MODEL));
    await runWrk(wrk, urls[0]! + "/v1/chat/completions", script, 1);
    const d = await runWrk(wrk, urls[0]! + "/v1/chat/completions", script, opts.loadSeconds);
    const direct = { p50Ms: d.p50Ms, p99Ms: d.p99Ms, rps: d.requests / d.seconds };
    log(`  direct to one farm engine: ${Math.round(direct.rps)} req/s p50 ${direct.p50Ms.toFixed(2)} p99 ${direct.p99Ms.toFixed(2)} ms`);

    for (const n of sizes) {
      const flags = ["--health-check-interval-secs", String(opts.intervalS)];
      const gw = await startGateway(dir, `gateway-scale-${n}`, opts.policy, urls.slice(0, n), flags, 120_000);
      try {
        await Bun.sleep(2000); // let start-up garbage go before measuring memory and idle CPU
        const cpu0 = cpuSeconds([gw.pid]);
        await Bun.sleep(opts.idleWindowS * 1000);
        const idleCpu = cpuSeconds([gw.pid]) - cpu0;
        const rss = rssBytes(gw.pid);
        const list = await listTime(gw.url);
        await runWrk(wrk, gw.url + "/v1/chat/completions", script, 1);
        const r = await runWrk(wrk, gw.url + "/v1/chat/completions", script, opts.loadSeconds);
        const probes = (n * opts.idleWindowS) / opts.intervalS;
        const base = rows[0];
        const row: ScaleRow = {
          workers: n,
          readyAfterS: gw.readyAfterMs / 1000,
          rps: r.requests / r.seconds,
          p50Ms: r.p50Ms,
          p99Ms: r.p99Ms,
          addedP50Ms: r.p50Ms - direct.p50Ms,
          addedP99Ms: r.p99Ms - direct.p99Ms,
          errors: r.errors,
          listMs: list.ms,
          listKb: list.kb,
          rssMb: rss / 2 ** 20,
          kbPerWorker: base ? (rss - base.rssMb * 2 ** 20) / 1024 / (n - base.workers) : NaN,
          idleCpuPct: (idleCpu / opts.idleWindowS) * 100,
          usPerProbe: base ? ((idleCpu - (base.idleCpuPct / 100) * opts.idleWindowS) / (probes - (base.workers * opts.idleWindowS) / opts.intervalS)) * 1e6 : NaN,
        };
        rows.push(row);
        log(
          `  ${n} workers: ready in ${row.readyAfterS.toFixed(1)} s, ${Math.round(row.rps)} req/s, added p50 ${row.addedP50Ms.toFixed(2)} p99 ${row.addedP99Ms.toFixed(2)} ms, ` +
            `GET /workers ${row.listMs.toFixed(1)} ms, RSS ${row.rssMb.toFixed(0)} MB, idle CPU ${row.idleCpuPct.toFixed(1)} %`,
        );
      } finally {
        await gw.child.stop();
      }
    }
    return { rows, direct, policy: opts.policy, intervalS: opts.intervalS, idleWindowS: opts.idleWindowS, loadSeconds: opts.loadSeconds };
  } finally {
    await farm.stop();
  }
}
