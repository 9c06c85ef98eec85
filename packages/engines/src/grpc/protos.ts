import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/** Our own .proto files, found next to this module so any cwd works. */
export const PROTO_DIR = join(import.meta.dir, "../../proto");
export const VLLM_ENGINE_SERVICE = "vllm.grpc.engine.VllmEngine";
export const HEALTH_SERVICE = "grpc.health.v1.Health";

const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  defaults: true,
  oneofs: true,
};

export interface EngineProtos {
  /** Client constructor for vllm.grpc.engine.VllmEngine; `.service` is its definition for servers. */
  VllmEngine: grpc.ServiceClientConstructor;
  /** Client constructor for grpc.health.v1.Health. */
  Health: grpc.ServiceClientConstructor;
}

let loaded: EngineProtos | undefined;

/** Parses the protos once per process; client and mock server share the same definitions. */
export function engineProtos(): EngineProtos {
  if (loaded) return loaded;
  const definition = protoLoader.loadSync(
    [join(PROTO_DIR, "vllm_engine.proto"), join(PROTO_DIR, "health.proto")],
    loaderOptions,
  );
  const root = grpc.loadPackageDefinition(definition) as any;
  loaded = {
    VllmEngine: root.vllm.grpc.engine.VllmEngine,
    Health: root.grpc.health.v1.Health,
  };
  return loaded;
}
