/**
 * `bun run bench:routing`: replays workloads through each routing policy against a fleet of
 * KV-cache-simulating mock engines and prints one table side by side.
 *
 *   --quick              a quarter of the sessions (a smoke run)
 *   --update-readme      replace the README section between the bench:routing markers
 *   --engines procs|inproc   engines as separate processes (default) or in the bench process
 *   --policies a,b       only these policies;  --workloads x,y   only these workloads
 *   --cache-aware-flags "…"  gateway flags for cache_aware (default: the tuned ones below)
 */
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { startEngines, type EngineCounters, type KvSpec } from "./engines.ts";
import { startGateway } from "./gateway.ts";
import { oracle } from "./oracle.ts";
import { replaySessions, replayWarmup } from "./replay.ts";
import { consoleTable, markdownTable, percentile, withSection, type Row } from "./report.ts";
import { workloads, type Workload } from "./workloads.ts";

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
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
const allPolicies = ["round_robin", "random", "least_load", "power_of_two", "consistent_hash", "cache_aware"];
const defaultCacheAwareFlags = "";

const policies = args.policies ? args.policies.split(",") : allPolicies;
const cacheAwareFlags = (args["cache-aware-flags"] ?? defaultCacheAwareFlags).split(/\s+/).filter(Boolean);
const chosen = workloads(args.quick ? 0.25 : 1).filter((w) => !args.workloads || args.workloads.split(",").includes(w.name));
const mode = args.engines === "inproc" ? "inproc" : "procs";

function sum(cs: EngineCounters[], k: keyof EngineCounters) {
  return cs.reduce((a, c) => a + c[k], 0);
}

function spread(served: number[]): number {
  const mean = served.reduce((a, b) => a + b, 0) / served.length;
  return mean > 0 ? Math.max(...served) / mean : 0;
}

async function run(w: Workload, policy: string, urls: string[], flush: () => Promise<void>, counters: () => Promise<EngineCounters[]>): Promise<Row> {
  await flush();
  const gw = await startGateway(policy, urls, policy === "cache_aware" ? cacheAwareFlags : []);
  try {
    if (w.warmup.length) await replayWarmup(gw.url, w);
    const before = await counters();
    const r = await replaySessions(gw.url, w.sessions, w.concurrency, w.maxTokens, w.arrivalGapMs);
    const after = await counters();
    const delta = after.map((a, i) => ({ hits: a.hits - before[i].hits, queries: a.queries - before[i].queries, served: a.served - before[i].served }));
    const ok = r.outcomes.filter((o) => o.ok);
    const errors = r.outcomes.length - ok.length;
    if (errors) console.error(`  ${errors} failed, e.g. ${r.outcomes.find((o) => !o.ok)?.error}`);
    const q = sum(delta, "queries");
    if (process.env.BENCH_DEBUG) {
      const t = ok.map((o) => o.ttftMs);
      console.log(`    TTFT deciles: ${[10, 20, 30, 40, 50, 60, 70, 80, 90].map((p) => percentile(t, p).toFixed(0)).join(" ")}; served ${delta.map((d) => d.served).join(" ")}`);
    }
    return {
      workload: w.name,
      policy,
      hitRate: q > 0 ? sum(delta, "hits") / q : 0,
      ttftP50: percentile(ok.map((o) => o.ttftMs), 50),
      ttftP99: percentile(ok.map((o) => o.ttftMs), 99),
      e2eP50: percentile(ok.map((o) => o.e2eMs), 50),
      e2eP99: percentile(ok.map((o) => o.e2eMs), 99),
      throughput: ok.length / (r.wallMs / 1000),
      spread: spread(delta.map((d) => d.served)),
      errors,
      requests: r.outcomes.length,
    };
  } finally {
    await gw.stop();
  }
}

