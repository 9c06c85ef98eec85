import type { Incarnation } from "./incarnation.ts";
import { droppedConnection } from "./openai/errors.ts";
import type { ResolvedOptions } from "./options.ts";
import type { Recorder } from "./recorder.ts";
import type { EngineState } from "./state.ts";

/** What every handler reads: fixed options, the shared state, and the current incarnation. */
export interface EngineContext {
  readonly opts: ResolvedOptions;
  readonly state: EngineState;
  /** Replaced on restart; a request captures it once at arrival. */
  inc: Incarnation;
  readonly recorder: Recorder;
  /** Fires on stop: hanging answers give up. */
  readonly stopped: AbortSignal;
  /** The (fake) NIXL side-channel port advertised in kv_transfer_params. */
  readonly nixlPort: number;
}

/** Resolves after `ms`, or at once when `signal` fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/** Never answers until the client leaves, the engine restarts, or it stops; then cuts the connection. */
export function hang(ctx: EngineContext, req: Request): Promise<Response> {
  const signals = [req.signal, ctx.inc.cut.signal, ctx.stopped];
  return new Promise((resolve) => {
    const done = () => {
      for (const s of signals) s.removeEventListener("abort", done);
      resolve(droppedConnection());
    };
    for (const s of signals) {
      if (s.aborted) return done();
      s.addEventListener("abort", done);
    }
  });
}
