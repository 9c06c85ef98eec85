import { describe, expect, test } from "bun:test";
import { makeEndpointSlice, makeService } from "@switchboard/testkit";
import { MalformedObjectError, serviceWorker, sliceSummary, type WorkerMapping } from "../src";

const m: WorkerMapping = { source: "k8s-services:serving", port: 8000 };
const svc = (name: string, extra: Parameters<typeof makeService>[0] = { name }) => makeService({ namespace: "serving", ...extra, name });
const slice = (name: string, service: string, ready: boolean[]) =>
  makeEndpointSlice({ name, serviceName: service, namespace: "serving", endpoints: ready.map((r, i) => ({ ip: `10.1.0.${i + 1}`, ready: r })) });

describe("Service → worker (service-name mode)", () => {
  test("a Service with a ready endpoint is a worker at http://NAME.NAMESPACE.svc:port keyed by uid", () => {
    const v = serviceWorker(svc("llm", { name: "llm", uid: "s-1", labels: { app: "llm" } }), [slice("llm-a", "llm", [false, true])], m);
    expect(v).toEqual({
      worker: {
        url: "http://llm.serving.svc:8000",
        connectionMode: "http",
        workerType: "regular",
        labels: { app: "llm" },
        priority: 0,
        source: "k8s-services:serving",
        sourceKey: "s-1",
        sleeping: false,
      },
    });
  });

  test("no slices, only unready endpoints, or another Service's slices: no worker", () => {
    expect(serviceWorker(svc("llm"), [], m)).toEqual({ none: "no ready endpoint" });
    expect(serviceWorker(svc("llm"), [slice("llm-a", "llm", [false, false])], m)).toEqual({ none: "no ready endpoint" });
    expect(serviceWorker(svc("llm"), [slice("other-a", "other", [true])], m)).toEqual({ none: "no ready endpoint" });
    expect(serviceWorker(svc("ext", { name: "ext", type: "ExternalName" }), [], m)).toEqual({ none: "no ready endpoint" });
    expect(serviceWorker(svc("headless", { name: "headless", clusterIP: "None" }), [], m)).toEqual({ none: "no ready endpoint" });
  });

  test("a slice in another namespace does not make a Service serve", () => {
    const elsewhere = makeEndpointSlice({ name: "llm-a", serviceName: "llm", namespace: "other", endpoints: [{ ip: "10.1.0.1" }] });
    expect(serviceWorker(svc("llm"), [elsewhere], m)).toEqual({ none: "no ready endpoint" });
  });

  test("an endpoint without a ready condition counts as ready (the API's nil = true)", () => {
    const s = slice("llm-a", "llm", [true]);
    delete s.endpoints[0].conditions.ready;
    expect(sliceSummary(s)).toEqual({ service: "serving/llm", ready: true });
  });

  test("a slice without the service-name label names nothing", () => {
    const s = slice("llm-a", "llm", [true]);
    s.metadata.labels = {};
    expect(sliceSummary(s)).toBeNull();
  });

  test("misshapen slices and Services throw MalformedObjectError", () => {
    const s = slice("llm-a", "llm", [true]);
    expect(() => sliceSummary({ ...s, endpoints: "x" })).toThrow(MalformedObjectError);
    expect(() => sliceSummary({ ...s, endpoints: [{ addresses: "10.0.0.1" }] })).toThrow(MalformedObjectError);
    expect(() => serviceWorker({ metadata: { name: "x" } }, [], m)).toThrow(MalformedObjectError);
  });
});
