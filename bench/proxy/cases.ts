/**
 * The two side-by-side cases. Targets are measured in interleaved rounds (order rotated each
 * round), so a burst of load from elsewhere on the machine lands on all of them alike.
 */
import { cpuSeconds } from "./procs.ts";
import type { Tool } from "./tools.ts";
import { runWrk, type WrkResult } from "./wrk.ts";
import { bunScript } from "./procs.ts";

export interface Target {
  name: string;
  kind: "direct" | "switchboard" | "nginx";
  /** Base URL for the small-completion case and for the streaming case. */
  smallUrl: string;
  streamUrl: string;
  /** Processes whose CPU is the proxy's (none for direct). */
  pids: () => number[];
}

export interface SmallResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  requests: number;
  /** Proxy CPU (all threads and processes) per request; NaN for direct. */
  cpuUsPerReq: number;
}

export interface StreamResult {
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  totalP50Ms: number;
  totalP99Ms: number;
  streams: number;
  errors: number;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const median = (xs: number[]) => percentile(xs, 50);

function rotate<T>(xs: T[], by: number): T[] {
  const k = by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

export async function smallCompletion(
  wrk: Tool,
  targets: Target[],
  script: string,
  opts: { rounds: number; seconds: number; warmupSeconds: number; path: string },
  log: (s: string) => void,
): Promise<Map<string, SmallResult>> {
  for (const t of targets) await runWrk(wrk, t.smallUrl + opts.path, script, opts.warmupSeconds);
  const runs = new Map<string, { r: WrkResult; cpu: number }[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const t of rotate(targets, round)) {
      const pids = t.pids();
      const cpu0 = cpuSeconds(pids);
      const r = await runWrk(wrk, t.smallUrl + opts.path, script, opts.seconds / opts.rounds);
      runs.get(t.name)!.push({ r, cpu: cpuSeconds(pids) - cpu0 });
      log(`  round ${round + 1} ${t.name.padEnd(24)} ${Math.round(r.requests / r.seconds)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms`);
    }
  }
  const out = new Map<string, SmallResult>();
  for (const t of targets) {
    const rs = runs.get(t.name)!;
    const requests = rs.reduce((a, x) => a + x.r.requests, 0);
    const seconds = rs.reduce((a, x) => a + x.r.seconds, 0);
    const cpu = rs.reduce((a, x) => a + x.cpu, 0);
    out.set(t.name, {
      rps: requests / seconds,
      p50Ms: median(rs.map((x) => x.r.p50Ms)),
      p99Ms: median(rs.map((x) => x.r.p99Ms)),
      errors: rs.reduce((a, x) => a + x.r.errors, 0),
      requests,
      cpuUsPerReq: t.kind === "direct" ? NaN : (cpu / requests) * 1e6,
    });
  }
  return out;
}

async function streamRun(url: string, model: string, concurrency: number, seconds: number, tokens: number) {
  const p = Bun.spawn(bunScript("bench/proxy/stream-client.ts", [url, model, String(concurrency), String(seconds), String(tokens)]), { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), (seconds + 40) * 1000);
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  try {
    return JSON.parse(out.trim().split("\n").pop()!) as { ttfbMs: number[]; totalMs: number[]; errors: number };
  } catch {
    throw new Error(`stream client gave no result for ${url}:\n${out}\n${err}`);
  }
}

export async function streaming(
  targets: Target[],
  opts: { rounds: number; seconds: number; concurrency: number; tokens: number; model: string; path: string },
  log: (s: string) => void,
): Promise<Map<string, StreamResult>> {
  for (const t of targets) await streamRun(t.streamUrl + opts.path, opts.model, 2, 0.3, opts.tokens);
  const acc = new Map(targets.map((t) => [t.name, { ttfb: [] as number[], total: [] as number[], errors: 0 }]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const t of rotate(targets, round)) {
      const r = await streamRun(t.streamUrl + opts.path, opts.model, opts.concurrency, opts.seconds / opts.rounds, opts.tokens);
      const a = acc.get(t.name)!;
      a.ttfb.push(...r.ttfbMs);
      a.total.push(...r.totalMs);
      a.errors += r.errors;
      log(`  round ${round + 1} ${t.name.padEnd(24)} ${r.totalMs.length} streams  ttfb p50 ${median(r.ttfbMs).toFixed(2)} ms  total p50 ${median(r.totalMs).toFixed(1)} ms`);
    }
  }
  const out = new Map<string, StreamResult>();
  for (const [name, a] of acc) {
    out.set(name, {
      ttfbP50Ms: percentile(a.ttfb, 50),
      ttfbP99Ms: percentile(a.ttfb, 99),
      totalP50Ms: percentile(a.total, 50),
      totalP99Ms: percentile(a.total, 99),
      streams: a.total.length,
      errors: a.errors,
    });
  }
  return out;
}
