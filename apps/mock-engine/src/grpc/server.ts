import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { engineProtos, VLLM_ENGINE_SERVICE } from "@switchboard/engines/src/grpc/protos.ts";
import type { SchedulerLoad } from "@switchboard/engines/src/grpc/types.ts";
import { toWire } from "@switchboard/engines/src/grpc/wire.ts";

/** Faults for the control-plane tests; each can be switched on and off while running. */
export interface MockGrpcFaults {
  /** HealthCheck answers healthy=false; grpc.health.v1 answers NOT_SERVING. */
  unhealthy: boolean;
  /** HealthCheck (and grpc.health.v1 Check) never answer. */
  hangHealth: boolean;
  /** GetServerInfo never answers while HealthCheck does (engine mid-start). */
  hangServerInfo: boolean;
  /** GetServerInfo answers an empty message (a partial read). */
  partialServerInfo: boolean;
  /** kv_engine_id is "" (no KV transfer configured). */
  noEngineId: boolean;
}
export type MockGrpcFault = keyof MockGrpcFaults;

export interface MockGrpcEngineOptions {
  engineId?: string;
  kvConnector?: string;
  kvRole?: string;
  dataParallelSize?: number;
  model?: string;
  modelPath?: string;
  maxContextLength?: number;
  /** Pretend the engine has already been up this long. */
  uptimeSeconds?: number;
  loads?: Partial<SchedulerLoad>[];
  faults?: Partial<MockGrpcFaults>;
  /** Bind this loopback port (e.g. to come back on the address of a stopped engine); default ephemeral. */
  port?: number;
}

export interface MockGrpcEngineState {
  engineId: string;
  /** When the current engine process started (ms since epoch); uptime = now − this. */
  startedAtMs: number;
  /** While now < this, every RPC fails UNAVAILABLE (the process is down). */
  downUntilMs: number;
  kvConnector: string;
  kvRole: string;
  dataParallelSize: number;
  model: string;
  modelPath: string;
  maxContextLength: number;
  loads: Partial<SchedulerLoad>[];
  activeRequests: number;
  restarts: number;
  abortedRequestIds: string[];
  faults: MockGrpcFaults;
}

export interface MockGrpcCalls {
  health: number;
  standardHealth: number;
  serverInfo: number;
  modelInfo: number;
  loads: number;
  abort: number;
}

export interface RestartOptions {
  /** A new process gets a new KV engine id (default true). */
  newEngineId?: boolean;
  /** > 0: RPCs fail UNAVAILABLE this long (a probe sees the failure); 0: instant restart. */
  downtimeMs?: number;
}

export interface MockGrpcEngine {
  /** "127.0.0.1:PORT" */
  target: string;
  /** "grpc://127.0.0.1:PORT" */
  url: string;
  port: number;
  state: MockGrpcEngineState;
  calls: MockGrpcCalls;
  setFault(fault: MockGrpcFault, on?: boolean): void;
  clearFaults(): void;
  /** An in-place restart: same address, new process (new start time, by default a new engine id). */
  restart(opts?: RestartOptions): void;
  stop(): Promise<void>;
}

const noFaults = (): MockGrpcFaults => ({
  unhealthy: false,
  hangHealth: false,
  hangServerInfo: false,
  partialServerInfo: false,
  noEngineId: false,
});

const newEngineId = () => `mock-engine-${randomUUID()}`;

type Callback = grpc.sendUnaryData<any>;
type Call = grpc.ServerUnaryCall<any, any>;

