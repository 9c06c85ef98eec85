import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { defaultHealthConfig } from "@switchboard/workers";
import { policyNames, type PolicyName } from "@switchboard/policies";
import type { CacheAwareFlags, GatewayConfig, PdKvConnector, PdPrefillFlag } from "./types";
import { addKubernetesOptions, checkKubernetes, kubernetesConfig } from "./k8s-flags"; // Kubernetes discovery

function positiveNumber(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${flag} must be a positive number, got '${v}'`);
    return n;
  };
}
function wholeNumber(flag: string, min = 0) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${flag} must be a whole number ≥ ${min}, got '${v}'`);
    return n;
  };
}
function port(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`--port must be 0..65535, got '${v}'`);
  return n;
}
function workerUrl(v: string, prev: string[] = []) {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new InvalidArgumentError(`'${v}' is not a URL (expected http://host:port or grpc://host:port)`);
  }
  if (!["http:", "https:", "grpc:"].includes(u.protocol)) throw new InvalidArgumentError(`'${v}' must use http://, https:// or grpc://`);
  return [...prev, v.replace(/\/+$/, "")];
}

// --- PD disaggregation flags ---
/** `--prefill URL [BOOTSTRAP_PORT]`, repeatable: a URL starts an entry, a number after it is its bootstrap port. */
function prefillEntry(v: string, prev: PdPrefillFlag[] = []): PdPrefillFlag[] {
  if (/^\d+$/.test(v)) {
    const last = prev.at(-1);
    const n = Number(v);
    if (!last) throw new InvalidArgumentError(`bootstrap port '${v}' must follow a prefill URL`);
    if (last.bootstrapPort !== undefined) throw new InvalidArgumentError(`prefill ${last.url} has two bootstrap ports (${last.bootstrapPort}, ${v})`);
    if (n < 1 || n > 65535) throw new InvalidArgumentError(`bootstrap port must be 1..65535, got '${v}'`);
    return [...prev.slice(0, -1), { ...last, bootstrapPort: n }];
  }
  return [...prev, { url: workerUrl(v).at(-1)! }];
}

function addPdOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--pd-disaggregation", "prefill/decode disaggregation: each request is prefilled on one worker and decoded on another").default(false))
    .addOption(new Option("--prefill <url_and_port...>", "a prefill worker: URL [BOOTSTRAP_PORT] (repeatable)").default([]).argParser(prefillEntry))
    .addOption(new Option("--decode <urls...>", "a decode worker URL (repeatable)").default([]).argParser(workerUrl))
    .addOption(new Option("--prefill-policy <name>", "policy choosing the prefill worker (default: --policy)").choices(policyNames))
    .addOption(new Option("--decode-policy <name>", "policy choosing the decode worker (default: --policy)").choices(policyNames))
    .addOption(new Option("--kv-connector <name>", "how KV moves from prefill to decode, for workers that do not say").choices(["MooncakeConnector", "NixlConnector", "sglang"]).default("MooncakeConnector"));
}

function pdConfig(o: Record<string, any>): GatewayConfig["pd"] {
  return {
    enabled: o.pdDisaggregation === true,
    prefill: o.prefill,
    decode: o.decode,
    prefillPolicy: (o.prefillPolicy ?? o.policy) as PolicyName,
    decodePolicy: (o.decodePolicy ?? o.policy) as PolicyName,
    kvConnector: o.kvConnector as PdKvConnector,
  };
}

/** PD flags that make no sense without --pd-disaggregation are refused rather than ignored. */
function checkPd(o: Record<string, any>): string | null {
  if (o.pdDisaggregation) return null;
  const stray = [o.prefill.length && "--prefill", o.decode.length && "--decode", o.prefillPolicy && "--prefill-policy", o.decodePolicy && "--decode-policy"].filter(Boolean);
  return stray.length ? `${stray[0]} needs --pd-disaggregation` : null;
}
// --- end PD flags ---

