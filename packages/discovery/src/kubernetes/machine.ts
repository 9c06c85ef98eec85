import { GoneError, KubeError, type ResourceName } from "@switchboard/kube";
import { assign, enqueueActions, setup } from "xstate";
import type { DesiredWorker, DiscoveryEvent, SourceStatus } from "../types";
import { reconnectDelay } from "./backoff";
import { applyWatchEvent, entriesFromList, type Skipped } from "./entries";
import { listCollections, watchCollections, type KubeAccess, type Listed, type WatchFeedEvent } from "./kube-actors";
import { defaultDiscoveryTiming, type DiscoveryTiming } from "./options";
import type { DiscoveryPlan, Entries } from "./plan";

export interface KubeDiscoveryInput {
  /** Source name, also the actor id, e.g. `k8s-pods:serving`. */
  source: string;
  access: KubeAccess;
  plan: DiscoveryPlan;
  timing?: Partial<DiscoveryTiming>;
  /** Jitter source; tests pass a seeded one. */
  random?: () => number;
}

export interface KubeDiscoveryContext {
  source: string;
  access: KubeAccess;
  plan: DiscoveryPlan;
  timing: DiscoveryTiming;
  random: () => number;
  /** What the last list plus the watch events since say exists, per resource. */
  entries: Entries;
  /** Where the next watch of each resource starts: its last list's resourceVersion. */
  resourceVersions: Partial<Record<ResourceName, string>>;
  /** Reconnects since the last healthy sync: drives the backoff. */
  attempt: number;
  retryInMs: number;
  /** Watches lost (closed, dropped, expired, failed) since start. */
  reconnects: number;
  connected: boolean;
  lastSyncAt: number | null;
  lastError: string | null;
  /** Something failed since the last sync: the next sync is worth an info line. */
  troubled: boolean;
  /** Listed successfully at least once: only then is the desired set worth announcing. */
  synced: boolean;
  /** What the parent was last told (a hash of the desired set, its size, the status), to send only changes. */
  announced: string | null;
  announcedCount: number;
  reported: string | null;
}

