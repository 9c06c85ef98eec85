import type { GatewayConfig } from "./config/types";
import { buildGateway, type GatewayParts } from "./app";

/** Starts fleet and HTTP server; `stop` stops accepting, lets in-flight requests finish (bounded), then stops actors. */
export function startGateway(config: GatewayConfig, parts: GatewayParts = {}) {
  const gw = buildGateway(config, parts);
  gw.fleet.start();
  gw.app.listen({ hostname: config.host, port: config.port });
  gw.live.start();
  const server = gw.app.server!;
  const url = `http://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${server.port}`;
  let stopping: Promise<void> | undefined;
  const stop = (graceMs = config.shutdownGraceMs) =>
    (stopping ??= (async () => {
      gw.live.stop(); // live streams never end by themselves
      const drained = server.stop(false); // stop accepting; in-flight requests continue
      await Promise.race([drained, Bun.sleep(graceMs)]);
      server.stop(true);
      gw.fleet.stop();
    })());
  return { ...gw, server, url, port: server.port, stop };
}

export type RunningGateway = ReturnType<typeof startGateway>;
