#!/usr/bin/env bun
import { parseFlags } from "./config/flags";
import { startGateway } from "./server";

const parsed = parseFlags(process.argv.slice(2));
if ("exitCode" in parsed) {
  (parsed.exitCode === 0 ? process.stdout : process.stderr).write(parsed.output);
  process.exit(parsed.exitCode);
}
const gw = startGateway(parsed.config);
gw.log.info({ url: gw.url, policy: parsed.config.policy, workers: parsed.config.workerUrls.length }, "switchboard listening");

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, async () => {
    gw.log.info({ signal: sig }, "shutting down: no new requests, finishing in-flight ones");
    await gw.stop();
    gw.log.info("bye");
    process.exit(0);
  });
}
