/** `startMockEngine`: the engine's life — listen, restart in place, stop. */
import { serveBootstrap } from "./bootstrap.ts";
import { sleep, type EngineContext } from "./context.ts";
import type { EngineControl, RestartOptions } from "./control.ts";
import { newIncarnation } from "./incarnation.ts";
import { resolveOptions, type LoraAdapter, type MockEngineOptions } from "./options.ts";
import { Recorder, type RecordedRequest } from "./recorder.ts";
import { serveEngine } from "./server.ts";
import { createState, noFaults, type EngineState, type Faults } from "./state.ts";

export interface MockEngine {
  readonly url: string;
  readonly port: number;
  /** `http://host:port` of the Mooncake bootstrap server, when one runs. */
  readonly bootstrapUrl?: string;
  readonly bootstrapPort?: number;
  /** Shared, live engine state (same object for the engine's whole life). */
  readonly state: EngineState;
  /** Inference requests received, oldest first (the latest `recordLimit` at least). */
  readonly received: RecordedRequest[];
  /** Requests of the current incarnation whose client went away before the answer was complete. */
  readonly cancelled: number;
  setFault(f: Partial<Faults>): void;
  clearFaults(): void;
  setModels(models: string[], loras?: LoraAdapter[]): void;
  /** Restart in place: new start time and (by default) engine id, empty cache and counters, in-flight requests cut. */
  restart(opts?: RestartOptions): Promise<void>;
  /** Operator abort (the gRPC Abort RPC): streams end with finish_reason "abort". Returns how many were found. */
  abort(requestIds: string[]): number;
  clearReceived(): void;
  stop(): Promise<void>;
}

const NIXL_SIDE_CHANNEL_PORT = 5600; // vLLM's default; nothing listens there, it only travels in kv_transfer_params

type Server = ReturnType<typeof Bun.serve>;

class Engine implements MockEngine, EngineControl {
  private http!: Server;
  private boot: Server | null = null;
  private restarts: Promise<void> = Promise.resolve();
  /** Restarts whose downtime has not ended: the engine is down while any is. */
  private downtimes = 0;
  private readonly stopping = new AbortController();
  readonly ctx: EngineContext;
  port = 0;
  bootstrapPort?: number;

  constructor(options: MockEngineOptions) {
    const opts = resolveOptions(options);
    const state = createState(opts);
    const inc = newIncarnation(opts, 0);
    state.counters = inc.counters;
    state.kv = inc.kv;
    this.ctx = { opts, state, inc, recorder: new Recorder(opts.recordLimit), stopped: this.stopping.signal, nixlPort: NIXL_SIDE_CHANNEL_PORT };
  }

  listen(): void {
    this.http = serveEngine(this.ctx, this, this.port || this.ctx.opts.port);
    this.port = this.http.port ?? 0;
    const bp = this.bootstrapPort ?? this.ctx.opts.bootstrapPort;
    if (bp !== undefined) {
      this.boot = serveBootstrap(this.ctx, bp);
      this.bootstrapPort = this.boot.port;
      this.ctx.state.bootstrapPort = this.bootstrapPort ?? null;
    }
  }

  private async close(): Promise<void> {
    await Promise.all([this.http.stop(true), this.boot?.stop(true)]);
  }

  get url(): string {
    return `http://${this.ctx.opts.host.includes(":") ? `[${this.ctx.opts.host}]` : this.ctx.opts.host}:${this.port}`;
  }
  get bootstrapUrl(): string | undefined {
    return this.bootstrapPort === undefined ? undefined : `http://${this.ctx.opts.host}:${this.bootstrapPort}`;
  }
  get state(): EngineState {
    return this.ctx.state;
  }
  get received(): RecordedRequest[] {
    return this.ctx.recorder.list;
  }
  get cancelled(): number {
    return this.ctx.state.counters.cancelled;
  }

  setFault(f: Partial<Faults>): void {
    Object.assign(this.ctx.state.faults, f);
  }
  clearFaults(): void {
    Object.assign(this.ctx.state.faults, noFaults);
  }
  setModels(models: string[], loras?: LoraAdapter[]): void {
    this.ctx.state.models = [...models];
    if (loras) this.ctx.state.loras = [...loras];
  }
  clearReceived(): void {
    this.ctx.recorder.clear();
  }

  abort(requestIds: string[]): number {
    let found = 0;
    for (const id of requestIds) {
      const run = this.ctx.inc.inflight.get(id);
      if (run && !run.signal.aborted) {
        run.abort("abort");
        found++;
      }
    }
    return found;
  }

  restart(o: RestartOptions = {}): Promise<void> {
    return this.enqueueRestart(o, 0);
  }

  restartSoon(o: RestartOptions): void {
    // The HTTP caller's answer must get out before the listeners close.
    void this.enqueueRestart(o, 50);
  }

  /** Restarts run one after another; the identity changes at once (even for a queued one's caller). */
  private enqueueRestart(o: RestartOptions, closeAfterMs: number): Promise<void> {
    this.becomeNewProcess(o.newEngineId ?? true, (o.downtimeMs ?? 0) > 0);
    const run = this.restarts.then(() => this.downtime(o, closeAfterMs));
    this.restarts = run.catch(() => {});
    return run;
  }

  private becomeNewProcess(newEngineId: boolean, down: boolean): void {
    const { ctx } = this;
    const st = ctx.state;
    const old = ctx.inc;
    ctx.inc = newIncarnation(ctx.opts, old.number + 1);
    st.incarnation = ctx.inc.number;
    st.counters = ctx.inc.counters;
    st.kv = ctx.inc.kv;
    if (newEngineId) st.engineId = crypto.randomUUID();
    st.startedAt = Date.now() / 1000;
    st.sleeping = false;
    if (down) {
      this.downtimes++;
      st.restarting = true;
    }
    old.cut.abort(); // the old process's requests die with it
  }

  private async downtime(o: RestartOptions, closeAfterMs: number): Promise<void> {
    const ms = o.downtimeMs ?? 0;
    if (ms <= 0) return;
    const stopped = this.stopping.signal;
    try {
      if (o.refuse) {
        await sleep(closeAfterMs, stopped);
        if (stopped.aborted) return;
        await this.close();
        await sleep(Math.max(0, ms - closeAfterMs), stopped);
        if (stopped.aborted) return;
        this.listen(); // same ports: a restarted process binds where it was
      } else {
        await sleep(ms, stopped);
      }
    } finally {
      if (--this.downtimes === 0) this.ctx.state.restarting = false;
    }
  }

  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    this.ctx.inc.cut.abort();
    await this.restarts;
    await this.close();
  }
}

export async function startMockEngine(options: MockEngineOptions = {}): Promise<MockEngine> {
  const engine = new Engine(options);
  engine.listen();
  return engine;
}