// --- routing quality flags (load scraping, cache_aware tuning) ---
function share(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`${flag} must be a number in 0..1, got '${v}'`);
    return n;
  };
}
function nonNegative(flag: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${flag} must be a number ≥ 0, got '${v}'`);
    return n;
  };
}

function addRoutingOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--load-scrape-interval-ms <ms>", "how often each Ready worker's engine load is read (/metrics or GetLoads); 0 = off").default(500).argParser(wholeNumber("--load-scrape-interval-ms")))
    .addOption(new Option("--cache-threshold <share>", "cache_aware: follow a cached prefix covering at least this share of the prompt (default 0.3)").argParser(share("--cache-threshold")))
    .addOption(new Option("--balance-abs-threshold <n>", "cache_aware: the imbalance guard fires when max − min load exceeds this (default 2; SMG uses 64) …").argParser(nonNegative("--balance-abs-threshold")))
    .addOption(new Option("--balance-rel-threshold <x>", "… and max load exceeds this multiple of min load (default 1.5)").argParser(nonNegative("--balance-rel-threshold")))
    .addOption(new Option("--eviction-interval-secs <s>", "cache_aware: how often expired prefixes are swept from memory (default 30)").argParser(positiveNumber("--eviction-interval-secs")))
    .addOption(new Option("--max-tree-size <chars>", "cache_aware: prompt text remembered per worker, in characters (default 2000000)").argParser(wholeNumber("--max-tree-size", 1)));
}

function routingConfig(o: Record<string, any>): Pick<GatewayConfig, "loadScrapeIntervalMs" | "cacheAware"> {
  const cacheAware: CacheAwareFlags = {};
  if (o.cacheThreshold !== undefined) cacheAware.cacheThreshold = o.cacheThreshold;
  if (o.balanceAbsThreshold !== undefined) cacheAware.balanceAbsThreshold = o.balanceAbsThreshold;
  if (o.balanceRelThreshold !== undefined) cacheAware.balanceRelThreshold = o.balanceRelThreshold;
  if (o.evictionIntervalSecs !== undefined) cacheAware.sweepEveryMs = o.evictionIntervalSecs * 1000;
  if (o.maxTreeSize !== undefined) cacheAware.maxCharsPerWorker = o.maxTreeSize;
  return { loadScrapeIntervalMs: o.loadScrapeIntervalMs ?? 0, cacheAware };
}
// --- end routing quality flags ---

export function buildCommand(): Command {
  const d = defaultHealthConfig;
  return new Command("gateway")
    .description("switchboard: an OpenAI-compatible router for vLLM / SGLang engines")
    .allowExcessArguments(false)
    .addOption(new Option("--host <host>", "address to listen on").default("0.0.0.0"))
    .addOption(new Option("--port <port>", "port to listen on").default(30000).argParser(port))
    .addOption(new Option("--worker-urls <urls...>", "engine URLs to route to (static discovery)").default([]).argParser(workerUrl))
    .addOption(new Option("--policy <name>", "routing policy").choices(policyNames).default("cache_aware"))
    .addOption(new Option("--health-check-interval-secs <s>", "probe interval for Ready workers").default(d.intervalMs / 1000).argParser(positiveNumber("--health-check-interval-secs")))
    .addOption(new Option("--health-check-timeout-secs <s>", "bound on each probe").default(d.timeoutMs / 1000).argParser(positiveNumber("--health-check-timeout-secs")))
    .addOption(new Option("--health-check-fast-interval-secs <s>", "probe cadence while Pending or recovering").default(d.fastIntervalMs / 1000).argParser(positiveNumber("--health-check-fast-interval-secs")))
    .addOption(new Option("--health-failure-threshold <n>", "consecutive failures before Ready→NotReady").default(d.failureThreshold).argParser(wholeNumber("--health-failure-threshold", 1)))
    .addOption(new Option("--health-success-threshold <n>", "consecutive successes before a worker is Ready").default(d.successThreshold).argParser(wholeNumber("--health-success-threshold", 1)))
    .addOption(new Option("--health-check-endpoint <path>", "engine health path").default(d.endpoint))
    .addOption(new Option("--model-refresh-probes <n>", "re-read each worker's model list every N probes (0 = only when needed)").default(d.modelRefreshEvery).argParser(wholeNumber("--model-refresh-probes")))
    .addOption(new Option("--drain-timeout-secs <s>", "bound on waiting for in-flight requests of a draining worker").default(d.drainTimeoutMs / 1000).argParser(positiveNumber("--drain-timeout-secs")))
    .addOption(new Option("--request-timeout-secs <s>", "bound on one upstream request").default(1800).argParser(positiveNumber("--request-timeout-secs")))
    .addOption(new Option("--max-retries <n>", "retries on another worker before the first byte").default(5).argParser(wholeNumber("--max-retries")))
    .addOption(new Option("--retry-initial-backoff-ms <ms>", "first retry backoff (×1.5 each time)").default(50).argParser(wholeNumber("--retry-initial-backoff-ms")))
    .addOption(new Option("--max-payload-size <bytes>", "largest request body accepted").default(64 * 1024 * 1024).argParser(wholeNumber("--max-payload-size", 1)))
    .addOption(new Option("--shutdown-grace-secs <s>", "on SIGTERM, bound on in-flight requests").default(30).argParser(positiveNumber("--shutdown-grace-secs")))
    .addOption(new Option("--session-header <name>", "extra header carrying a session key for consistent_hash"))
    .addOption(new Option("--admin-api-key <key>", "require Authorization: Bearer <key> for admin writes and the live stream"))
    .addOption(new Option("--inspector-port <port>", "serve the actor system to Stately inspector tooling (WebSocket) on this port; off by default").argParser(port))
    .addOption(new Option("--log-level <level>", "log level").choices(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"));
}

export function toConfig(o: Record<string, any>): GatewayConfig {
  return {
    host: o.host,
    port: o.port,
    workerUrls: o.workerUrls,
    policy: o.policy as PolicyName,
    health: {
      intervalMs: o.healthCheckIntervalSecs * 1000,
      timeoutMs: o.healthCheckTimeoutSecs * 1000,
      fastIntervalMs: o.healthCheckFastIntervalSecs * 1000,
      failureThreshold: o.healthFailureThreshold,
      successThreshold: o.healthSuccessThreshold,
      endpoint: o.healthCheckEndpoint.startsWith("/") ? o.healthCheckEndpoint : `/${o.healthCheckEndpoint}`,
      modelRefreshEvery: o.modelRefreshProbes,
      drainTimeoutMs: o.drainTimeoutSecs * 1000,
    },
    requestTimeoutMs: o.requestTimeoutSecs * 1000,
    retry: { maxRetries: o.maxRetries, initialBackoffMs: o.retryInitialBackoffMs, backoffMultiplier: 1.5, maxBackoffMs: 30_000 },
    adminApiKey: o.adminApiKey,
    logLevel: o.logLevel,
    maxPayloadBytes: o.maxPayloadSize,
    shutdownGraceMs: o.shutdownGraceSecs * 1000,
    sessionHeader: o.sessionHeader,
    inspectorPort: o.inspectorPort,
    pd: pdConfig(o),
    ...routingConfig(o),
    serviceDiscovery: kubernetesConfig(o), // Kubernetes discovery
  };
}

export type ParseOutcome = { config: GatewayConfig } | { exitCode: number; output: string };

/** Parses argv (without node/script). Bad input → exit code 2 and a one-line reason; --help → 0. */
export function parseFlags(argv: string[]): ParseOutcome {
  const cmd = addKubernetesOptions(addRoutingOptions(addPdOptions(buildCommand())));
  let output = "";
  cmd.exitOverride().configureOutput({ writeOut: (s) => (output += s), writeErr: (s) => (output += s) });
  try {
    cmd.parse(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.help") return { exitCode: 0, output };
      return { exitCode: 2, output: `${e.message.replace(/^error: /, "gateway: ").split("\n")[0]}\n` };
    }
    throw e;
  }
  const pdProblem = checkPd(cmd.opts());
  if (pdProblem) return { exitCode: 2, output: `gateway: ${pdProblem}\n` };
  const k8sProblem = checkKubernetes(cmd.opts()); // Kubernetes discovery
  if (k8sProblem) return { exitCode: 2, output: `gateway: ${k8sProblem}\n` };
  return { config: toConfig(cmd.opts()) };
}
