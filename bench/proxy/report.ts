/** The benchmark's tables (markdown, also printed as is) and the targets met or missed. */
import type { SmallResult, StreamResult, Target } from "./cases.ts";
import type { ScaleResult } from "./scale.ts";

export interface RunInfo {
  date: string;
  machine: string;
  versions: string;
  setup: string[];
}

export interface Results {
  targets: Target[];
  small?: Map<string, SmallResult>;
  stream?: Map<string, StreamResult>;
  scale?: ScaleResult;
  tokens: number;
  tokenDelayMs: number;
}

const f = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "—");
const int = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "—");

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

function mainTable(r: Required<Pick<Results, "small" | "stream">> & Results): string {
  const ts = r.targets;
  const direct = r.small.get(ts.find((t) => t.kind === "direct")!.name)!;
  const nginx = r.small.get(ts.find((t) => t.kind === "nginx")!.name)!;
  const sDirect = r.stream.get(ts.find((t) => t.kind === "direct")!.name)!;
  const small = (pick: (s: SmallResult, t: Target) => string) => ts.map((t) => pick(r.small.get(t.name)!, t));
  const stream = (pick: (s: StreamResult, t: Target) => string) => ts.map((t) => pick(r.stream.get(t.name)!, t));
  const addedP50 = (s: SmallResult) => s.p50Ms - direct.p50Ms;
  const rows: string[][] = [
    ["**small completion**", ...ts.map(() => "")],
    ["req/s", ...small((s) => int(s.rps))],
    ["p50 ms", ...small((s) => f(s.p50Ms))],
    ["p99 ms", ...small((s) => f(s.p99Ms))],
    ["added p50 ms (over direct)", ...small((s, t) => (t.kind === "direct" ? "—" : f(addedP50(s))))],
    ["added p99 ms (over direct)", ...small((s, t) => (t.kind === "direct" ? "—" : f(s.p99Ms - direct.p99Ms)))],
    ["req/s ÷ nginx", ...small((s, t) => (t.kind === "direct" ? "—" : `${f(s.rps / nginx.rps)}×`))],
    ["added p50 ÷ nginx's", ...small((s, t) => (t.kind === "direct" ? "—" : `${f(addedP50(s) / addedP50(nginx))}×`))],
    ["proxy CPU µs / request", ...small((s) => f(s.cpuUsPerReq, 1))],
    ["errors", ...small((s) => String(s.errors))],
    [`**stream, ${r.tokens} tokens**`, ...ts.map(() => "")],
    ["time to first byte p50 ms", ...stream((s) => f(s.ttfbP50Ms))],
    ["time to first byte p99 ms", ...stream((s) => f(s.ttfbP99Ms))],
    ["whole stream p50 ms", ...stream((s) => f(s.totalP50Ms, 1))],
    ["whole stream p99 ms", ...stream((s) => f(s.totalP99Ms, 1))],
    ["added per chunk µs (p50)", ...stream((s, t) => (t.kind === "direct" ? "—" : f(((s.totalP50Ms - sDirect.totalP50Ms) / r.tokens) * 1000, 1)))],
    ["streams / errors", ...stream((s) => `${s.streams} / ${s.errors}`)],
  ];
  return table(["", ...ts.map((t) => t.name)], rows);
}

function scaleTable(s: ScaleResult): string {
  const base = s.rows[0]!;
  const col = (pick: (r: ScaleResult["rows"][number]) => string) => s.rows.map(pick);
  const rows: string[][] = [
    ["all Ready after s", ...col((r) => f(r.readyAfterS, 1))],
    [`req/s (${s.policy})`, ...col((r) => int(r.rps))],
    ["p50 / p99 ms", ...col((r) => `${f(r.p50Ms)} / ${f(r.p99Ms)}`)],
    ["added p50 ms (over direct)", ...col((r) => f(r.addedP50Ms))],
    ["added p99 ms (over direct)", ...col((r) => f(r.addedP99Ms))],
    [`added p99 ÷ at ${base.workers.toLocaleString("en-US")}`, ...col((r) => `${f(r.addedP99Ms / base.addedP99Ms)}×`)],
    ["gateway CPU µs / request", ...col((r) => f(r.cpuUsPerReq, 1))],
    ["errors", ...col((r) => String(r.errors))],
    ["GET /workers ms (median of 5)", ...col((r) => f(r.listMs, 1))],
    ["GET /workers size KB", ...col((r) => int(r.listKb))],
    [`gateway RSS MB (idle; lowest over ${s.memoryWindowS} s)`, ...col((r) => f(r.rssMb, 0))],
    [`KB per worker (RSS slope from ${base.workers})`, ...col((r) => f(r.kbPerWorker, 1))],
    [`idle CPU % of a core (probe every ${s.intervalS} s)`, ...col((r) => f(r.idleCpuPct, 1))],
    [`CPU µs per probe (slope from ${base.workers})`, ...col((r) => f(r.usPerProbe, 0))],
    ["probe CPU % of a core at the default 60 s interval", ...col((r) => f((r.usPerProbe * r.workers) / 60 / 1e4, 2))],
  ];
  return table(["", ...s.rows.map((r) => `${r.workers.toLocaleString("en-US")} workers`)], rows);
}

