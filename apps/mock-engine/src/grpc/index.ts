export {
  startMockGrpcEngine,
  type MockGrpcEngine,
  type MockGrpcEngineOptions,
  type MockGrpcEngineState,
  type MockGrpcFault,
  type MockGrpcFaults,
  type MockGrpcCalls,
  type RestartOptions,
} from "./server.ts";
