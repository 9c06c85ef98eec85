import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { WorkerIndex } from "@switchboard/fleet";
import { PlainCounter, PlainGauge, PlainHistogram } from "./plain-metrics";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Everything the gateway exports on /metrics. Names are prefixed `switchboard_`. The series
 * touched on every request count in plain numbers (plain-metrics.ts); the rest are prom-client's.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new PlainCounter({ name: "switchboard_requests_total", help: "Requests by route, model, worker and status code", labelNames: ["route", "model", "worker", "status"], registers: [this.registry] });
  readonly latency = new PlainHistogram({ name: "switchboard_request_duration_seconds", help: "Whole request latency", labelNames: ["route", "model"], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  readonly ttft = new PlainHistogram({ name: "switchboard_time_to_first_token_seconds", help: "Time to the first streamed byte from the engine", labelNames: ["route", "model"], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  readonly retries = new Counter({ name: "switchboard_retries_total", help: "Upstream attempts retried on another worker", labelNames: ["route", "reason"], registers: [this.registry] });
  readonly upstreamErrors = new Counter({ name: "switchboard_upstream_errors_total", help: "Upstream failures by kind", labelNames: ["worker", "kind"], registers: [this.registry] });
  readonly rejected = new Counter({ name: "switchboard_rejected_total", help: "Requests answered by the gateway itself with an error", labelNames: ["code"], registers: [this.registry] });
  readonly transitions = new Counter({ name: "switchboard_worker_transitions_total", help: "Worker state transitions", labelNames: ["from", "to"], registers: [this.registry] });
  readonly restarts = new Counter({ name: "switchboard_engine_restarts_total", help: "In-place engine restarts detected (incarnation changed)", labelNames: ["worker"], registers: [this.registry] });
  readonly inFlight = new PlainGauge({ name: "switchboard_in_flight_requests", help: "Requests in flight through the gateway", registers: [this.registry] });

  constructor(index: WorkerIndex) {
    collectDefaultMetrics({ register: this.registry, prefix: "switchboard_process_" });
    const registry = this.registry;
    new Gauge({
      name: "switchboard_workers",
      help: "Workers by status",
      labelNames: ["status"],
      registers: [registry],
      collect() {
        const counts: Record<string, number> = { pending: 0, ready: 0, not_ready: 0, failed: 0, draining: 0 };
        for (const v of index.views.values()) counts[v.status] = (counts[v.status] ?? 0) + 1;
        for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
      },
    });
    new Gauge({
      name: "switchboard_worker_status",
      help: "1 for the worker's current status",
      labelNames: ["worker", "url", "status"],
      registers: [registry],
      collect() {
        this.reset();
        for (const v of index.views.values()) this.set({ worker: v.id, url: v.url, status: v.status }, 1);
      },
    });
    new Gauge({
      name: "switchboard_worker_in_flight",
      help: "Requests in flight per worker",
      labelNames: ["worker"],
      registers: [registry],
      collect() {
        this.reset();
        for (const v of index.views.values()) this.set({ worker: v.id }, v.inFlight);
      },
    });
    index.onChange((c) => {
      if (c.kind === "status") this.transitions.inc({ from: c.from, to: c.to });
      if (c.kind === "restarted") this.restarts.inc({ worker: c.view.id });
    });
  }
}
