import type { WorkerView } from "@switchboard/fleet";

/**
 * Where a worker takes inference requests. A grpc:// worker is probed over gRPC, but the router has
 * no gRPC inference path yet: such a worker serves PD legs only when it names its HTTP front with
 * a label, `http-url` (a full URL) or `http-port` (same host as the gRPC address).
 */
export const HTTP_URL_LABEL = "http-url";
export const HTTP_PORT_LABEL = "http-port";

export function inferenceUrl(v: WorkerView): string | null {
  if (v.spec.connectionMode !== "grpc") return v.url;
  const url = v.labels[HTTP_URL_LABEL];
  if (url && /^https?:\/\//.test(url)) return url.replace(/\/+$/, "");
  const port = Number(v.labels[HTTP_PORT_LABEL]);
  if (Number.isInteger(port) && port > 0 && port < 65536) return `http://${new URL(v.url.replace(/^grpc:/, "http:")).host.replace(/:\d+$/, "")}:${port}`;
  return null;
}
