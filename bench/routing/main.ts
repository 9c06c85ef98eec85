/**
 * `bun run bench:routing`: replays workloads through each routing policy against a fleet of
 * KV-cache-simulating mock engines and prints one table side by side (see README.md here).
 *
 *   --quick                  a quarter of the sessions (a smoke run)
 *   --repeat N               run everything N times, interleaved; each cell is the median
 *   --update-readme          replace the README section between the bench:routing markers
 *   --engines procs|inproc   engines as separate processes (default) or in the bench process
 *   --policies a,b           only these rows (policy names or labels); --workloads x,y likewise
 *   --cache-aware-flags=…    gateway flags for the SMG-like cache_aware row (default: --balance-abs-threshold 64)
 */
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startEngines, type EngineCounters, type EngineFleet, type KvSpec } from "./engines.ts";
import { startGateway } from "./gateway.ts";
import { oracle } from "./oracle.ts";
import { replaySessions, replayWarmup } from "./replay.ts";
import { consoleTable, markdownTable, percentile, withSection, type Row } from "./report.ts";
import { checks, checksMarkdown } from "./targets.ts";
import { workloads, type Workload } from "./workloads.ts";

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    repeat: { type: "string", default: "1" },
    "update-readme": { type: "boolean", default: false },
    engines: { type: "string", default: "procs" },
    policies: { type: "string" },
    workloads: { type: "string" },
    "cache-aware-flags": { type: "string" },
  },
});

/** Engines: a 2,000-token uncached prompt costs 100 ms of prefill; 16k tokens of cache each. */
const kv: KvSpec = { blockSize: 16, capacityBlocks: 1024, prefillMsPerToken: 0.05, decodeMsPerToken: 2, maxConcurrency: 8 };
const engineCount = 8;
/** SMG's guard threshold, for comparison with ours: 64 suits engines running hundreds at once. */
const smgFlags = (args["cache-aware-flags"] ?? "--balance-abs-threshold 64").split(/\s+/).filter(Boolean);

interface Variant {
  label: string;
  policy: string;
  flags: string[];
}
const allVariants: Variant[] = [
  ...["round_robin", "random", "least_load", "power_of_two", "consistent_hash"].map((p) => ({ label: p, policy: p, flags: [] })),
  { label: "cache_aware (abs 64, as SMG)", policy: "cache_aware", flags: smgFlags },
  { label: "cache_aware", policy: "cache_aware", flags: [] },
];
const wanted = args.policies?.split(",");
const variants = allVariants.filter((v) => !wanted || wanted.includes(v.label) || wanted.includes(v.policy));
const chosen = workloads(args.quick ? 0.25 : 1).filter((w) => !args.workloads || args.workloads.split(",").includes(w.name));
const mode = args.engines === "inproc" ? "inproc" : "procs";
const repeat = Math.max(1, Number(args.repeat) || 1);

const sum = (cs: EngineCounters[], k: keyof EngineCounters) => cs.reduce((a, c) => a + c[k], 0);
const median = (xs: number[]) => percentile(xs, 50);

function spread(served: number[]): number {
  const mean = served.reduce((a, b) => a + b, 0) / served.length;
  return mean > 0 ? Math.max(...served) / mean : 0;
}

async function run(w: Workload, v: Variant, engines: EngineFleet): Promise<Row> {
  await engines.flush();
  const gw = await startGateway(v.policy, engines.urls, v.flags);
  try {
    if (w.warmup.length) await replayWarmup(gw.url, w);
    const before = await engines.counters();
    const watchdog = process.env.BENCH_DEBUG ? setInterval(() => void dumpState(engines, gw.url), 15_000) : undefined;
    const r = await replaySessions(gw.url, w.sessions, w.concurrency, w.maxTokens, w.arrivalGapMs);
    clearInterval(watchdog);
    const after = await engines.counters();
    const delta = after.map((a, i) => ({ hits: a.hits - before[i].hits, queries: a.queries - before[i].queries, served: a.served - before[i].served }));
    const ok = r.outcomes.filter((o) => o.ok);
    const errors = r.outcomes.length - ok.length;
    if (errors) {
      console.error(`  ${errors} failed, e.g. ${r.outcomes.find((o) => !o.ok)?.error}`);
    }
    const ttft = ok.map((o) => o.ttftMs);
    const e2e = ok.map((o) => o.e2eMs);
    if (process.env.BENCH_DEBUG) console.log(`    TTFT deciles ${[10, 30, 50, 70, 90].map((p) => percentile(ttft, p).toFixed(0)).join(" ")}; served ${delta.map((d) => d.served).join(" ")}`);
    const q = sum(delta, "queries");
    return {
      workload: w.name,
      policy: v.label,
      hitRate: q > 0 ? sum(delta, "hits") / q : 0,
      ttftP50: percentile(ttft, 50),
      ttftP99: percentile(ttft, 99),
      e2eP50: percentile(e2e, 50),
      e2eP99: percentile(e2e, 99),
      throughput: ok.length / (r.wallMs / 1000),
      spread: spread(delta.map((d) => d.served)),
      errors,
      requests: r.outcomes.length,
    };
  } finally {
    await gw.stop();
  }
}

