import { loadKubeClient, type KubeClient } from "@switchboard/kube";
import { createActor, setup } from "xstate";
import { kubernetesSource, type DesiredWorker, type DiscoveryEvent, type DiscoveryLogger, type KubernetesDiscoveryOptions, type SourceStatus } from "../src";

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string;
}

export function recordingLogger(): DiscoveryLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine["level"]) => (fields: object, message: string) => void lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export { seededRandom } from "@switchboard/testkit";

export const fastTiming = {
  listTimeoutMs: 3_000,
  watchConnectTimeoutMs: 3_000,
  watchTimeoutSeconds: 30,
  watchIdleTimeoutMs: 40_000,
  backoffInitialMs: 40,
  backoffCapMs: 300,
  stableAfterMs: 100,
};

/**
 * Runs one Kubernetes discovery actor under a parent that records what it is told — exactly
 * what the fleet would receive.
 */
export function runDiscovery(opts: Partial<KubernetesDiscoveryOptions> & { kubeconfigPath: string }, client?: KubeClient) {
  const events: DiscoveryEvent[] = [];
  const log = recordingLogger();
  const src = kubernetesSource(
    { mode: "pod-ip", selector: {}, port: 8000, timing: fastTiming, ...opts },
    { log, client: client ?? loadKubeClient({ kubeconfigPath: opts.kubeconfigPath }) },
  );
  const parent = setup({ actors: { discovery: src.logic } }).createMachine({
    invoke: { id: src.id, src: "discovery", input: src.input },
    on: { "*": { actions: ({ event }) => void events.push(event as DiscoveryEvent) } },
  });
  const actor = createActor(parent).start();
  return {
    source: src.id,
    events,
    log,
    stop: () => actor.stop(),
    /** The discovery actor's snapshot as the live inspector would serialize it. */
    snapshotJson: () => JSON.stringify((actor.getSnapshot().children as Record<string, { getSnapshot(): unknown }>)[src.id]!.getSnapshot()),
    inputJson: () => JSON.stringify(src.input),
    /** The last desired set, as URLs sorted; null before the first. */
    urls(): string[] | null {
      const last = desiredOf(events);
      return last ? last.map((w) => w.url).sort() : null;
    },
    desired: () => desiredOf(events),
    status(): SourceStatus | null {
      for (let i = events.length - 1; i >= 0; i--) {
        const e = events[i]!;
        if (e.type === "source.status") return e.status;
      }
      return null;
    },
  };
}

function desiredOf(events: DiscoveryEvent[]): DesiredWorker[] | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "source.desired") return e.workers;
  }
  return null;
}
