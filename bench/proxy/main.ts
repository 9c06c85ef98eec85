/**
 * `bun run bench`: direct-to-engine, switchboard (every policy) and nginx side by side on the same
 * engines, then switchboard over 10 / 1,000 / 5,000 workers. Loopback only, bounded in time.
 * Prints one table, writes bench/results/latest.md, and with --update-readme the README section.
 *
 *   --seconds N        small-completion load per target, split over the rounds (default 9)
 *   --rounds N         interleaved rounds (default 3)
 *   --stream-seconds N streaming load per target (default 4)
 *   --nginx-workers N  nginx worker_processes (default 1: one core, like the gateway's event loop)
 *   --scale LIST       fleet sizes, comma-separated (default 10,1000,5000); --no-scale skips
 *   --only LIST        sections to run: side-by-side, scale (default both)
 *   --cache DIR        where nginx/wrk are unpacked and logs go (default /tmp/switchboard-bench)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { policyNames } from "../../packages/policies/src/index.ts";
import { smallCompletion, streaming, type Target } from "./cases.ts";
import { startNginx } from "./nginx.ts";
import { cpuModel, root } from "./procs.ts";
import { render, replaceSection } from "./report.ts";
import { scaleSection } from "./scale.ts";
import { startEngines, startGateway, type Engine, type GatewayProc } from "./targets.ts";
import { ensureTools } from "./tools.ts";
import { chatBodies, writeScript } from "./wrk.ts";

const { values: o } = parseArgs({
  options: {
    seconds: { type: "string", default: "9" },
    rounds: { type: "string", default: "3" },
    "stream-seconds": { type: "string", default: "4" },
    "nginx-workers": { type: "string", default: "1" },
    scale: { type: "string", default: "10,1000,5000" },
    "no-scale": { type: "boolean", default: false },
    only: { type: "string", default: "side-by-side,scale" },
    "update-readme": { type: "boolean", default: false },
    cache: { type: "string", default: "/tmp/switchboard-bench" },
  },
});

const SMALL_MODEL = "bench-small";
const STREAM_MODEL = "bench-stream";
const TOKENS = 256;
const TOKEN_DELAY_MS = 1;
const PATH = "/v1/chat/completions";
const began = performance.now();
const log = (s: string) => console.error(`[${((performance.now() - began) / 1000).toFixed(0).padStart(3)} s] ${s}`);

const cache = o.cache!;
const runDir = join(cache, "run");
mkdirSync(runDir, { recursive: true });

const tools = await ensureTools(cache);
log(`nginx ${tools.nginx.version} (${tools.nginx.path}), wrk ${tools.wrk.version} (${tools.wrk.path})`);

const engines: Engine[] = [];
const gateways: GatewayProc[] = [];
let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
const cleanup = async () => {
  await Promise.all([...gateways.map((g) => g.child.stop()), ...engines.map((e) => e.child.stop()), nginx?.stop()]);
};
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => void cleanup().then(() => process.exit(130)));

const sections = new Set(o.only!.split(","));
const policies = ["round_robin", "least_load", ...policyNames.filter((p) => p !== "round_robin" && p !== "least_load")];
const seconds = Number(o.seconds);
const rounds = Number(o.rounds);
const streamSeconds = Number(o["stream-seconds"]);

/** Direct, every policy and nginx on the same engines: small completions, then streams. */
async function sideBySide() {
  const small = await startEngines(runDir, "engine-small", SMALL_MODEL, 2, 0);
  const stream = await startEngines(runDir, "engine-stream", STREAM_MODEL, 2, TOKEN_DELAY_MS);
  engines.push(...small, ...stream);
  const all = [...small, ...stream].map((e) => e.url);
  log(`engines: ${all.join(" ")}`);
  for (const p of policies) gateways.push(await startGateway(runDir, `gateway-${p}`, p, all));
  const proxy = (nginx = await startNginx(tools.nginx, join(runDir, "nginx"), Number(o["nginx-workers"]), {
    small: { upstreams: small.map((e) => e.url), stream: false },
    stream: { upstreams: stream.map((e) => e.url), stream: true },
  }));
  log(`gateways (${policies.join(", ")}) and nginx ready`);
  const targets: Target[] = [
    { name: "direct", kind: "direct", smallUrl: small[0]!.url, streamUrl: stream[0]!.url, pids: () => [] },
    ...policies.map((p, i): Target => ({ name: `switchboard ${p}`, kind: "switchboard", smallUrl: gateways[i]!.url, streamUrl: gateways[i]!.url, pids: () => [gateways[i]!.pid] })),
    { name: "nginx", kind: "nginx", smallUrl: proxy.urls.small!, streamUrl: proxy.urls.stream!, pids: () => proxy.pids() },
  ];
  const script = writeScript(runDir, "small", PATH, chatBodies(SMALL_MODEL));
  log(`small completion: wrk -t1 -c32, ${seconds} s per target in ${rounds} interleaved rounds`);
  const smallRes = await smallCompletion(tools.wrk, targets, script, { rounds, seconds, warmupSeconds: 1, path: PATH }, log);
  log(`streaming: ${TOKENS} tokens at ${TOKEN_DELAY_MS} ms each, 8 concurrent clients, ${streamSeconds} s per target`);
  const streamRes = await streaming(targets, { rounds: 2, seconds: streamSeconds, concurrency: 8, tokens: TOKENS, model: STREAM_MODEL, path: PATH }, log);
  await cleanup();
  gateways.length = 0;
  engines.length = 0;
  nginx = undefined;
  return { targets, small: smallRes, stream: streamRes };
}

