/** The results table (console and markdown) and the README section it replaces. */

export interface Row {
  workload: string;
  policy: string;
  /** Prefix-cache hit rate over the run, tokens hit / tokens queried (engines' counters). */
  hitRate: number;
  /** hitRate / the oracle's, when the oracle's is above zero. */
  ofOracle?: number;
  ttftP50: number;
  ttftP99: number;
  e2eP50: number;
  e2eP99: number;
  /** Requests per second; undefined for the oracle. */
  throughput?: number;
  /** Max / mean requests served per engine. */
  spread: number;
  errors: number;
  requests: number;
}

export function percentile(xs: readonly number[], p: number): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const i = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[i];
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const ms = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : "–");

const header = ["workload", "policy", "hit rate", "of oracle", "TTFT p50 ms", "TTFT p99 ms", "E2E p50 ms", "E2E p99 ms", "req/s", "load max/mean", "errors"];

function cells(r: Row): string[] {
  return [
    r.workload,
    r.policy,
    pct(r.hitRate),
    r.ofOracle === undefined ? "–" : pct(r.ofOracle),
    ms(r.ttftP50),
    ms(r.ttftP99),
    ms(r.e2eP50),
    ms(r.e2eP99),
    r.throughput === undefined ? "–" : r.throughput.toFixed(0),
    r.spread.toFixed(2),
    r.policy === "oracle" ? "–" : `${r.errors}/${r.requests}`,
  ];
}

export function markdownTable(rows: readonly Row[]): string {
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i < 2 ? "---" : "---:")).join("|")}|`];
  for (const r of rows) lines.push(`| ${cells(r).join(" | ")} |`);
  return lines.join("\n");
}

export function consoleTable(rows: readonly Row[]): string {
  const all = [header, ...rows.map(cells)];
  const widths = header.map((_, i) => Math.max(...all.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((x, i) => (i < 2 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join("  ");
  const out = [line(header), widths.map((w) => "-".repeat(w)).join("  ")];
  let last = "";
  for (const r of rows) {
    if (last && r.workload !== last) out.push("");
    last = r.workload;
    out.push(line(cells(r)));
  }
  return out.join("\n");
}

export const readmeStart = "<!-- bench:routing:start -->";
export const readmeEnd = "<!-- bench:routing:end -->";

/** README text with the section between the markers replaced (markers appended when missing). */
export function withSection(readme: string, section: string): string {
  const block = `${readmeStart}\n${section.trim()}\n${readmeEnd}`;
  const a = readme.indexOf(readmeStart);
  const b = readme.indexOf(readmeEnd);
  if (a >= 0 && b > a) return readme.slice(0, a) + block + readme.slice(b + readmeEnd.length);
  return `${readme.replace(/\s*$/, "")}\n\n${block}\n`;
}
