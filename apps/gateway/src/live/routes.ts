import { Elysia } from "elysia";
import { adminDiscovery } from "@switchboard/discovery";
import type { SourceConfig } from "@switchboard/fleet";
import { workerMachine } from "@switchboard/workers";
import type { AnyStateMachine } from "xstate";
import type { LiveHub } from "./live-hub";
import { machineGraph, type MachineGraph } from "./machine-graph";
import { visualizerPage } from "./ui";

// The page may be served from elsewhere (`bun run visualizer`); it sends no cookies, so any origin may read.
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, OPTIONS",
  "access-control-allow-headers": "authorization, last-event-id",
  "access-control-max-age": "600",
};

function isMachine(logic: unknown): logic is AnyStateMachine {
  return typeof logic === "object" && logic !== null && "root" in logic && "config" in logic;
}

/** The worker machine, and each discovery machine the fleet runs, as drawable JSON. */
export function machinesDocument(sources: SourceConfig[]) {
  const discovery: Record<string, MachineGraph> = { admin: machineGraph(adminDiscovery) };
  for (const s of sources) if (isMachine(s.logic)) discovery[s.id] = machineGraph(s.logic);
  return { worker: machineGraph(workerMachine), discovery };
}

function withCors(r: Response): Response {
  for (const [k, v] of Object.entries(CORS)) r.headers.set(k, v);
  return r;
}

/** `/machine`, `/live` (SSE) and the page at `/ui`; the data routes respect --admin-api-key. */
export function liveRoutes(hub: LiveHub, sources: SourceConfig[], guard: (r: Request) => Response | null) {
  const machines = JSON.stringify(machinesDocument(sources));
  const page = async (base: string) => {
    const assets = await visualizerPage();
    return assets ? new Response(assets.html({ base, gateway: "" }), { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } }) : new Response("The visualizer is not installed next to this gateway.\n", { status: 404 });
  };
  const asset = async (kind: "js" | "css") => {
    const assets = await visualizerPage();
    if (!assets) return new Response("not found\n", { status: 404 });
    return new Response(assets[kind], { headers: { "content-type": kind === "js" ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8", "cache-control": "no-cache" } });
  };

  return new Elysia({ name: "live" })
    .options("/machine", () => new Response(null, { status: 204, headers: CORS }))
    .options("/live", () => new Response(null, { status: 204, headers: CORS }))
    .get("/machine", ({ request }) => {
      const denied = guard(request);
      if (denied) return withCors(denied);
      return new Response(machines, { headers: { "content-type": "application/json", ...CORS } });
    })
    .get("/live", ({ request, server }) => {
      const denied = guard(request);
      if (denied) return withCors(denied);
      // Whatever the server's idle timeout, this stream is kept by its keepalives, not cut for quiet.
      server?.timeout(request, 0);
      return new Response(hub.stream(request.signal), {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache, no-transform",
          connection: "keep-alive",
          "x-accel-buffering": "no",
          ...CORS,
        },
      });
    })
    .get("/ui", () => page("/ui"))
    .get("/ui/", () => page("/ui"))
    .get("/ui/app.js", () => asset("js"))
    .get("/ui/app.css", () => asset("css"));
}
