import { Counter, type Registry } from "prom-client";

/** PD-only series, registered next to the gateway's own (`switchboard_pd_*`). */
export class PdMetrics {
  /** Decode legs sent without remote KV params: the decode recomputes the prompt. */
  readonly unminted: Counter<"connector" | "reason">;
  /** PD requests by connector and how they ended. */
  readonly requests: Counter<"connector" | "outcome">;

  constructor(registry: Registry) {
    this.unminted = new Counter({
      name: "switchboard_pd_unminted_total",
      help: "PD requests whose decode leg got no kv_transfer_params (no engine id known, rank not pinned, nothing to relay): decode recomputes",
      labelNames: ["connector", "reason"],
      registers: [registry],
    });
    this.requests = new Counter({
      name: "switchboard_pd_requests_total",
      help: "PD requests by connector and outcome (ok, prefill_failed, decode_failed, client_gone, no_pair)",
      labelNames: ["connector", "outcome"],
      registers: [registry],
    });
  }
}
