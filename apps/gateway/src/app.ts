import { Elysia } from "elysia";
import { Fleet, type SourceConfig } from "@switchboard/fleet";
import { staticDiscovery, type DesiredWorker } from "@switchboard/discovery";
import { createPolicy, type Policy } from "@switchboard/policies";
import { errors, OpenAIError } from "@switchboard/protocol";
import type { ConnectionMode, ProbeFn } from "@switchboard/workers";
import type { InspectionEvent } from "xstate";
import type { GatewayConfig } from "./config/types";
import { createLogger, logWorkerChanges, type Logger } from "./observability/logging";
import { GatewayMetrics } from "./observability/metrics";
import { adminGuard } from "./routes/admin-auth";
import { healthRoutes } from "./routes/health";
import { inferenceRoutes } from "./routes/inference";
import { workerRoutes } from "./routes/workers";
import { createLive, inspectorFor, joinInspect } from "./live";

export interface GatewayParts {
  /** Extra discovery sources (Kubernetes, PD lists). */
  sources?: SourceConfig[];
  probes?: Partial<Record<ConnectionMode, ProbeFn>>;
  logger?: Logger;
  inspect?: (e: InspectionEvent) => void;
}

export function staticWorkers(urls: string[]): DesiredWorker[] {
  return urls.map((url) => ({
    url,
    connectionMode: url.startsWith("grpc://") ? "grpc" : "http",
    workerType: "regular",
    labels: {},
    priority: 0,
    source: "static",
    sourceKey: url,
  }));
}

/** Builds the whole gateway: fleet (actors), policy, metrics, logs and the Elysia app. Not yet listening. */
export function buildGateway(config: GatewayConfig, parts: GatewayParts = {}) {
  const log = parts.logger ?? createLogger(config.logLevel);
  const sources: SourceConfig[] = [];
  if (config.workerUrls.length) sources.push({ id: "static", logic: staticDiscovery, input: { source: "static", workers: staticWorkers(config.workerUrls) } });
  sources.push(...(parts.sources ?? []));
  const guard = adminGuard(config.adminApiKey);
  const inspector = inspectorFor(config.inspectorPort, config.host, guard);
  const fleet = new Fleet({ health: config.health, sources, probes: parts.probes, inspect: joinInspect(parts.inspect, inspector?.inspect) });
  const policy: Policy = createPolicy(config.policy, { sessionHeader: config.sessionHeader } as never);
  const metrics = new GatewayMetrics(fleet.index);
  logWorkerChanges(fleet.index, log);
  // Routing memory that belonged to a worker (or its old engine process) goes with it.
  fleet.index.onChange((c) => {
    if (c.kind === "removed" || c.kind === "restarted") policy.forget?.(c.view.id);
  });
  const deps = { fleet, policy, config, metrics, log };
  const live = createLive(fleet, sources, guard, inspector);

  const app = new Elysia({
    // Quiet SSE streams must not be cut by an idle timeout; the request timeout bounds them.
    serve: { idleTimeout: 0, maxRequestBodySize: config.maxPayloadBytes + 1024 * 1024 },
  })
    .onError(({ code, error }) => {
      if (error instanceof OpenAIError) return error.toResponse();
      if (code === "NOT_FOUND") return errors.notFound("No such route.").toResponse();
      if (code === "PARSE" || code === "VALIDATION") return errors.invalidField("body", String((error as Error).message ?? error)).toResponse();
      log.error({ err: error }, "unhandled error");
      return new OpenAIError(500, "Internal router error.", "upstream_error", "internal_error").toResponse();
    })
    .use(healthRoutes(fleet, metrics))
    .use(workerRoutes(fleet, guard))
    .use(inferenceRoutes(deps))
    .use(live.routes);

  return { app, fleet, policy, metrics, log, deps, guard, live };
}

export type Gateway = ReturnType<typeof buildGateway>;
