export * from "./http/prometheus";
export * from "./http/engine-metrics";
export * from "./http/models";
export * from "./http/bootstrap";
export * from "./http/probe";
export * from "./grpc/index.ts";
export * from "./pd/index.ts";