/** `op reason: detail` for a KubeError, else the message: what logs and /workers show. */
export function describeError(err: unknown): string {
  if (err instanceof KubeError) return err.message;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

function statusOf(c: KubeDiscoveryContext, workers: number): SourceStatus {
  return { source: c.source, kind: c.plan.kind, connected: c.connected, lastSyncAt: c.lastSyncAt, lastError: c.lastError, reconnects: c.reconnects, workers };
}

type Enqueue = {
  assign: (patch: () => Partial<KubeDiscoveryContext>) => void;
  sendParent: (e: DiscoveryEvent) => void;
  (fn: () => void): void;
};

/**
 * Commits `next` and tells the parent what changed: the whole desired set (always after a list,
 * so every reconnect reconciles; else only when it changed) and the source status.
 */
function commit(enqueue: Enqueue, next: KubeDiscoveryContext, forceAnnounce: boolean): void {
  let workers: DesiredWorker[] | null = null;
  if (next.synced) {
    try {
      workers = next.plan.desired(next.entries);
    } catch (err) {
      // A bug in a plan must not stop the loop: the previous set stands until the next change.
      const log = next.access.log;
      enqueue(() => log.error({ source: next.source, err: describeError(err) }, "kubernetes desired set failed"));
    }
  }
  const patch: Partial<KubeDiscoveryContext> = { ...next };
  if (workers) {
    // A hash, not the JSON: the context stays small in snapshots.
    const fingerprint = Bun.hash(JSON.stringify(workers)).toString(36);
    if (forceAnnounce || fingerprint !== next.announced) {
      patch.announced = fingerprint;
      patch.announcedCount = workers.length;
      enqueue.sendParent({ type: "source.desired", source: next.source, workers });
    }
  }
  const count = workers?.length ?? next.announcedCount;
  const status = statusOf(next, count);
  const reported = JSON.stringify(status);
  if (reported !== next.reported) {
    patch.reported = reported;
    enqueue.sendParent({ type: "source.status", status });
  }
  // A function, not the object: xstate would call function-valued properties (`random`) as assigners.
  enqueue.assign(() => patch);
}

function logSkipped(enqueue: Enqueue, c: KubeDiscoveryContext, resource: string, skipped: readonly Skipped[]): void {
  if (skipped.length === 0) return;
  const log = c.access.log;
  enqueue(() => {
    for (const s of skipped) log.warn({ source: c.source, resource, object: s.key, reason: s.reason }, "kubernetes object skipped");
  });
}

/**
 * Kubernetes discovery as an actor. On start and on every reconnect it lists (the list replaces
 * all it knew, so objects that vanished while no watch was open go), announces the whole
 * desired set, then watches from the list's resourceVersion. A watch that ends for any reason —
 * server timeout, dropped connection, 410 Gone, error event — leads back to a list, after a
 * jittered backoff. It never probes engines: new workers start Pending and probe themselves.
 */
export const kubernetesDiscovery = setup({
  types: { input: {} as KubeDiscoveryInput, context: {} as KubeDiscoveryContext, events: {} as WatchFeedEvent },
  actors: { listCollections, watchCollections },
  delays: {
    retry: ({ context }) => context.retryInMs,
    stableAfter: ({ context }) => context.timing.stableAfterMs,
  },
  guards: {
    /** 410 on a watch that followed a healthy sync: its history simply moved on; list right away. */
    goneAfterHealthySync: ({ context, event }) => event.type === "kube.watchEnded" && event.error instanceof GoneError && context.attempt === 0,
  },
  actions: {
    synced: enqueueActions(({ context, event, enqueue }) => {
      const listed = (event as unknown as { output: Listed }).output;
      const entries: Entries = { ...context.entries };
      const resourceVersions = { ...context.resourceVersions };
      for (const c of context.plan.collections) {
        const result = listed[c.resource];
        if (!result) continue;
        const { entries: fresh, skipped } = entriesFromList(result.items, c.project);
        entries[c.resource] = fresh;
        resourceVersions[c.resource] = result.resourceVersion;
        logSkipped(enqueue as Enqueue, context, c.resource, skipped);
      }
      const recovering = !context.synced || context.troubled;
      const next: KubeDiscoveryContext = { ...context, entries, resourceVersions, connected: true, lastSyncAt: Date.now(), synced: true, troubled: false };
      commit(enqueue as Enqueue, next, true);
      const log = context.access.log;
      const fields = { source: context.source, reconnects: context.reconnects, resourceVersions };
      enqueue(() => (recovering ? log.info(fields, "kubernetes discovery synced") : log.debug(fields, "kubernetes discovery relisted")));
    }),
    listFailed: enqueueActions(({ context, event, enqueue }) => {
      const error = (event as unknown as { error: unknown }).error;
      const lastError = describeError(error);
      commit(enqueue as Enqueue, { ...context, connected: false, lastError, troubled: true }, false);
      const log = context.access.log;
      enqueue(() => log.warn({ source: context.source, reason: error instanceof KubeError ? error.reason : "unknown", error: lastError, attempt: context.attempt }, "kubernetes list failed"));
    }),
    applyEvent: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "kube.event") return;
      const c = context.plan.collections.find((x) => x.resource === event.resource);
      if (!c) return;
      const { entries, skipped } = applyWatchEvent(context.entries[event.resource] ?? {}, event.event, c.project);
      if (skipped) logSkipped(enqueue as Enqueue, context, event.resource, [skipped]);
      commit(enqueue as Enqueue, { ...context, entries: { ...context.entries, [event.resource]: entries } }, false);
    }),
    watchLost: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "kube.watchEnded") return;
      const { error, resource } = event;
      const next = {
        ...context,
        connected: false,
        reconnects: context.reconnects + 1,
        lastError: error ? describeError(error) : context.lastError,
        troubled: context.troubled || (error !== null && !(error instanceof GoneError)),
      };
      commit(enqueue as Enqueue, next, false);
      const log = context.access.log;
      const fields = { source: context.source, resource, reconnects: next.reconnects, ...(error ? { reason: error instanceof KubeError ? error.reason : "unknown", error: describeError(error) } : {}) };
      enqueue(() => {
        if (!error) log.debug(fields, "kubernetes watch closed by the server; listing again");
        else if (error instanceof GoneError) log.info(fields, "kubernetes watch expired (410 Gone); listing again");
        else log.warn(fields, "kubernetes watch lost; reconnecting");
      });
    }),
    scheduleRetry: enqueueActions(({ context, enqueue }) => {
      const retryInMs = reconnectDelay(context.attempt, context.timing.backoffInitialMs, context.timing.backoffCapMs, context.random);
      enqueue.assign(() => ({ retryInMs, attempt: context.attempt + 1 }));
      const log = context.access.log;
      enqueue(() => log.debug({ source: context.source, attempt: context.attempt + 1, retryInMs }, "kubernetes discovery reconnecting"));
    }),
    countAttempt: assign(({ context }) => ({ attempt: context.attempt + 1 })),
    resetBackoff: assign({ attempt: 0 }),
  },
}).createMachine({
  id: "kubernetesDiscovery",
  context: ({ input }) => ({
    source: input.source,
    access: input.access,
    plan: input.plan,
    timing: { ...defaultDiscoveryTiming, ...input.timing },
    random: input.random ?? Math.random,
    entries: {},
    resourceVersions: {},
    attempt: 0,
    retryInMs: 0,
    reconnects: 0,
    connected: false,
    lastSyncAt: null,
    lastError: null,
    troubled: false,
    synced: false,
    announced: null,
    announcedCount: 0,
    reported: null,
  }),
  initial: "listing",
  states: {
    listing: {
      invoke: {
        src: "listCollections",
        input: ({ context }) => ({ access: context.access, source: context.source, collections: context.plan.collections, timing: context.timing }),
        onDone: { target: "watching", actions: "synced" },
        onError: { target: "backoff", actions: "listFailed" },
      },
    },
    watching: {
      invoke: {
        src: "watchCollections",
        input: ({ context }) => ({
          access: context.access,
          source: context.source,
          collections: context.plan.collections,
          timing: context.timing,
          from: context.resourceVersions,
          random: context.random,
        }),
      },
      after: { stableAfter: { actions: "resetBackoff" } },
      on: {
        "kube.event": { actions: "applyEvent" },
        "kube.watchEnded": [
          { guard: "goneAfterHealthySync", target: "listing", actions: ["watchLost", "countAttempt"] },
          { target: "backoff", actions: "watchLost" },
        ],
      },
    },
    backoff: {
      entry: "scheduleRetry",
      after: { retry: "listing" },
    },
  },
});

export type KubernetesDiscoveryMachine = typeof kubernetesDiscovery;
