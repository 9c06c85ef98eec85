#!/usr/bin/env bun
import { Command, InvalidArgumentError } from "commander";
import { startVisualizer } from "./server";

function port(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`--port must be 0..65535, got '${v}'`);
  return n;
}
function httpUrl(v: string) {
  try {
    const u = new URL(v);
    if (u.protocol === "http:" || u.protocol === "https:") return v;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError(`'${v}' is not an http(s) URL`);
}

const opts = new Command("visualizer")
  .description("serves the switchboard live state-machine page, pointed at a gateway")
  .requiredOption("--gateway <url>", "the gateway to watch, e.g. http://127.0.0.1:30000", httpUrl)
  .option("--host <host>", "address to listen on", "127.0.0.1")
  .option("--port <port>", "port to listen on", port, 8080)
  .parse()
  .opts<{ gateway: string; host: string; port: number }>();

const v = await startVisualizer(opts);
console.log(`switchboard visualizer on ${v.url} watching ${v.gateway} (add ?token=<admin key> when the gateway has one)`);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    v.stop();
    process.exit(0);
  });
}
