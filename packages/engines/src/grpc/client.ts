import * as grpc from "@grpc/grpc-js";
import { engineProtos } from "./protos.ts";
import {
  servingStatusNames,
  type CallOptions,
  type EngineHealth,
  type EngineLoads,
  type EngineModelInfo,
  type EngineServerInfo,
  type LoadsQuery,
  type ServingStatus,
} from "./types.ts";
import { fromWire } from "./wire.ts";

/** A failed control-plane call; `code` is the gRPC status (4 = DEADLINE_EXCEEDED). */
export class EngineRpcError extends Error {
  constructor(
    readonly rpc: string,
    readonly target: string,
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
    this.name = "EngineRpcError";
  }
  get deadlineExceeded(): boolean {
    return this.code === grpc.status.DEADLINE_EXCEEDED;
  }
}

export interface EngineGrpcClient {
  readonly target: string;
  healthCheck(deadlineMs: number, opts?: CallOptions): Promise<EngineHealth>;
  getModelInfo(deadlineMs: number, opts?: CallOptions): Promise<EngineModelInfo>;
  getServerInfo(deadlineMs: number, opts?: CallOptions): Promise<EngineServerInfo>;
  getLoads(deadlineMs: number, query?: LoadsQuery, opts?: CallOptions): Promise<EngineLoads>;
  abort(requestIds: string[], deadlineMs: number, opts?: CallOptions): Promise<void>;
  /** grpc.health.v1 Check; a server that does not know `service` answers NOT_FOUND → "SERVICE_UNKNOWN". */
  standardHealth(service: string, deadlineMs: number, opts?: CallOptions): Promise<ServingStatus>;
  close(): void;
}

/** "grpc://host:port", "grpcs://host:port" or bare "host:port" → what grpc-js dials. */
export function parseGrpcTarget(target: string): { address: string; tls: boolean } {
  const m = /^(grpcs?):\/\/([^/]+)\/?$/.exec(target.trim());
  if (m) return { address: m[2]!, tls: m[1] === "grpcs" };
  if (/^[^/:]+:\d+$/.test(target.trim()) || /^\[[^\]]+\]:\d+$/.test(target.trim())) {
    return { address: target.trim(), tls: false };
  }
  throw new Error(`not a gRPC target: ${JSON.stringify(target)} (want grpc://host:port or host:port)`);
}

/**
 * Reconnect backoff short enough that an engine back from a restart is reachable by the next
 * probe (grpc-js otherwise backs off up to 120 s and fails calls fast meanwhile).
 */
const channelOptions: grpc.ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 2_000,
};

type UnaryMethod = (
  request: object,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, response: any) => void,
) => grpc.ClientUnaryCall;

/** One channel per client; the engine and health stubs share it. */
export function createEngineGrpcClient(target: string): EngineGrpcClient {
  const { address, tls } = parseGrpcTarget(target);
  const credentials = tls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
  const protos = engineProtos();
  const engine = new protos.VllmEngine(address, credentials, channelOptions);
  const channel = grpc.getClientChannel(engine);
  const health = new protos.Health(address, credentials, { channelOverride: channel });

  function unary<T>(stub: grpc.Client, rpc: string, request: object, deadlineMs: number, opts?: CallOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (opts?.signal?.aborted) {
        reject(new EngineRpcError(rpc, target, grpc.status.CANCELLED, `${rpc} to ${target}: aborted before sending`));
        return;
      }
      const method = (stub as unknown as Record<string, UnaryMethod>)[rpc]!.bind(stub);
      const onAbort = () => call.cancel();
      const call = method(request, { deadline: Date.now() + Math.max(1, deadlineMs) }, (err, response) => {
        opts?.signal?.removeEventListener("abort", onAbort);
        if (err) reject(toRpcError(rpc, err, deadlineMs));
        else resolve(response as T);
      });
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  function toRpcError(rpc: string, err: grpc.ServiceError, deadlineMs: number): EngineRpcError {
    const why =
      err.code === grpc.status.DEADLINE_EXCEEDED
        ? `no answer within ${deadlineMs} ms (DEADLINE_EXCEEDED)`
        : `${grpc.status[err.code] ?? err.code}: ${err.details || err.message}`;
    return new EngineRpcError(rpc, target, err.code, `gRPC ${rpc} to ${target}: ${why}`);
  }

  return {
    target,
    healthCheck: async (deadlineMs, opts) =>
      fromWire<EngineHealth>(await unary(engine, "HealthCheck", {}, deadlineMs, opts)),
    getModelInfo: async (deadlineMs, opts) =>
      fromWire<EngineModelInfo>(await unary(engine, "GetModelInfo", {}, deadlineMs, opts)),
    getServerInfo: async (deadlineMs, opts) =>
      fromWire<EngineServerInfo>(await unary(engine, "GetServerInfo", {}, deadlineMs, opts)),
    getLoads: async (deadlineMs, query = {}, opts) => {
      const request: Record<string, unknown> = { include: query.include ?? [] };
      if (query.dpRank !== undefined) request.dp_rank = query.dpRank;
      return fromWire<EngineLoads>(await unary(engine, "GetLoads", request, deadlineMs, opts));
    },
    abort: async (requestIds, deadlineMs, opts) => {
      await unary(engine, "Abort", { request_ids: requestIds }, deadlineMs, opts);
    },
    standardHealth: async (service, deadlineMs, opts) => {
      try {
        const res = await unary<{ status: number | string }>(health, "Check", { service }, deadlineMs, opts);
        return typeof res.status === "string" ? (res.status as ServingStatus) : (servingStatusNames[res.status] ?? "UNKNOWN");
      } catch (err) {
        if (err instanceof EngineRpcError && err.code === grpc.status.NOT_FOUND) return "SERVICE_UNKNOWN";
        throw err;
      }
    },
    close: () => channel.close(),
  };
}
