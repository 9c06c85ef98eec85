import { Elysia } from "elysia";
import { describeWorker, type Fleet } from "@switchboard/fleet";
import { errors, OpenAIError, parseJson } from "@switchboard/protocol";
import type { KvConnector, WorkerType } from "@switchboard/workers";

const WORKER_TYPES = new Set(["regular", "prefill", "decode"]);
const KV_CONNECTORS = new Set(["MooncakeConnector", "NixlConnector", "sglang", ""]);

function bad(param: string, message: string) {
  return errors.invalidField(param, message).toResponse();
}

function isLabels(v: unknown): v is Record<string, string> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
}

async function jsonBody(request: Request): Promise<Record<string, unknown> | Response> {
  const parsed = parseJson(await request.text());
  if ("error" in parsed) return parsed.error.toResponse();
  if (typeof parsed.body !== "object" || parsed.body === null || Array.isArray(parsed.body)) return bad("body", "Request body must be a JSON object.");
  return parsed.body;
}

/** The admin API over the fleet: list, register, inspect, relabel, drain. */
export function workerRoutes(fleet: Fleet, guard: (r: Request) => Response | null) {
  return new Elysia({ name: "workers" })
    .get("/workers", () => {
      const workers = [...fleet.index.views.values()].map(describeWorker);
      return { workers, total: workers.length, sources: fleet.sources() };
    })
    .get("/workers/:id", ({ params }) => {
      const v = fleet.index.get(params.id);
      return v ? describeWorker(v) : errors.notFound(`No worker with id '${params.id}'.`).toResponse();
    })
    .post(
      "/workers",
      async ({ request, set }) => {
        const denied = guard(request);
        if (denied) return denied;
        const b = await jsonBody(request);
        if (b instanceof Response) return b;
        if (typeof b.url !== "string") return b.url === undefined ? errors.missingField("url").toResponse() : bad("url", "'url' must be a string.");
        let url: URL;
        try {
          url = new URL(b.url);
        } catch {
          return bad("url", `'${b.url}' is not a URL.`);
        }
        if (!["http:", "https:", "grpc:"].includes(url.protocol)) return bad("url", "'url' must be http://, https:// or grpc://.");
        if (b.model_id !== undefined && (typeof b.model_id !== "string" || b.model_id === "")) return bad("model_id", "'model_id' must be a non-empty string.");
        if (b.worker_type !== undefined && !WORKER_TYPES.has(b.worker_type as string)) return bad("worker_type", "'worker_type' must be regular, prefill or decode.");
        if (b.labels !== undefined && !isLabels(b.labels)) return bad("labels", "'labels' must be an object of strings.");
        if (b.priority !== undefined && !Number.isInteger(b.priority)) return bad("priority", "'priority' must be an integer.");
        if (b.bootstrap_port !== undefined && b.bootstrap_port !== null && !(Number.isInteger(b.bootstrap_port) && (b.bootstrap_port as number) > 0 && (b.bootstrap_port as number) < 65536))
          return bad("bootstrap_port", "'bootstrap_port' must be a port number.");
        if (b.kv_connector !== undefined && !KV_CONNECTORS.has(b.kv_connector as string)) return bad("kv_connector", "'kv_connector' must be MooncakeConnector, NixlConnector or sglang.");
        if (b.engine_id !== undefined && typeof b.engine_id !== "string") return bad("engine_id", "'engine_id' must be a string.");
        const normalized = b.url.replace(/\/+$/, "");
        const id = fleet.register({
          url: normalized,
          connectionMode: url.protocol === "grpc:" ? "grpc" : "http",
          workerType: (b.worker_type as WorkerType) ?? "regular",
          modelId: b.model_id as string | undefined,
          labels: (b.labels as Record<string, string>) ?? {},
          priority: (b.priority as number) ?? 0,
          bootstrapPort: (b.bootstrap_port as number | undefined) ?? undefined,
          kvConnector: b.kv_connector as KvConnector | undefined,
          engineId: b.engine_id as string | undefined,
          engineIdPinned: b.engine_id !== undefined && b.pin_engine_id === true,
        });
        set.status = 202;
        return { id, url: normalized, status: "pending" };
      },
      { parse: "none" },
    )
    .patch(
      "/workers/:id",
      async ({ request, params }) => {
        const denied = guard(request);
        if (denied) return denied;
        const b = await jsonBody(request);
        if (b instanceof Response) return b;
        const unknown = Object.keys(b).filter((k) => k !== "labels" && k !== "priority");
        if (unknown.length) return bad(unknown[0]!, `Only 'labels' and 'priority' can be changed; '${unknown[0]}' cannot.`);
        if (b.labels !== undefined && !isLabels(b.labels)) return bad("labels", "'labels' must be an object of strings.");
        if (b.priority !== undefined && !Number.isInteger(b.priority)) return bad("priority", "'priority' must be an integer.");
        const patch: { labels?: Record<string, string>; priority?: number } = {};
        if (b.labels !== undefined) patch.labels = b.labels as Record<string, string>;
        if (b.priority !== undefined) patch.priority = b.priority as number;
        if (!fleet.patch(params.id, patch)) return errors.notFound(`No worker with id '${params.id}'.`).toResponse();
        return describeWorker(fleet.index.get(params.id)!);
      },
      { parse: "none" },
    )
    .delete("/workers/:id", ({ request, params, set }) => {
      const denied = guard(request);
      if (denied) return denied;
      if (!fleet.drain(params.id, "removed through the admin API")) return errors.notFound(`No worker with id '${params.id}'.`).toResponse();
      set.status = 202;
      return { id: params.id, status: "draining" };
    });
}

export { OpenAIError };
