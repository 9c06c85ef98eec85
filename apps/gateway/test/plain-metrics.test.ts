/** The plain-number metrics render exactly what prom-client renders for the same observations. */
import { describe, expect, test } from "bun:test";
import { Counter, Histogram, Registry } from "prom-client";
import { PlainCounter, PlainGauge, PlainHistogram } from "../src/observability/plain-metrics";

const BUCKETS = [0.005, 0.01, 0.1, 1, 10];
const LABELS = ["route", "model", "worker", "status"];

describe("plain metrics", () => {
  test("counter and histogram text is the same as prom-client's", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const oc = new PlainCounter({ name: "x_requests_total", help: "Requests", labelNames: LABELS, registers: [ours] });
    const tc = new Counter({ name: "x_requests_total", help: "Requests", labelNames: LABELS, registers: [theirs] });
    const oh = new PlainHistogram({ name: "x_seconds", help: "Latency", labelNames: ["route", "model"], buckets: BUCKETS, registers: [ours] });
    const th = new Histogram({ name: "x_seconds", help: "Latency", labelNames: ["route", "model"], buckets: BUCKETS, registers: [theirs] });
    const seen = [
      { route: "/v1/chat/completions", model: "m", worker: "w-1", status: 200, v: 0.004 },
      { route: "/v1/chat/completions", model: "m", worker: "w-2", status: 200, v: 0.02 },
      { route: "/v1/chat/completions", model: "m", worker: "w-1", status: 200, v: 3 },
      { route: "/v1/completions", model: 'a "quoted" \\ model', worker: "none", status: 503, v: 100 },
      { route: "/v1/chat/completions", model: "m", worker: "w-1", status: 499, v: 0.01 },
    ];
    for (const { v, ...labels } of seen) {
      oc.inc(labels);
      tc.inc(labels);
      oh.observe({ route: labels.route, model: labels.model }, v);
      th.observe({ route: labels.route, model: labels.model }, v);
    }
    oc.inc({ route: "/v1/completions", model: "m", worker: "w-3", status: 200 }, 5);
    tc.inc({ route: "/v1/completions", model: "m", worker: "w-3", status: 200 }, 5);
    const sorted = (t: string) => t.split("\n").sort().join("\n");
    expect(sorted(await ours.metrics())).toBe(sorted(await theirs.metrics()));
    expect(oc.value({ route: "/v1/chat/completions", model: "m", worker: "w-1", status: 200 })).toBe(2);
    expect(oh.count({ route: "/v1/chat/completions", model: "m" })).toBe(4);
    expect(JSON.stringify(await ours.getMetricsAsJSON())).toContain('"le":0.005');
  });

  test("a gauge counts up and down; reset empties", async () => {
    const r = new Registry();
    const g = new PlainGauge({ name: "x_in_flight", help: "In flight", registers: [r] });
    const c = new PlainCounter({ name: "x_total", help: "Total", labelNames: ["code"], registers: [r] });
    g.inc();
    g.inc();
    g.dec();
    c.inc({ code: 400 });
    expect(await r.metrics()).toContain("x_in_flight 1");
    expect(await r.metrics()).toContain('x_total{code="400"} 1');
    r.resetMetrics();
    expect(await r.metrics()).not.toContain('x_total{code="400"}');
    expect(g.value).toBe(0);
  });
});
