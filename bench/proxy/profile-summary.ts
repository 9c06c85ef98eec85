/**
 * Summarises a `.cpuprofile` (from `bun --cpu-prof`) by sample counts — not by time deltas,
 * which charge idle gaps to whatever ran last. Usage:
 *   bun bench/proxy/profile-summary.ts <file.cpuprofile> [fromSeconds] [toSeconds] [top]
 * Prints self samples by function and by file (package), as percentages of samples in the window.
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, fromArg, toArg, topArg] = process.argv.slice(2);
const prof = JSON.parse(readFileSync(file!, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
const from = Number(fromArg ?? 0) * 1e6;
const to = Number(toArg ?? Infinity) * 1e6;
const top = Number(topArg ?? 30);
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfFn = new Map<string, number>();
const selfFile = new Map<string, number>();
const totalFile = new Map<string, number>();
let t = 0;
let counted = 0;
const short = (url: string) =>
  url.replace(/.*node_modules\/\.bun\/([^/]+?)@[^/]*\/node_modules\/.*/, "dep:$1").replace(/.*\/work\/main\//, "").replace(/^$/, "(native)");
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i] ?? 0;
  if (t < from || t > to) continue;
  const n = byId.get(prof.samples[i]!)!;
  const name = n.callFrame.functionName || "(anonymous)";
  if (name === "(idle)" || name === "(program)" || name === "(root)") continue;
  counted++;
  const key = `${name}  ${short(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ""}`;
  selfFn.set(key, (selfFn.get(key) ?? 0) + 1);
  const f = short(n.callFrame.url);
  selfFile.set(f, (selfFile.get(f) ?? 0) + 1);
  // Inclusive by file: each file once per sample along the stack.
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const u = short(byId.get(id)!.callFrame.url);
    if (u === "(native)" || seen.has(u)) continue;
    seen.add(u);
    totalFile.set(u, (totalFile.get(u) ?? 0) + 1);
  }
}
const pct = (x: number) => `${((100 * x) / counted).toFixed(1).padStart(5)} %`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
};
console.log(`${counted} samples in window (${fromArg ?? 0}–${toArg ?? "end"} s)`);
print("self, by function", selfFn);
print("self, by file", selfFile);
print("inclusive, by file (JS frames)", totalFile);
