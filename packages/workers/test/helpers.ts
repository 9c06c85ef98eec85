import { createActor, fromPromise } from "xstate";
import { boundedProbe, workerMachine, type HealthConfig, type ProbeFn, type ProbeRequest, type ProbeResult, type WorkerSpec } from "../src";

export const fastConfig: HealthConfig = {
  intervalMs: 40,
  timeoutMs: 200,
  failureThreshold: 3,
  successThreshold: 2,
  endpoint: "/health",
  fastIntervalMs: 10,
  modelRefreshEvery: 5,
  drainTimeoutMs: 500,
};

export function spec(over: Partial<WorkerSpec> = {}): WorkerSpec {
  return { id: "w1", url: "http://127.0.0.1:1", connectionMode: "http", workerType: "regular", labels: {}, priority: 0, source: "test", sourceKey: "k", ...over };
}

/** A scripted engine: tests flip its answers and read what it was asked. */
export class ScriptedEngine {
  healthy = true;
  hang = false;
  models: ProbeResult["models"] = [{ id: "m" }];
  identity: ProbeResult["identity"] = { engineId: "e1", incarnation: "i1" };
  incarnation: string | null = "i1";
  requests: Omit<ProbeRequest, "signal">[] = [];
  probe: ProbeFn = async (req) => {
    const { signal, ...rest } = req;
    this.requests.push(rest);
    if (this.hang) await new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    if (!this.healthy) return { healthy: false, detail: "503", latencyMs: 1 };
    return {
      healthy: true,
      detail: "ok",
      latencyMs: 1,
      models: req.wantModels ? this.models : undefined,
      identity: req.wantIdentity ? this.identity : undefined,
      incarnation: this.incarnation,
    };
  };
}

export function startWorker(engine: ScriptedEngine, opts: { spec?: Partial<WorkerSpec>; config?: Partial<HealthConfig>; idle?: () => Promise<void> } = {}) {
  const machine = workerMachine.provide({
    actors: {
      probe: boundedProbe(engine.probe),
      waitForIdle: fromPromise(async () => (opts.idle ? opts.idle() : undefined)),
    },
  });
  const actor = createActor(machine, { input: { spec: spec(opts.spec), config: { ...fastConfig, ...opts.config } } });
  actor.start();
  return actor;
}

export async function waitFor(cond: () => boolean, timeoutMs = 3000, what = "condition"): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}
