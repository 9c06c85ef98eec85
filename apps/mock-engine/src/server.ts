/** The engine's HTTP front: one Bun.serve with static routes, so the hot path does no routing work. */
import type { EngineContext } from "./context.ts";
import { controlRoutes, type EngineControl } from "./control.ts";
import { flushCache, health, metrics, modelInfo, modelList, serverInfo, sleepMode } from "./info.ts";
import { handleEmbeddings } from "./openai/embeddings.ts";
import { handleGeneration } from "./openai/generate.ts";

const JSON_HEADERS = { "content-type": "application/json" };

export function serveEngine(ctx: EngineContext, engine: EngineControl, port: number) {
  return Bun.serve({
    port,
    hostname: ctx.opts.host,
    // Quiet SSE streams (slow prefill, long token delays) must not be cut by Bun's 10 s default.
    idleTimeout: 255,
    routes: {
      "/health": { GET: (req) => health(ctx, req) },
      "/health_generate": { GET: (req) => health(ctx, req) },
      "/v1/models": { GET: (req) => modelList(ctx, req) },
      "/v1/chat/completions": { POST: (req) => handleGeneration(ctx, req, "chat", "/v1/chat/completions") },
      "/v1/completions": { POST: (req) => handleGeneration(ctx, req, "completion", "/v1/completions") },
      "/v1/embeddings": { POST: (req) => handleEmbeddings(ctx, req) },
      "/metrics": { GET: () => metrics(ctx) },
      "/is_sleeping": { GET: () => sleepMode(ctx, "get") },
      "/sleep": { POST: () => sleepMode(ctx, "sleep") },
      "/wake_up": { POST: () => sleepMode(ctx, "wake") },
      "/reset_prefix_cache": { POST: () => flushCache(ctx) },
      "/flush_cache": { POST: () => flushCache(ctx) },
      "/get_model_info": { GET: () => modelInfo(ctx) },
      "/get_server_info": { GET: () => serverInfo(ctx) },
      "/version": { GET: () => Response.json({ version: "mock" }) },
      ...controlRoutes(ctx, engine),
    },
    fetch: () => new Response('{"detail":"Not Found"}', { status: 404, headers: JSON_HEADERS }),
    error: (e) => new Response(JSON.stringify({ error: { message: String(e), type: "InternalServerError", param: null, code: 500 } }), { status: 500, headers: JSON_HEADERS }),
  });
}
