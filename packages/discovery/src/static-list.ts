import { sendParent, setup } from "xstate";
import type { DesiredWorker, DiscoveryEvent } from "./types";

export interface StaticInput {
  source: string;
  workers: DesiredWorker[];
}

/** The `--worker-urls` source: says once, at start, which workers exist. */
export const staticDiscovery = setup({
  types: { input: {} as StaticInput, context: {} as StaticInput },
}).createMachine({
  id: "staticDiscovery",
  context: ({ input }) => input,
  entry: [
    sendParent(({ context }): DiscoveryEvent => ({ type: "source.desired", source: context.source, workers: context.workers })),
    sendParent(({ context }): DiscoveryEvent => ({
      type: "source.status",
      status: { source: context.source, kind: "static", connected: true, lastSyncAt: Date.now(), lastError: null, reconnects: 0, workers: context.workers.length },
    })),
  ],
});
