import { Elysia } from "elysia";
import { promptTextOf, sessionKeyFrom, type RouteRequest } from "@switchboard/policies";
import { errors, parseJson, validateRequest, type Endpoint } from "@switchboard/protocol";
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

/**
 * The OpenAI inference routes: read, validate, then forward to a worker the policy picks.
 * `dispatch` lets a mode (PD disaggregation) take a request over; it returns null to decline.
 */
export function inferenceRoutes(deps: ForwardDeps, dispatch?: Dispatch) {
  const { policy, config, metrics } = deps;
  const app = new Elysia({ name: "inference" });
  for (const [path, endpoint] of ROUTES) {
    app.post(
      path,
      async ({ request }) => {
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
          { route: path, path, model: routeRequest.model, body: raw, stream: body.stream === true, route_request: routeRequest, clientSignal: request.signal, headers: request.headers },
          deps,
        );
      },
      { parse: "none" },
    );
  }
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
