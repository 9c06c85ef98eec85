import type { FakeResource } from "./store.ts";

export interface Route {
  resource: FakeResource;
  /** Undefined: all namespaces. */
  namespace?: string;
  name?: string;
}

const CORE = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?(pods|services)(?:\/([^/]+))?\/?$/;
const DISCOVERY = /^\/apis\/discovery\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?(endpointslices)(?:\/([^/]+))?\/?$/;

export function parseRoute(pathname: string): Route | null {
  const m = CORE.exec(pathname) ?? DISCOVERY.exec(pathname);
  if (!m) return null;
  return {
    resource: m[2] as FakeResource,
    namespace: m[1] ? decodeURIComponent(m[1]) : undefined,
    name: m[3] ? decodeURIComponent(m[3]) : undefined,
  };
}

/** The `Status` object the API server answers failures with. */
export function status(code: number, reason: string, message: string) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}
