#!/usr/bin/env bun
import { parseFlags } from "./config/flags";
import { startGateway, type RunningGateway } from "./server";

const parsed = parseFlags(process.argv.slice(2));
if ("exitCode" in parsed) {
  (parsed.exitCode === 0 ? process.stdout : process.stderr).write(parsed.output);
  process.exit(parsed.exitCode);
}
const config = parsed.config;

let gw: RunningGateway;
try {
  gw = startGateway(config);
} catch (err) {
  // A start-up problem (port taken, unreadable kubeconfig, ...) is one line, not a stack trace.
  process.stderr.write(`gateway: cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
gw.log.info(
  {
    url: gw.url,
    policy: config.policy,
    static_workers: config.workerUrls.length,
    pd: config.pd?.enabled ? { prefill: config.pd.prefill.length, decode: config.pd.decode.length } : undefined,
    service_discovery: config.serviceDiscovery ? { mode: config.serviceDiscovery.mode, namespace: config.serviceDiscovery.namespace } : undefined,
    visualizer: `${gw.url}/ui`,
    inspector: gw.live.inspector?.url,
  },
  "switchboard listening",
);

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, async () => {
    gw.log.info({ signal: sig }, "shutting down: no new requests, finishing in-flight ones");
    await gw.stop();
    gw.log.info("bye");
    process.exit(0);
  });
}
