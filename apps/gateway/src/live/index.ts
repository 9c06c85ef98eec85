import type { Fleet, SourceConfig } from "@switchboard/fleet";
import type { InspectionEvent } from "xstate";
import { InspectorRelay } from "./inspector";
import { LiveHub, type LiveHubOptions } from "./live-hub";
import { liveRoutes } from "./routes";

export { InspectorRelay } from "./inspector";
export { LiveHub, type LiveHubOptions } from "./live-hub";
export * from "./machine-graph";
export * from "./messages";
export { liveRoutes, machinesDocument } from "./routes";

type Guard = (r: Request) => Response | null;

/** The Stately inspector endpoint, when `--inspector-port` asks for one. Made before the fleet: it is the fleet's `inspect`. */
export function inspectorFor(port: number | undefined, host: string, guard: Guard): InspectorRelay | undefined {
  return port === undefined ? undefined : new InspectorRelay({ host, port, guard });
}

/** Calls each given inspection callback; a throwing one does not silence the others or the actors. */
export function joinInspect(...fns: Array<((e: InspectionEvent) => void) | undefined>): ((e: InspectionEvent) => void) | undefined {
  const list = fns.filter((f): f is (e: InspectionEvent) => void => !!f);
  if (list.length <= 1) return list[0];
  return (e) => {
    for (const f of list) {
      try {
        f(e);
      } catch {
        // inspection is for looking: it never breaks the system
      }
    }
  };
}

/** Everything live the gateway serves: the SSE hub, its routes, and the optional inspector endpoint. */
export function createLive(fleet: Fleet, sources: SourceConfig[], guard: Guard, inspector?: InspectorRelay, options?: LiveHubOptions) {
  const hub = new LiveHub(fleet, options);
  return {
    hub,
    inspector,
    routes: liveRoutes(hub, sources, guard),
    /** After the fleet has started. */
    start() {
      inspector?.listen(fleet.actor);
    },
    /** Before the HTTP server drains: open streams would otherwise hold it for the whole grace period. */
    stop() {
      hub.close();
      inspector?.stop();
    },
  };
}

export type Live = ReturnType<typeof createLive>;
