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
  /** Gateway CPU (all threads) per request under the load. */
  cpuUsPerReq: number;
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
  /** The largest fleet again with engine-load scraping at its default interval: idle CPU only. */
  withScraping?: { workers: number; idleCpuPct: number; intervalMs: string };
  direct: { p50Ms: number; p99Ms: number; rps: number };
  policy: string;
  intervalS: number;
  idleWindowS: number;
  loadSeconds: number;
  memoryWindowS: number;
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

/** Warm-up, then `seconds` of wrk in three parts: req/s over all, p50/p99 the medians of the parts. */
async function load(wrk: Tool, base: string, script: string, seconds: number, pid?: number) {
  const url = base + "/v1/chat/completions";
  await runWrk(wrk, url, script, 1);
  const parts = [];
  const cpu0 = pid ? cpuSeconds([pid]) : 0;
  for (let i = 0; i < 3; i++) parts.push(await runWrk(wrk, url, script, seconds / 3));
  const cpu = pid ? cpuSeconds([pid]) - cpu0 : NaN;
  return {
    cpuUsPerReq: (cpu / parts.reduce((a, p) => a + p.requests, 0)) * 1e6,
    rps: parts.reduce((a, p) => a + p.requests, 0) / parts.reduce((a, p) => a + p.seconds, 0),
    p50Ms: percentile(parts.map((p) => p.p50Ms), 50),
    p99Ms: percentile(parts.map((p) => p.p99Ms), 50),
    errors: parts.reduce((a, p) => a + p.errors, 0),
  };
}

/** RSS of an idle process: the lowest reading over a window (after a collection, not before one). */
async function idleRss(pid: number, windowS: number): Promise<number> {
  let low = Infinity;
  const until = performance.now() + windowS * 1000;
  while (performance.now() < until) {
    low = Math.min(low, rssBytes(pid));
    await Bun.sleep(500);
  }
  return low;
}

export async function scaleSection(
  wrk: Tool,
  dir: string,
  sizes: number[],
  opts: { policy: string; intervalS: number; idleWindowS: number; loadSeconds: number; memoryWindowS: number; scrapingCheck: boolean },
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
    const direct = await load(wrk, urls[0]!, script, opts.loadSeconds);
    log(`  direct to one farm engine: ${Math.round(direct.rps)} req/s p50 ${direct.p50Ms.toFixed(2)} p99 ${direct.p99Ms.toFixed(2)} ms`);

    /** A gateway over the first `n` farm engines, idle for a while: its CPU over the window, and its RSS. */
    const idle = async (n: number, name: string, flags: string[]) => {
      const gw = await startGateway(dir, name, opts.policy, urls.slice(0, n), flags, 120_000);
      try {
        await Bun.sleep(2000); // start-up settles first
        const cpu0 = cpuSeconds([gw.pid]);
        await Bun.sleep(opts.idleWindowS * 1000);
        return { cpuPct: ((cpuSeconds([gw.pid]) - cpu0) / opts.idleWindowS) * 100, rss: rssBytes(gw.pid) };
      } finally {
        await gw.child.stop();
      }
    };

    for (const n of sizes) {
      // Default probing (what runs in production); round_robin reads no engine load, so scraping is off.
      const gw = await startGateway(dir, `gateway-scale-${n}`, opts.policy, urls.slice(0, n), ["--load-scrape-interval-ms", "0"], 120_000);
      let row: ScaleRow;
      try {
        const rss = await idleRss(gw.pid, opts.memoryWindowS);
        const list = await listTime(gw.url);
        const r = await load(wrk, gw.url, script, opts.loadSeconds, gw.pid);
        const base = rows[0];
        row = {
          workers: n,
          readyAfterS: gw.readyAfterMs / 1000,
          rps: r.rps,
          p50Ms: r.p50Ms,
          p99Ms: r.p99Ms,
          addedP50Ms: r.p50Ms - direct.p50Ms,
          addedP99Ms: r.p99Ms - direct.p99Ms,
          errors: r.errors,
          cpuUsPerReq: r.cpuUsPerReq,
          listMs: list.ms,
          listKb: list.kb,
          rssMb: rss / 2 ** 20,
          kbPerWorker: base ? (rss - base.rssMb * 2 ** 20) / 1024 / (n - base.workers) : NaN,
          idleCpuPct: NaN,
          usPerProbe: NaN,
        };
      } finally {
        await gw.child.stop();
      }
      // Probing cost: the same fleet probed every `intervalS`, so one window sees every worker probed once.
      const probing = await idle(n, `gateway-scale-${n}-probing`, ["--health-check-interval-secs", String(opts.intervalS), "--load-scrape-interval-ms", "0"]);
      const base = rows[0];
      const probes = (n * opts.idleWindowS) / opts.intervalS;
      row.idleCpuPct = probing.cpuPct;
      row.usPerProbe = base ? (((probing.cpuPct - base.idleCpuPct) / 100) * opts.idleWindowS * 1e6) / (probes - (base.workers * opts.idleWindowS) / opts.intervalS) : NaN;
      rows.push(row);
      log(
        `  ${n} workers: ready in ${row.readyAfterS.toFixed(1)} s, ${Math.round(row.rps)} req/s, added p50 ${row.addedP50Ms.toFixed(2)} p99 ${row.addedP99Ms.toFixed(2)} ms, ` +
          `GET /workers ${row.listMs.toFixed(1)} ms, RSS ${row.rssMb.toFixed(0)} MB, idle CPU probing every ${opts.intervalS} s ${row.idleCpuPct.toFixed(1)} %`,
      );
    }
    let withScraping: ScaleResult["withScraping"];
    if (opts.scrapingCheck) {
      const n = max;
      const r = await idle(n, `gateway-scale-${n}-scraping`, []);
      withScraping = { workers: n, idleCpuPct: r.cpuPct, intervalMs: "default" };
      log(`  ${n} workers with default flags (engine-load scraping on): idle CPU ${r.cpuPct.toFixed(1)} %`);
    }
    return { rows, withScraping, direct, policy: opts.policy, intervalS: opts.intervalS, idleWindowS: opts.idleWindowS, loadSeconds: opts.loadSeconds, memoryWindowS: opts.memoryWindowS };
  } finally {
    await farm.stop();
  }
}