/** A vLLM gRPC engine's control-plane subset plus grpc.health.v1, on 127.0.0.1:0. */
export async function startMockGrpcEngine(opts: MockGrpcEngineOptions = {}): Promise<MockGrpcEngine> {
  const state: MockGrpcEngineState = {
    engineId: opts.engineId ?? newEngineId(),
    startedAtMs: Date.now() - (opts.uptimeSeconds ?? 0) * 1000,
    downUntilMs: 0,
    kvConnector: opts.kvConnector ?? "MooncakeConnector",
    kvRole: opts.kvRole ?? "kv_both",
    dataParallelSize: opts.dataParallelSize ?? 1,
    model: opts.model ?? "mock-model",
    modelPath: opts.modelPath ?? "/models/mock-model",
    maxContextLength: opts.maxContextLength ?? 4096,
    loads: opts.loads ?? [],
    activeRequests: 0,
    restarts: 0,
    abortedRequestIds: [],
    faults: { ...noFaults(), ...opts.faults },
  };
  const calls: MockGrpcCalls = { health: 0, standardHealth: 0, serverInfo: 0, modelInfo: 0, loads: 0, abort: 0 };

  /** Answers UNAVAILABLE while the engine is "down"; true when it did. */
  const down = (cb: Callback) => {
    if (Date.now() >= state.downUntilMs) return false;
    cb({ code: grpc.status.UNAVAILABLE, details: "mock engine restarting" });
    return true;
  };
  // A hung call is simply never answered: the client's deadline (or forceShutdown) ends it.
  const hang = () => {};

  const loadsFor = (rank: number): SchedulerLoad => ({
    dpRank: rank,
    numRunningReqs: 0,
    numWaitingReqs: 0,
    numTotalReqs: 0,
    numUsedTokens: 0,
    maxTotalNumTokens: 0,
    tokenUsage: 0,
    genThroughput: 0,
    cacheHitRate: 0,
    utilization: 0,
    maxRunningRequests: 0,
    ...state.loads.find((l) => (l.dpRank ?? 0) === rank),
  });

  const engine: grpc.UntypedServiceImplementation = {
    HealthCheck(_call: Call, cb: Callback) {
      calls.health++;
      if (down(cb)) return;
      if (state.faults.hangHealth) return hang();
      cb(null, state.faults.unhealthy ? { healthy: false, message: "fault: unhealthy" } : { healthy: true, message: "" });
    },
    GetServerInfo(_call: Call, cb: Callback) {
      calls.serverInfo++;
      if (down(cb)) return;
      if (state.faults.hangServerInfo) return hang();
      if (state.faults.partialServerInfo) return cb(null, {});
      cb(null, {
        active_requests: state.activeRequests,
        is_paused: false,
        last_receive_timestamp: Date.now() / 1000,
        uptime_seconds: Math.max(0, (Date.now() - state.startedAtMs) / 1000),
        server_type: "vllm-grpc",
        kv_connector: state.kvConnector,
        kv_role: state.kvRole,
        kv_engine_id: state.faults.noEngineId ? "" : state.engineId,
        data_parallel_size: state.dataParallelSize,
        shm_namespace_id: "",
      });
    },
    GetModelInfo(_call: Call, cb: Callback) {
      calls.modelInfo++;
      if (down(cb)) return;
      cb(null, {
        model_path: state.modelPath,
        is_generation: true,
        max_context_length: state.maxContextLength,
        served_model_name: state.model,
        tokenizer_path: state.modelPath,
        model_type: "llama",
        architectures: ["LlamaForCausalLM"],
        eos_token_ids: [2],
      });
    },
    GetLoads(call: Call, cb: Callback) {
      calls.loads++;
      if (down(cb)) return;
      const ranks = Array.from({ length: Math.max(1, state.dataParallelSize) }, (_, r) => r);
      // dp_rank is proto3 optional: proto-loader marks its presence in the synthetic oneof.
      const wanted = call.request._dp_rank === "dp_rank" ? ranks.filter((r) => r === call.request.dp_rank) : ranks;
      cb(null, {
        timestamp: new Date().toISOString(),
        version: "mock",
        dp_rank_count: ranks.length,
        loads: wanted.map((r) => toWire(loadsFor(r))),
      });
    },
    Abort(call: Call, cb: Callback) {
      calls.abort++;
      if (down(cb)) return;
      state.abortedRequestIds.push(...(call.request.request_ids as string[]));
      cb(null, {});
    },
  };

  const health: grpc.UntypedServiceImplementation = {
    Check(call: Call, cb: Callback) {
      calls.standardHealth++;
      if (down(cb)) return;
      if (state.faults.hangHealth) return hang();
      const service = call.request.service as string;
      if (service !== "" && service !== VLLM_ENGINE_SERVICE) {
        return cb({ code: grpc.status.NOT_FOUND, details: `unknown service ${service}` });
      }
      cb(null, { status: state.faults.unhealthy ? 2 /* NOT_SERVING */ : 1 /* SERVING */ });
    },
  };

  const protos = engineProtos();
  const server = new grpc.Server();
  server.addService(protos.VllmEngine.service, engine);
  server.addService(protos.Health.service, health);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${opts.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );

  return {
    target: `127.0.0.1:${port}`,
    url: `grpc://127.0.0.1:${port}`,
    port,
    state,
    calls,
    setFault(fault, on = true) {
      state.faults[fault] = on;
    },
    clearFaults() {
      state.faults = noFaults();
    },
    restart({ newEngineId: renew = true, downtimeMs = 0 } = {}) {
      const now = Date.now();
      if (renew) state.engineId = newEngineId();
      state.downUntilMs = now + downtimeMs;
      state.startedAtMs = now + downtimeMs;
      state.activeRequests = 0;
      state.restarts++;
    },
    async stop() {
      server.forceShutdown();
    },
  };
}
