/**
 * The Mooncake bootstrap server a vLLM prefill runs (default port 8998): `GET /query` tells a
 * decode which engine id and worker address each data-parallel rank has.
 */
import { hang, type EngineContext } from "./context.ts";
import { engineIdForRank, isUp } from "./state.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const notFound = () => new Response('{"detail":"Not Found"}', { status: 404, headers: JSON_HEADERS });

function query(ctx: EngineContext): Record<string, unknown> {
  const st = ctx.state;
  const f = st.faults;
  // Ranks register with the bootstrap as their workers come up: none yet while the engine starts.
  if (f.bootstrapNoEngineId || !isUp(st)) return {};
  const ranks: Record<string, unknown> = {};
  for (let r = 0; r < st.dataParallelSize; r++) {
    const worker_addr = { "0": { "0": `${ctx.opts.host}:${ctx.nixlPort + r}` } };
    ranks[String(r)] = f.partialBootstrap && r === 0 ? { worker_addr } : { engine_id: engineIdForRank(st, r), worker_addr };
  }
  return ranks;
}

export function serveBootstrap(ctx: EngineContext, port: number) {
  return Bun.serve({
    port,
    hostname: ctx.opts.host,
    idleTimeout: 255,
    routes: {
      "/query": {
        GET: (req) => {
          ctx.state.bootstrapQueries++;
          return ctx.state.faults.hangBootstrap ? hang(ctx, req) : Response.json(query(ctx));
        },
      },
    },
    fetch: notFound,
  });
}