/** Each target of issue 6 with its measured ratio. */
function targetChecks(r: Results): string[] {
  const out: string[] = [];
  const mark = (ok: boolean) => (ok ? "✅" : "❌");
  if (r.small && r.stream) out.push(...mainChecks({ ...r, small: r.small, stream: r.stream }, mark));
  const s = r.scale;
  if (s && s.rows.length > 1) {
    const first = s.rows[0]!;
    const last = s.rows[s.rows.length - 1]!;
    const ratio = last.addedP99Ms / first.addedP99Ms;
    out.push(`${mark(ratio <= 1.2)} scale: added p99 at ${int(last.workers)} workers is ${f(ratio)}× that at ${int(first.workers)} (target ≤ 1.2×)`);
    out.push(`${mark(last.listMs < 50)} GET /workers at ${int(last.workers)}: ${f(last.listMs, 1)} ms (target < 50 ms)`);
    out.push(`${mark(last.kbPerWorker <= 20)} memory: ${f(last.kbPerWorker, 1)} KB per idle worker (target ≤ 20 KB)`);
  }
  return out;
}

function mainChecks(r: Required<Pick<Results, "small" | "stream">> & Results, mark: (ok: boolean) => string): string[] {
  const out: string[] = [];
  const ts = r.targets;
  const direct = r.small.get(ts.find((t) => t.kind === "direct")!.name)!;
  const nginx = r.small.get(ts.find((t) => t.kind === "nginx")!.name)!;
  const nginxAdded = nginx.p50Ms - direct.p50Ms;
  for (const t of ts.filter((x) => x.kind === "switchboard")) {
    const s = r.small.get(t.name)!;
    const ratio = s.rps / nginx.rps;
    const added = s.p50Ms - direct.p50Ms;
    out.push(`${mark(ratio >= 1 && added <= nginxAdded)} ${t.name}: ${f(ratio)}× nginx req/s (target ≥ 1.0×), added p50 ${f(added)} ms vs nginx ${f(nginxAdded)} ms`);
  }
  const sDirect = r.stream.get(ts.find((t) => t.kind === "direct")!.name)!;
  const worst = Math.max(...ts.filter((t) => t.kind === "switchboard").map((t) => (r.stream.get(t.name)!.totalP50Ms - sDirect.totalP50Ms) / r.tokens));
  const budgetMs = 0.05 * r.tokenDelayMs;
  out.push(`${mark(worst <= budgetMs)} streaming: worst added time per chunk ${f(worst * 1000, 1)} µs (target ≤ 5 % of the ${r.tokenDelayMs} ms token interval = ${f(budgetMs * 1000, 0)} µs)`);
  return out;
}

export function render(r: Results, info: RunInfo): string {
  const parts = [
    `_${info.date} · ${info.machine} · ${info.versions}_`,
    "",
    ...info.setup.map((s) => `- ${s}`),
  ];
  if (r.small && r.stream) parts.push("", mainTable({ ...r, small: r.small, stream: r.stream }));
  if (r.scale) {
    const s = r.scale;
    parts.push(
      "",
      `**Scale**: one gateway over N workers (one engine-farm process, one loopback port per worker); policy ${s.policy}; default probing; engine-load scraping off (round_robin does not read it); ` +
        `wrk 32 connections, ${s.loadSeconds} s in 3 parts (p50/p99: medians of the parts); direct to one farm engine: p50 ${f(s.direct.p50Ms)} ms, p99 ${f(s.direct.p99Ms)} ms. ` +
        `Idle CPU from a second gateway over the same fleet probing every ${s.intervalS} s, measured over ${s.idleWindowS} s (every worker probed once).`,
      "",
      scaleTable(s),
    );
    if (s.withScraping) parts.push("", `With default flags (engine-load scraping every 500 ms per Ready worker), an idle gateway over ${int(s.withScraping.workers)} workers uses ${f(s.withScraping.idleCpuPct, 1)} % of a core.`);
  }
  parts.push("", "**Targets**", "", ...targetChecks(r).map((c) => `- ${c}`));
  return parts.join("\n");
}

const START = "<!-- bench:proxy:start -->";
const END = "<!-- bench:proxy:end -->";

/** Replaces the marked section of a README; the markers must already be there. */
export function replaceSection(readme: string, body: string): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README has no ${START} … ${END} section`);
  return `${readme.slice(0, a + START.length)}\n${body}\n${readme.slice(b)}`;
}