/** BENCH_DEBUG: what engines and gateway hold while a run seems stuck. */
async function dumpState(engines: EngineFleet, gateway: string): Promise<void> {
  for (const u of engines.urls) {
    const text = await (await fetch(`${u}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    console.error(`    ${u} ${text.split("\n").filter((l) => /^vllm:num_requests_(running|waiting)/.test(l)).map((l) => l.split(" ")[1]).join("/")}`);
  }
  const ws = (await (await fetch(`${gateway}/workers`, { signal: AbortSignal.timeout(2_000) })).json()) as { workers: { url: string; load: number }[] };
  console.error(`    gateway in flight: ${ws.workers.map((w) => `${w.url.split(":").at(-1)}=${w.load}`).join(" ")}`);
}

/** Cell by cell median over repetitions (errors and requests summed). */
function merge(runs: Row[]): Row {
  const m = (k: "hitRate" | "ttftP50" | "ttftP99" | "e2eP50" | "e2eP99" | "spread") => median(runs.map((r) => r[k]));
  return {
    ...runs[0],
    hitRate: m("hitRate"), ttftP50: m("ttftP50"), ttftP99: m("ttftP99"), e2eP50: m("e2eP50"), e2eP99: m("e2eP99"), spread: m("spread"),
    throughput: median(runs.map((r) => r.throughput ?? 0)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    requests: runs.reduce((a, r) => a + r.requests, 0),
  };
}

function oracleRow(w: Workload): Row {
  const o = oracle(w, kv);
  const p = (xs: number[], q: number) => percentile(xs, q);
  return {
    workload: w.name, policy: "oracle", hitRate: o.hitRate,
    ttftP50: p(o.ttftMs, 50), ttftP99: p(o.ttftMs, 99), e2eP50: p(o.e2eMs, 50), e2eP99: p(o.e2eMs, 99),
    spread: 1, errors: 0, requests: o.ttftMs.length,
  };
}

const started = performance.now();
const loadBefore = loadavg()[0];
console.log(`bench:routing — ${engineCount} engines (${mode}), ${cpus().length} CPUs, load average ${loadBefore.toFixed(1)}; ${variants.length} policies × ${chosen.length} workloads × ${repeat}`);
const engines = await startEngines(engineCount, kv, mode);
const rows: Row[] = [];
try {
  for (const w of chosen) {
    console.log(`\n${w.name}: ${w.title}`);
    const o = oracleRow(w);
    rows.push(o);
    const runs = new Map<string, Row[]>(variants.map((v) => [v.label, []]));
    for (let rep = 0; rep < repeat; rep++) {
      for (const v of variants) {
        const row = await run(w, v, engines);
        runs.get(v.label)!.push(row);
        console.log(`  ${v.label.padEnd(23)} hit ${(row.hitRate * 100).toFixed(1)}%  TTFT p50 ${row.ttftP50.toFixed(1)} ms  p99 ${row.ttftP99.toFixed(0)} ms  ${row.throughput?.toFixed(0)} req/s  max/mean ${row.spread.toFixed(2)}`);
      }
    }
    for (const v of variants) {
      const row = merge(runs.get(v.label)!);
      if (o.hitRate > 0) row.ofOracle = row.hitRate / o.hitRate;
      rows.push(row);
    }
  }
} finally {
  await engines.stop();
}

const elapsed = (performance.now() - started) / 1000;
const found = checks(rows, chosen);
console.log(`\n${consoleTable(rows)}\n`);
for (const c of found) console.log(`${c.workload.padEnd(8)} ${c.what.padEnd(40)} ${c.value.padStart(18)}  ${c.met === null ? "(info)" : c.met ? "met" : "MISSED"}`);
console.log(`\n(${elapsed.toFixed(0)} s; load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)})`);

const flagsText = (v: Variant) => (v.flags.length ? `\`${v.flags.join(" ")}\`` : "defaults");
const md = [
  `Replayed through the gateway (a fresh process per policy and workload, started from the real CLI) to ${engineCount} mock engines (${mode === "procs" ? "one process each" : "in the bench process"}), loopback, ${cpus().length} CPUs shared with other work (load average ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)}); ${new Date().toISOString().slice(0, 10)}${args.quick ? ", --quick" : ""}${repeat > 1 ? `, median of ${repeat} interleaved runs per cell` : ""}; ${elapsed.toFixed(0)} s.`,
  "",
  `- Engines simulate a paged KV cache: blocks of ${kv.blockSize} tokens, ${kv.capacityBlocks} blocks each (LRU), prefill ${kv.prefillMsPerToken} ms per uncached token (2,000 tokens ≈ ${2000 * kv.prefillMsPerToken} ms), decode ${kv.decodeMsPerToken} ms per token, ${kv.maxConcurrency} running at once, the rest queued.`,
  "- Hit rate: the engines' own `prefix_cache_hits / prefix_cache_queries` (tokens). TTFT and E2E: client-side, streaming. Load max/mean: requests served per engine. Errors: failed requests (10 s client timeout). Design and limits: `bench/routing/README.md`.",
  "- Oracle: every request finds in cache every block any earlier request or answer produced (only first touches miss; no eviction, no timing); its TTFT/E2E are that prefill (and decode) alone. Bounds, not always reachable: in the burst, requests that arrive while an engine is still computing the preamble miss under any policy that spreads.",
  `- Gateways run with \`--load-scrape-interval-ms 500\` (default). cache_aware: ${variants.filter((v) => v.policy === "cache_aware").map((v) => `${v.label} = ${flagsText(v)}`).join("; ")}.`,
  "",
  ...chosen.map((w) => `- **${w.name}**: ${w.title}`),
  "",
  markdownTable(rows),
  "",
  checksMarkdown(found),
  "",
].join("\n");
const resultsPath = new URL("./results/latest.md", import.meta.url).pathname;
await Bun.write(resultsPath, `# bench:routing — latest results\n\n${md}`);
console.log(`wrote ${resultsPath}`);
if (args["update-readme"]) {
  const readmePath = new URL("../../README.md", import.meta.url).pathname;
  const readme = await Bun.file(readmePath).text(); // read right before writing: others edit it too
  await Bun.write(readmePath, withSection(readme, `### Routing quality (\`bun run bench:routing\`)\n\n${md}`));
  console.log(`updated ${readmePath}`);
}
