import { Elysia } from "elysia";
import { promptTextOf, sessionKeyFrom, type RouteRequest } from "@switchboard/policies";
import { errors, OpenAIError, parseJson, validateRequest, type Endpoint } from "@switchboard/protocol";
import { forward, type ForwardDeps } from "../proxy/forward";

const ROUTES: [string, Endpoint][] = [
  ["/v1/chat/completions", "chat"],
  ["/v1/completions", "completions"],
  ["/v1/embeddings", "embeddings"],
];

/** Reads the body within the size limit; a larger body is refused before it is read whole. */
async function readBody(request: Request, limit: number): Promise<string | Response> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) return errors.tooLarge(limit).toResponse();
  const text = await request.text();
  if (text.length > limit) return errors.tooLarge(limit).toResponse();
  return text;
}

export type Dispatch = (args: { route: string; endpoint: Endpoint; body: Record<string, unknown>; raw: string; request: Request }) => Promise<Response> | null;

type Handler = (request: Request) => Promise<Response>;

/** Read, validate, then forward to a worker the policy picks (or let `dispatch` take it). */
function inferenceHandler(path: string, endpoint: Endpoint, deps: ForwardDeps, dispatch?: Dispatch): Handler {
  const { policy, config, metrics } = deps;
  const handle = async (request: Request): Promise<Response> => {
    const raw = await readBody(request, config.maxPayloadBytes);
    if (raw instanceof Response) {
      metrics.rejected.inc({ code: raw.status });
      return raw;
    }
    const parsed = parseJson(raw);
    if ("error" in parsed) {
      metrics.rejected.inc({ code: 400 });
      return parsed.error.toResponse();
    }
    const invalid = validateRequest(endpoint, parsed.body);
    if (invalid) {
      metrics.rejected.inc({ code: invalid.status });
      return invalid.toResponse();
    }
    const body = parsed.body;
    const taken = dispatch?.({ route: path, endpoint, body, raw, request });
    if (taken) return taken;
    const routeRequest: RouteRequest = { model: body.model as string };
    if (policy.needsText) routeRequest.text = promptTextOf(body);
    if (policy.needsSessionKey) routeRequest.sessionKey = sessionKeyFrom(request.headers, body, config.sessionHeader);
    return forward(
      {
        route: path,
        path,
        model: routeRequest.model,
        body: raw,
        stream: body.stream === true,
        route_request: routeRequest,
        // Read only when needed: creating a request's signal costs on every request.
        get clientSignal() {
          return request.signal;
        },
        headers: request.headers,
      },
      deps,
    );
  };
  // What the app's onError does for every other route.
  return async (request) => {
    try {
      return await handle(request);
    } catch (error) {
      if (error instanceof OpenAIError) return error.toResponse();
      deps.log.error({ err: error }, "unhandled error");
      return new OpenAIError(500, "Internal router error.", "upstream_error", "internal_error").toResponse();
    }
  };
}

export type InferenceServeRoutes = Record<string, { POST: Handler }>;
const serveRoutes = new WeakMap<object, InferenceServeRoutes>();

/**
 * The inference routes of an `inferenceRoutes` plugin as Bun.serve `routes`, to be served ahead of
 * Elysia: the same handlers without Elysia's per-request context (bench/proxy measured it). Only
 * POST is taken; anything else on these paths still reaches Elysia (and its 404). Global Elysia
 * hooks do not run for them.
 */
export function inferenceServeRoutes(plugin: object): InferenceServeRoutes {
  return serveRoutes.get(plugin) ?? {};
}

/**
 * The OpenAI inference routes: read, validate, then forward to a worker the policy picks.
 * `dispatch` lets a mode (PD disaggregation) take a request over; it returns null to decline.
 */
export function inferenceRoutes(deps: ForwardDeps, dispatch?: Dispatch) {
  const app = new Elysia({ name: "inference" });
  const native: InferenceServeRoutes = {};
  for (const [path, endpoint] of ROUTES) {
    const handler = inferenceHandler(path, endpoint, deps, dispatch);
    native[path] = { POST: handler };
    app.post(path, ({ request }) => handler(request), { parse: "none" });
  }
  serveRoutes.set(app, native);
  app.get("/v1/models", () => {
    const data = [...deps.fleet.index.readyModels()].map(([id, m]) => ({
      id,
      object: "model",
      created: 0,
      owned_by: "switchboard",
      root: m.parent ?? id,
      parent: m.parent,
      ...(m.maxModelLen ? { max_model_len: m.maxModelLen } : {}),
    }));
    return { object: "list", data };
  });
  return app;
}
