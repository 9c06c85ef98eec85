/** One sample line of Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Reads only the samples whose names are wanted; comments and other metrics are skipped cheaply. */
export function parseSamples(text: string, wanted: ReadonlySet<string>): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0 || line.charCodeAt(0) === 35 /* # */) continue;
    const m = LINE.exec(line);
    if (!m || !wanted.has(m[1]!)) continue;
    const labels: Record<string, string> = {};
    if (m[3]) for (const l of m[3].matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, "$1");
    const value = Number(m[4]);
    if (!Number.isNaN(value)) out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** Sum of a metric across label sets (e.g. per-model gauges), or undefined when absent. */
export function sumOf(samples: Sample[], ...names: string[]): number | undefined {
  let found = false;
  let total = 0;
  for (const s of samples) {
    if (names.includes(s.name)) {
      found = true;
      total += s.value;
    }
  }
  return found ? total : undefined;
}
