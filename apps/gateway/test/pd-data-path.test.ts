/** Where a PD leg is sent: an HTTP worker's URL; a gRPC worker only through its declared HTTP front. */
import { describe, expect, test } from "bun:test";
import { WorkerView } from "@switchboard/fleet";
import type { WorkerSpec } from "@switchboard/workers";
import { inferenceUrl } from "../src/pd";

const worker = (url: string, labels: Record<string, string> = {}) =>
  new WorkerView({ id: "w", url, connectionMode: url.startsWith("grpc:") ? "grpc" : "http", workerType: "prefill", labels, priority: 0, source: "t", sourceKey: url } satisfies WorkerSpec);

describe("inferenceUrl", () => {
  test("HTTP workers: their own URL", () => {
    expect(inferenceUrl(worker("http://p:8000"))).toBe("http://p:8000");
  });
  test("gRPC workers: the http-url label, else http-port on the same host, else none", () => {
    expect(inferenceUrl(worker("grpc://p:50051", { "http-url": "http://front:8000/" }))).toBe("http://front:8000");
    expect(inferenceUrl(worker("grpc://p:50051", { "http-port": "8000" }))).toBe("http://p:8000");
    expect(inferenceUrl(worker("grpc://[::1]:50051", { "http-port": "8000" }))).toBe("http://[::1]:8000");
    expect(inferenceUrl(worker("grpc://p:50051"))).toBeNull();
    expect(inferenceUrl(worker("grpc://p:50051", { "http-port": "nope", "http-url": "ftp://x" }))).toBeNull();
  });
});
