/**
 * Counters, a gauge and histograms that count in plain numbers and render only when /metrics is
 * scraped. prom-client hashes and validates the label set on every inc/observe; on the request
 * path that is a cost paid per request for a value read every few seconds. These register in a
 * prom-client Registry (same text format, same names) and keep its call shapes:
 * `inc(labels, n?)`, `observe(labels, v)`, `inc()/dec()`.
 */
import type { Registry } from "prom-client";

type Labels = Record<string, string | number>;

interface Sample {
  labels: Labels;
  sharedLabels?: Labels;
  value: number;
  metricName?: string;
}

interface MetricSpec {
  name: string;
  help: string;
  labelNames?: readonly string[];
  registers: Registry[];
}

abstract class PlainMetric {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly aggregator = "sum" as const;
  abstract readonly type: "counter" | "gauge" | "histogram";

  constructor(spec: MetricSpec) {
    this.name = spec.name;
    this.help = spec.help;
    this.labelNames = spec.labelNames ?? [];
    for (const r of spec.registers) r.registerMetric(this as never);
  }

  private readonly tree = new Map<string, unknown>();

  /**
   * The cell of a label set, made by `make` the first time. Label values are looked up one level
   * at a time (nested maps), so a request builds no key string: the values it passes (route,
   * model, worker id) are strings whose hashes are already known.
   */
  protected cell<C>(labels: Labels, make: (labels: Labels) => C): C {
    const names = this.labelNames;
    let map = this.tree;
    for (let i = 0; i < names.length; i++) {
      const v = labels[names[i]!];
      const key = v === undefined ? "" : typeof v === "string" ? v : String(v);
      let next = map.get(key);
      if (next === undefined) {
        next = i === names.length - 1 ? make(labels) : new Map<string, unknown>();
        map.set(key, next);
      }
      if (i === names.length - 1) return next as C;
      map = next as Map<string, unknown>;
    }
    // No labels: one cell.
    let only = this.tree.get("");
    if (only === undefined) this.tree.set("", (only = make(labels)));
    return only as C;
  }

  /** Looks a cell up without making one. */
  protected find<C>(labels: Labels): C | undefined {
    let node: unknown = this.tree;
    for (const n of this.labelNames) {
      const v = labels[n];
      node = (node as Map<string, unknown>).get(v === undefined ? "" : typeof v === "string" ? v : String(v));
      if (node === undefined) return undefined;
    }
    return (this.labelNames.length ? node : this.tree.get("")) as C | undefined;
  }

  protected clearCells(): void {
    this.tree.clear();
  }

  protected pick(labels: Labels): Labels {
    const out: Labels = {};
    for (const n of this.labelNames) if (labels[n] !== undefined) out[n] = labels[n]!;
    return out;
  }

  protected abstract samples(): Sample[];

  /** What prom-client's Registry calls to render the text format. */
  async getForPromString() {
    return { name: this.name, help: this.help, type: this.type, values: this.samples(), aggregator: this.aggregator };
  }

  /** The JSON form: shared labels folded into each sample's labels, as prom-client does. */
  async get() {
    const values = this.samples().map((s) => ({ value: s.value, metricName: s.metricName, labels: { ...s.sharedLabels, ...s.labels } }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  abstract reset(): void;
}

/** A counter by label set. */
export class PlainCounter extends PlainMetric {
  readonly type = "counter" as const;
  private cells: { labels: Labels; value: number }[] = [];

  private readonly make = (labels: Labels) => {
    const c = { labels: this.pick(labels), value: 0 };
    this.cells.push(c);
    return c;
  };

  inc(labels: Labels = {}, n = 1): void {
    this.cell(labels, this.make).value += n;
  }

  value(labels: Labels = {}): number {
    return this.find<{ value: number }>(labels)?.value ?? 0;
  }

  protected samples(): Sample[] {
    return this.cells.map((c) => ({ labels: c.labels, value: c.value }));
  }

  reset(): void {
    this.cells = [];
    this.clearCells();
  }
}

/** A gauge without labels. */
export class PlainGauge extends PlainMetric {
  readonly type = "gauge" as const;
  private n = 0;

  inc(by = 1): void {
    this.n += by;
  }

  dec(by = 1): void {
    this.n -= by;
  }

  set(v: number): void {
    this.n = v;
  }

  get value(): number {
    return this.n;
  }

  protected samples(): Sample[] {
    return [{ labels: {}, value: this.n }];
  }

  reset(): void {
    this.n = 0;
  }
}

interface HistogramCell {
  labels: Labels;
  /** Per-bucket (not cumulative) counts; the last slot is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

export class PlainHistogram extends PlainMetric {
  readonly type = "histogram" as const;
  private readonly bounds: number[];
  private cells: HistogramCell[] = [];

  constructor(spec: MetricSpec & { buckets: number[] }) {
    super(spec);
    this.bounds = [...spec.buckets].sort((a, b) => a - b);
  }

  private readonly make = (labels: Labels): HistogramCell => {
    const c: HistogramCell = { labels: this.pick(labels), buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.cells.push(c);
    return c;
  };

  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const c = this.cell(labels, this.make);
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    c.buckets[i]!++;
    c.sum += value;
    c.count++;
  }

  /** Observations so far for a label set (tests and the benchmark). */
  count(labels: Labels): number {
    return this.find<HistogramCell>(labels)?.count ?? 0;
  }

  protected samples(): Sample[] {
    const out: Sample[] = [];
    for (const c of this.cells) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += c.buckets[i]!;
        out.push({ labels: { le: this.bounds[i]! }, sharedLabels: c.labels, value: acc, metricName: `${this.name}_bucket` });
      }
      out.push({ labels: { le: "+Inf" }, sharedLabels: c.labels, value: c.count, metricName: `${this.name}_bucket` });
      out.push({ labels: {}, sharedLabels: c.labels, value: c.sum, metricName: `${this.name}_sum` });
      out.push({ labels: {}, sharedLabels: c.labels, value: c.count, metricName: `${this.name}_count` });
    }
    return out;
  }

  reset(): void {
    this.cells = [];
    this.clearCells();
  }
}
