import { Elysia } from "elysia";
import { Fleet, type SourceConfig } from "@switchboard/fleet";
import { kubernetesSource, staticDiscovery, type DesiredWorker } from "@switchboard/discovery";
import { createPolicy, type Policy } from "@switchboard/policies";
import { errors, OpenAIError } from "@switchboard/protocol";
import type { ConnectionMode, ProbeFn } from "@switchboard/workers";
import type { InspectionEvent } from "xstate";
import type { GatewayConfig } from "./config/types";
import { policyOptions } from "./config/policy-options";
import { createLogger, logWorkerChanges, type Logger } from "./observability/logging";
import { GatewayMetrics } from "./observability/metrics";
import { adminGuard } from "./routes/admin-auth";
import { healthRoutes } from "./routes/health";
import { inferenceRoutes, inferenceServeRoutes } from "./routes/inference";
import { workerRoutes } from "./routes/workers";
import { createPdDispatch, pdStaticWorkers } from "./pd";
import { createLive, inspectorFor, joinInspect, type LiveHubOptions } from "./live";

export interface GatewayParts {
  /** Extra discovery sources (Kubernetes, PD lists). */
  sources?: SourceConfig[];
  probes?: Partial<Record<ConnectionMode, ProbeFn>>;
  logger?: Logger;
  inspect?: (e: InspectionEvent) => void;
  /** Live stream tuning (tests shorten the keepalive). */
  live?: LiveHubOptions;
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
  // PD: --prefill / --decode workers join the static list with their roles.
  const listed = [...staticWorkers(config.workerUrls), ...(config.pd?.enabled ? pdStaticWorkers(config.pd) : [])];
  if (listed.length) sources.push({ id: "static", logic: staticDiscovery, input: { source: "static", workers: listed } });
  sources.push(...(parts.sources ?? []));
  // Kubernetes discovery: loads the kube config now, so a bad one stops start-up with its reason.
  if (config.serviceDiscovery) sources.push(kubernetesSource(config.serviceDiscovery, { log: log.child({ component: "k8s-discovery" }) }));
  const guard = adminGuard(config.adminApiKey);
  const inspector = inspectorFor(config.inspectorPort, config.host, guard);
  // Engine loads are scraped on an interval (0 = off); see config/policy-options for staleness.
  const loadScrape = { intervalMs: config.loadScrapeIntervalMs ?? 0 };
  const fleet = new Fleet({ health: config.health, sources, probes: parts.probes, inspect: joinInspect(parts.inspect, inspector?.inspect), loadScrape });
  const policy: Policy = createPolicy(config.policy, policyOptions(config));
  const metrics = new GatewayMetrics(fleet.index);
  logWorkerChanges(fleet.index, log);
  // Routing memory that belonged to a worker (or its old engine process) goes with it.
  fleet.index.onChange((c) => {
    if (c.kind === "removed" || c.kind === "restarted") policy.forget?.(c.view.id);
  });
  const deps = { fleet, policy, config, metrics, log };
  // PD: takes over requests for models served by prefill/decode pairs.
  const pd = config.pd?.enabled ? createPdDispatch(deps, config.pd) : undefined;
  const live = createLive(fleet, sources, guard, inspector, parts.live);

  const inference = inferenceRoutes(deps, pd?.dispatch);
  const app = new Elysia({
    // Quiet SSE streams must not be cut by an idle timeout; the request timeout bounds them.
    // The inference POSTs are Bun.serve routes ahead of Elysia (same handlers; see routes/inference.ts).
    serve: { idleTimeout: 0, maxRequestBodySize: config.maxPayloadBytes + 1024 * 1024, routes: inferenceServeRoutes(inference) },
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
    .use(inference)
    .use(live.routes);

  return { app, fleet, policy, metrics, log, deps, guard, live };
}

export type Gateway = ReturnType<typeof buildGateway>;
