import { assign, sendParent, setup } from "xstate";
import type { DesiredWorker, DiscoveryEvent } from "./types";

export interface AdminContext {
  source: string;
  /** By URL: one registration per address. */
  byUrl: Record<string, DesiredWorker>;
}

export type AdminEvent =
  /** Register (or re-register: the old worker is replaced completely). */
  | { type: "admin.register"; worker: DesiredWorker }
  | { type: "admin.patch"; url: string; patch: Partial<Pick<DesiredWorker, "labels" | "priority">> }
  | { type: "admin.forget"; url: string };

/** Workers registered through `POST /workers`. */
export const adminDiscovery = setup({
  types: { input: {} as { source: string }, context: {} as AdminContext, events: {} as AdminEvent },
  actions: {
    announce: sendParent(({ context }): DiscoveryEvent => ({ type: "source.desired", source: context.source, workers: Object.values(context.byUrl) })),
  },
}).createMachine({
  id: "adminDiscovery",
  context: ({ input }) => ({ source: input.source, byUrl: {} }),
  entry: sendParent(({ context }): DiscoveryEvent => ({
    type: "source.status",
    status: { source: context.source, kind: "admin", connected: true, lastSyncAt: Date.now(), lastError: null, reconnects: 0, workers: 0 },
  })),
  on: {
    "admin.register": {
      actions: [assign(({ context, event }) => ({ byUrl: { ...context.byUrl, [event.worker.url]: event.worker } })), "announce"],
    },
    "admin.patch": {
      guard: ({ context, event }) => event.url in context.byUrl,
      actions: assign(({ context, event }) => ({ byUrl: { ...context.byUrl, [event.url]: { ...context.byUrl[event.url]!, ...event.patch } } })),
    },
    "admin.forget": {
      actions: [
        assign(({ context, event }) => {
          const { [event.url]: _gone, ...rest } = context.byUrl;
          return { byUrl: rest };
        }),
        "announce",
      ],
    },
  },
});
