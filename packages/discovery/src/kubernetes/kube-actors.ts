import { list, watch, type KubeClient, type KubeObject, type ListResult, type ResourceName, type WatchEvent } from "@switchboard/kube";
import { fromCallback, fromPromise, type EventObject } from "xstate";
import type { DiscoveryLogger, DiscoveryTiming } from "./options";
import type { Collection } from "./plan";

/**
 * The API client and logger the discovery actor uses. Snapshots (and the actor's input) reach
 * the live inspector, so this serializes as a short description: no token or key ever leaves.
 */
export class KubeAccess {
  constructor(
    readonly client: KubeClient,
    readonly log: DiscoveryLogger,
  ) {}
  toJSON() {
    return { server: this.client.server, config: this.client.source };
  }
}

export interface ListAllInput {
  access: KubeAccess;
  source: string;
  collections: readonly Collection[];
  timing: DiscoveryTiming;
}

export type Listed = Partial<Record<ResourceName, ListResult<unknown>>>;

/** Lists every collection of the plan, each bounded by the list timeout; any failure fails the sync. */
export const listCollections = fromPromise<Listed, ListAllInput>(async ({ input, signal }) => {
  const { access, source, timing } = input;
  const results = await Promise.all(
    input.collections.map((c) =>
      list<KubeObject>(access.client, c.path, {
        labelSelector: c.labelSelector,
        timeoutMs: timing.listTimeoutMs,
        signal,
        onSkipped: (s) => access.log.warn({ source, resource: c.resource, reason: s.reason }, "kubernetes list item skipped"),
      }).then((r) => [c.resource, r] as const),
    ),
  );
  return Object.fromEntries(results) as Listed;
});

export interface WatchAllInput extends ListAllInput {
  /** Where each collection's watch starts: the resourceVersion of the list just done. */
  from: Partial<Record<ResourceName, string>>;
  random: () => number;
}

export type WatchFeedEvent =
  | { type: "kube.event"; resource: ResourceName; event: WatchEvent<unknown> }
  /** A watch ended: `error` null when the server closed it cleanly (its timeout). */
  | { type: "kube.watchEnded"; resource: ResourceName; error: unknown };

/**
 * Watches every collection from its list's resourceVersion and feeds the events to the parent.
 * The first watch to end is reported once; the parent then leaves `watching`, which stops this
 * actor and aborts the other watches, and lists everything again.
 */
export const watchCollections = fromCallback<EventObject, WatchAllInput>(({ input, sendBack }) => {
  const { access, source, timing } = input;
  const stop = new AbortController();
  const send = (e: WatchFeedEvent) => {
    if (!stop.signal.aborted) sendBack(e);
  };
  for (const c of input.collections) {
    // ±10 %: routers started together do not all relist at the same second.
    const timeoutSeconds = Math.max(1, Math.round(timing.watchTimeoutSeconds * (0.9 + 0.2 * input.random())));
    watch<KubeObject>(access.client, c.path, {
      resourceVersion: input.from[c.resource],
      labelSelector: c.labelSelector,
      timeoutSeconds,
      connectTimeoutMs: timing.watchConnectTimeoutMs,
      idleTimeoutMs: Math.max(timing.watchIdleTimeoutMs, timeoutSeconds * 1000 + 5_000),
      signal: stop.signal,
      onEvent: (event) => send({ type: "kube.event", resource: c.resource, event }),
      onSkipped: (s) => access.log.warn({ source, resource: c.resource, reason: s.reason, line: s.line.slice(0, 200) }, "kubernetes watch line skipped"),
    }).then(
      () => {
        send({ type: "kube.watchEnded", resource: c.resource, error: null });
        stop.abort();
      },
      (error: unknown) => {
        send({ type: "kube.watchEnded", resource: c.resource, error });
        stop.abort();
      },
    );
  }
  return () => stop.abort();
});