function targets(rows: Row[]): string[] {
  const out: string[] = [];
  const get = (w: string, p: string) => rows.find((r) => r.workload === w && r.policy === p);
  for (const w of chosen) {
    const ca = get(w.name, "cache_aware");
    if (!ca) continue;
    const rr = get(w.name, "round_robin");
    const ch = get(w.name, "consistent_hash");
    const parts: string[] = [];
    if (w.prefixHeavy) {
      if (rr) parts.push(`TTFT p50 ${(rr.ttftP50 / ca.ttftP50).toFixed(1)}× better than round_robin${rr.ttftP50 / ca.ttftP50 >= 3 ? "" : " (target ≥ 3×: MISSED)"}`);
      if (ch) parts.push(`${(ch.ttftP50 / ca.ttftP50).toFixed(1)}× than consistent_hash${ca.ttftP50 < ch.ttftP50 ? "" : " (MISSED)"}`);
      if (ca.ofOracle !== undefined) parts.push(`hit rate ${(ca.ofOracle * 100).toFixed(0)}% of oracle${ca.ofOracle >= 0.9 ? "" : " (target ≥ 90%: MISSED)"}`);
    }
    if (w.name === "burst") parts.push(`load max/mean ${ca.spread.toFixed(2)}${ca.spread <= 1.5 ? "" : " (target ≤ 1.5: MISSED)"}`);
    if (w.name === "uniform") {
      const ll = get(w.name, "least_load");
      if (ll) parts.push(`TTFT p50 ${ca.ttftP50.toFixed(1)} ms vs least_load ${ll.ttftP50.toFixed(1)} ms`);
    }
    out.push(`- **${w.name}** — cache_aware: ${parts.join("; ")}`);
  }
  return out;
}

const started = performance.now();
console.log(`bench:routing — ${engineCount} engines (${mode}), ${cpus().length} CPUs; policies: ${policies.join(", ")}`);
const engines = await startEngines(engineCount, kv, mode);
const rows: Row[] = [];
try {
  for (const w of chosen) {
    console.log(`\n${w.name}: ${w.title}`);
    const o = oracle(w, kv);
    const oracleRow: Row = {
      workload: w.name, policy: "oracle", hitRate: o.hitRate,
      ttftP50: percentile(o.ttftMs, 50), ttftP99: percentile(o.ttftMs, 99), e2eP50: percentile(o.e2eMs, 50), e2eP99: percentile(o.e2eMs, 99),
      spread: 1, errors: 0, requests: o.ttftMs.length,
    };
    rows.push(oracleRow);
    for (const p of policies) {
      const row = await run(w, p, engines.urls, engines.flush, engines.counters);
      if (o.hitRate > 0) row.ofOracle = row.hitRate / o.hitRate;
      rows.push(row);
      console.log(`  ${p.padEnd(16)} hit ${(row.hitRate * 100).toFixed(1)}%  TTFT p50 ${row.ttftP50.toFixed(1)} ms  p99 ${row.ttftP99.toFixed(0)} ms  ${row.throughput?.toFixed(0)} req/s  max/mean ${row.spread.toFixed(2)}`);
    }
  }
} finally {
  await engines.stop();
}

const elapsed = (performance.now() - started) / 1000;
console.log(`\n${consoleTable(rows)}\n\n${targets(rows).join("\n")}\n\n(${elapsed.toFixed(0)} s)`);

const md = [
  `Replayed through the gateway (one process per policy and workload, real CLI) to ${engineCount} mock engines (${mode === "procs" ? "one process each" : "in the bench process"}) on ${cpus().length} CPUs, loopback; ${new Date().toISOString().slice(0, 10)}${args.quick ? ", --quick" : ""}.`,
  `Engines simulate a paged KV cache: blocks of ${kv.blockSize} tokens, ${kv.capacityBlocks} blocks each (LRU), prefill ${kv.prefillMsPerToken} ms per uncached token (2,000 tokens ≈ ${2000 * kv.prefillMsPerToken} ms), decode ${kv.decodeMsPerToken} ms per token, ${kv.maxConcurrency} running at once, the rest queued.`,
  `Hit rate is the engines' own \`prefix_cache_hits / prefix_cache_queries\` (tokens); TTFT and E2E are client-side over streaming; load max/mean is over requests served per engine.`,
  `The oracle row: every request finds in cache every block any earlier request computed (only first touches miss; no eviction, no timing), and its TTFT/E2E are that prefill (and decode) alone — bounds, not always reachable.`,
  `cache_aware flags: \`${cacheAwareFlags.join(" ") || "(defaults)"}\`; all gateways: \`--load-scrape-interval-ms 500\` (default).`,
  "",
  ...chosen.map((w) => `- **${w.name}**: ${w.title}`),
  "",
  markdownTable(rows),
  "",
  ...targets(rows),
  "",
].join("\n");
const resultsPath = new URL("./results/latest.md", import.meta.url).pathname;
await Bun.write(resultsPath, `# bench:routing\n\n${md}`);
console.log(`wrote ${resultsPath}`);
if (args["update-readme"]) {
  const readmePath = new URL("../../README.md", import.meta.url).pathname;
  const readme = await Bun.file(readmePath).text(); // read right before writing: others edit it too
  await Bun.write(readmePath, withSection(readme, `### Routing quality (\`bun run bench:routing\`)\n\n${md}`));
  console.log(`updated ${readmePath}`);
}