try {
  const side = sections.has("side-by-side") ? await sideBySide() : undefined;
  let scale;
  if (sections.has("scale") && !o["no-scale"]) {
    const sizes = o.scale!.split(",").map(Number).filter((n) => n > 0);
    log(`scale: ${sizes.join(", ")} workers`);
    scale = await scaleSection(tools.wrk, runDir, sizes, { policy: "round_robin", intervalS: 10, idleWindowS: 10, loadSeconds: 6, memoryWindowS: 12, scrapingCheck: true }, log);
  }

  const info = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    machine: `${cpus().length} × ${cpuModel()}`,
    versions: `bun ${Bun.version}, nginx ${tools.nginx.version}, wrk ${tools.wrk.version}`,
    setup: [
      `engines: mock-engine, one process each (2 for small completions, 2 for streams at ${TOKEN_DELAY_MS} ms/token); everything on 127.0.0.1, sharing the machine's cores with the load generator`,
      `small completion: wrk -t1 -c32, 16 distinct chat bodies (max_tokens 8), ${seconds} s per target in ${rounds} interleaved rounds; p50/p99 are medians over rounds`,
      `nginx: worker_processes ${o["nginx-workers"]}, round robin, upstream keepalive 64, HTTP/1.1; switchboard: one gateway process per policy, default flags`,
      `stream: 8 concurrent clients, ${TOKENS}-token SSE streams, ${streamSeconds} s per target; added per chunk = (whole stream p50 − direct's) / ${TOKENS}`,
      `proxy CPU: user+system time of the proxy's processes (all threads) over the run ÷ requests`,
    ],
  };
  const md = render({ targets: side?.targets ?? [], small: side?.small, stream: side?.stream, scale, tokens: TOKENS, tokenDelayMs: TOKEN_DELAY_MS }, info);
  console.log(`\n${md}\n`);
  mkdirSync(join(root, "bench/results"), { recursive: true });
  writeFileSync(join(root, "bench/results/latest.md"), `# Proxy benchmark (bun run bench)\n\n${md}\n`);
  log("wrote bench/results/latest.md");
  if (o["update-readme"]) {
    const readme = join(root, "README.md");
    writeFileSync(readme, replaceSection(readFileSync(readme, "utf8"), md));
    log("updated the README section");
  }
} finally {
  await cleanup();
}
