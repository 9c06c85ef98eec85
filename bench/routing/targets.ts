/** The targets for cache_aware, checked against a results table. */
import type { Row } from "./report.ts";
import type { Workload } from "./workloads.ts";

export interface Check {
  workload: string;
  what: string;
  value: string;
  met: boolean | null;
}

const x = (a: number, b: number) => `${(a / b).toFixed(1)}×`;

export function checks(rows: readonly Row[], chosen: readonly Workload[], subject = "cache_aware"): Check[] {
  const out: Check[] = [];
  const get = (w: string, p: string) => rows.find((r) => r.workload === w && r.policy === p);
  for (const w of chosen) {
    const ca = get(w.name, subject);
    if (!ca) continue;
    const rr = get(w.name, "round_robin");
    const ch = get(w.name, "consistent_hash");
    const ll = get(w.name, "least_load");
    const add = (what: string, value: string, met: boolean | null) => out.push({ workload: w.name, what, value, met });
    if (w.kind === "prefix") {
      if (rr) add("TTFT p50 vs round_robin ≥ 3×", x(rr.ttftP50, ca.ttftP50), rr.ttftP50 / ca.ttftP50 >= 3);
      if (ch) add("TTFT p50 better than consistent_hash", `${ca.ttftP50.toFixed(1)} vs ${ch.ttftP50.toFixed(1)} ms`, ca.ttftP50 < ch.ttftP50);
      if (ca.ofOracle !== undefined) add("hit rate ≥ 90% of oracle", `${(ca.ofOracle * 100).toFixed(0)}%`, ca.ofOracle >= 0.9);
    }
    if (w.kind === "hotspot") {
      add("load max/mean ≤ 1.5", ca.spread.toFixed(2), ca.spread <= 1.5);
      if (ca.ofOracle !== undefined) add("hit rate vs oracle (no timing)", `${(ca.ofOracle * 100).toFixed(0)}%`, null);
      if (rr) add("TTFT p50 vs round_robin", x(rr.ttftP50, ca.ttftP50), null);
    }
    if (w.kind === "neutral" && ll) add("TTFT p50 no worse than least_load (+10%)", `${ca.ttftP50.toFixed(1)} vs ${ll.ttftP50.toFixed(1)} ms`, ca.ttftP50 <= ll.ttftP50 * 1.1);
  }
  return out;
}

export function checksMarkdown(cs: readonly Check[]): string {
  const mark = (m: boolean | null) => (m === null ? "(info)" : m ? "met" : "**missed**");
  return ["| workload | target | cache_aware | |", "|---|---|---:|---|", ...cs.map((c) => `| ${c.workload} | ${c.what} | ${c.value} | ${mark(c.met)} |`)].join("\n");
}
