/** `/_mock/*`: drive an engine from another process (faults, restart, models, what it received). */
import type { EngineContext } from "./context.ts";
import type { LoraAdapter } from "./options.ts";
import { noFaults, type Faults } from "./state.ts";

export interface RestartOptions {
  /** Mint a new KV engine id (default true: a new process gets a new one). */
  newEngineId?: boolean;
  /** How long the engine is away. */
  downtimeMs?: number;
  /** During the downtime, close the listening sockets (connection refused) instead of answering 503. */
  refuse?: boolean;
}

/** What the control routes need from the engine. */
export interface EngineControl {
  setFault(f: Partial<Faults>): void;
  clearFaults(): void;
  setModels(models: string[], loras?: LoraAdapter[]): void;
  /** Starts a restart whose listener shutdown waits until this answer has been written. */
  restartSoon(o: RestartOptions): void;
  clearReceived(): void;
}

const bad = (message: string) => Response.json({ error: message }, { status: 400 });

async function readJson(req: Request): Promise<unknown> {
  const text = await req.text();
  return text.trim() ? JSON.parse(text) : {};
}

/** Faults from a JSON body: known keys, right types only. */
export function parseFaults(v: unknown): Partial<Faults> | string {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "body must be a JSON object";
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) {
    if (!(k in noFaults)) return `unknown fault ${k}`;
    if (typeof val !== typeof noFaults[k as keyof Faults]) return `fault ${k} must be a ${typeof noFaults[k as keyof Faults]}`;
    out[k] = val;
  }
  return out as Partial<Faults>;
}

function parseModels(v: any): { models: string[]; loras?: LoraAdapter[] } | string {
  if (!Array.isArray(v?.models) || !v.models.every((m: unknown) => typeof m === "string")) return "models must be a list of strings";
  if (v.loras !== undefined && (!Array.isArray(v.loras) || !v.loras.every((l: any) => typeof l?.id === "string" && typeof l?.parent === "string"))) {
    return "loras must be a list of {id, parent}";
  }
  return { models: v.models, loras: v.loras };
}

export function controlRoutes(ctx: EngineContext, engine: EngineControl) {
  const guarded = (fn: (body: any) => Response) => async (req: Request) => {
    try {
      return fn(await readJson(req));
    } catch {
      return bad("JSON decode error");
    }
  };
  return {
    "/_mock/state": { GET: () => Response.json({ ...ctx.state, receivedTotal: ctx.recorder.total }) },
    "/_mock/faults": {
      GET: () => Response.json(ctx.state.faults),
      POST: guarded((body) => {
        const f = parseFaults(body);
        if (typeof f === "string") return bad(f);
        engine.setFault(f);
        return Response.json(ctx.state.faults);
      }),
      DELETE: () => {
        engine.clearFaults();
        return Response.json(ctx.state.faults);
      },
    },
    "/_mock/restart": {
      POST: guarded((body) => {
        engine.restartSoon({
          newEngineId: body.newEngineId !== false,
          downtimeMs: typeof body.downtimeMs === "number" ? body.downtimeMs : 0,
          refuse: body.refuse === true,
        });
        return Response.json({ engineId: ctx.state.engineId, startedAt: ctx.state.startedAt });
      }),
    },
    "/_mock/models": {
      POST: guarded((body) => {
        const m = parseModels(body);
        if (typeof m === "string") return bad(m);
        engine.setModels(m.models, m.loras);
        return Response.json({ models: ctx.state.models, loras: ctx.state.loras });
      }),
    },
    "/_mock/received": {
      GET: () => Response.json({ total: ctx.recorder.total, requests: ctx.recorder.list }),
      DELETE: () => {
        engine.clearReceived();
        return Response.json({ total: ctx.recorder.total, requests: [] });
      },
    },
  };
}
