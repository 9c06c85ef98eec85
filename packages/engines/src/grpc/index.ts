export { createEngineGrpcClient, parseGrpcTarget, EngineRpcError, type EngineGrpcClient } from "./client.ts";
export { grpcProbe, closeGrpcClients } from "./probe.ts";
export { IncarnationTracker, incarnationMarker, parseIncarnationMarker, START_EPOCH_TOLERANCE_S } from "./incarnation.ts";
export { engineProtos, PROTO_DIR, VLLM_ENGINE_SERVICE, HEALTH_SERVICE, type EngineProtos } from "./protos.ts";
export { fromWire, toWire } from "./wire.ts";
export * from "./types.ts";
