import { Elysia } from "elysia";
import type { Fleet } from "@switchboard/fleet";
import type { GatewayMetrics } from "../observability/metrics";

export function healthRoutes(fleet: Fleet, metrics: GatewayMetrics) {
  return new Elysia({ name: "health" })
    .get("/health", () => ({ status: "ok" }))
    .get("/readiness", ({ set }) => {
      const ready = fleet.index.readyCount();
      if (ready === 0) set.status = 503;
      return { status: ready > 0 ? "ready" : "not_ready", ready_workers: ready, total_workers: fleet.index.views.size };
    })
    .get("/metrics", async () => new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } }));
}
