#!/usr/bin/env bun
/**
 * The demo: two embedded mock engines (one starts late, to show a late worker joining) behind
 * a gateway. Extra flags are passed to the gateway, e.g. `--policy round_robin`.
 */
import { startMockEngine } from "@switchboard/mock-engine";
import { parseFlags } from "./config/flags";
import { startGateway } from "./server";

const engines = await Promise.all([
  startMockEngine({ models: ["demo-model"], loras: [{ id: "demo-lora", parent: "demo-model" }], tokenDelayMs: 20 }),
  startMockEngine({ models: ["demo-model"], tokenDelayMs: 20, startDelayMs: 5_000 }),
]);
const parsed = parseFlags(["--host", "127.0.0.1", "--worker-urls", ...engines.map((e) => e.url), ...process.argv.slice(2)]);
if ("exitCode" in parsed) {
  process.stderr.write(parsed.output);
  process.exit(parsed.exitCode);
}
const gw = startGateway(parsed.config);
const url = gw.url;
console.log(`
switchboard demo
  gateway:   ${url}
  engines:   ${engines.map((e) => e.url).join(", ")} (the second starts answering after 5 s)
  workers:   curl -s ${url}/workers
  metrics:   curl -s ${url}/metrics
  live view: ${url}/ui   (the worker state machines, live)

try:
  curl -sN ${url}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"demo-model","messages":[{"role":"user","content":"Hello!"}],"stream":true,"max_tokens":16}'
`);
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, async () => {
    await gw.stop(5_000);
    await Promise.all(engines.map((e) => e.stop()));
    process.exit(0);
  });
}
