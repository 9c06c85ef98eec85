import { describe, expect, test } from "bun:test";
import { makePod } from "@switchboard/testkit";
import { MalformedObjectError, podWorker, type WorkerMapping } from "../src";

const m: WorkerMapping = { source: "k8s-pods:serving", port: 8000 };
const ok = (v: ReturnType<typeof podWorker>) => {
  if (!("worker" in v)) throw new Error(`expected a worker, got none: ${v.none}`);
  return v.worker;
};

describe("pod → worker (pod-ip mode)", () => {
  test("a Running, Ready pod with an IP is a worker at http://podIP:port keyed by uid, labels copied", () => {
    const w = ok(podWorker(makePod({ name: "a", ip: "10.0.0.7", uid: "u-1", labels: { app: "llm", zone: "b" } }), m));
    expect(w).toEqual({
      url: "http://10.0.0.7:8000",
      connectionMode: "http",
      workerType: "regular",
      labels: { app: "llm", zone: "b" },
      priority: 0,
      source: "k8s-pods:serving",
      sourceKey: "u-1",
      sleeping: false,
    });
  });

  test("an IPv6 pod IP is bracketed", () => {
    expect(ok(podWorker(makePod({ name: "a", ip: "fd00::7" }), m)).url).toBe("http://[fd00::7]:8000");
  });

  test("not Running, not Ready, or without an IP: no worker, with the reason", () => {
    expect(podWorker(makePod({ name: "a", ip: "10.0.0.7", phase: "Pending" }), m)).toEqual({ none: "phase Pending" });
    expect(podWorker(makePod({ name: "a", ip: "10.0.0.7", ready: false }), m)).toEqual({ none: "not Ready" });
    expect(podWorker(makePod({ name: "a" }), m)).toEqual({ none: "no podIP" });
    const noConditions = makePod({ name: "a", ip: "10.0.0.7" });
    delete noConditions.status.conditions;
    expect(podWorker(noConditions, m)).toEqual({ none: "not Ready" });
  });

  test("a terminating pod (deletionTimestamp) is a worker to drain, Ready or not", () => {
    const ts = "2026-01-01T00:00:00Z";
    expect(ok(podWorker(makePod({ name: "a", ip: "10.0.0.7", deletionTimestamp: ts }), m)).drain).toBe(true);
    expect(ok(podWorker(makePod({ name: "a", ip: "10.0.0.7", deletionTimestamp: ts, ready: false }), m)).drain).toBe(true);
    // Without an address there is nothing to drain through: it is simply gone.
    expect(podWorker(makePod({ name: "a", deletionTimestamp: ts }), m)).toEqual({ none: "no podIP" });
  });

  test("sleeping=true, lora-modified and the model label", () => {
    const pod = makePod({ name: "a", ip: "10.0.0.7", labels: { sleeping: "true", model: "llama-3" }, annotations: { "lora-modified": "42" } });
    const w = ok(podWorker(pod, { ...m, modelLabel: "model" }));
    expect(w.sleeping).toBe(true);
    expect(w.modelsVersion).toBe("42");
    expect(w.modelId).toBe("llama-3");
    expect(ok(podWorker(pod, m)).modelId).toBeUndefined();
    expect(ok(podWorker(makePod({ name: "a", ip: "10.0.0.7", labels: { sleeping: "false" } }), m)).sleeping).toBe(false);
  });

  test("PD selectors set the role and the prefill's bootstrap port; other pods are not workers", () => {
    const pd = { ...m, prefillSelector: { role: "prefill" }, decodeSelector: { role: "decode" } };
    const prefill = ok(podWorker(makePod({ name: "p", ip: "10.0.0.1", labels: { role: "prefill" }, annotations: { "sglang.ai/bootstrap-port": "8998" } }), pd));
    expect(prefill.workerType).toBe("prefill");
    expect(prefill.bootstrapPort).toBe(8998);
    const vllm = ok(podWorker(makePod({ name: "p", ip: "10.0.0.1", labels: { role: "prefill" }, annotations: { "vllm.ai/bootstrap-port": "9100" } }), pd));
    expect(vllm.bootstrapPort).toBe(9100);
    const decode = ok(podWorker(makePod({ name: "d", ip: "10.0.0.2", labels: { role: "decode" }, annotations: { "vllm.ai/bootstrap-port": "9100" } }), pd));
    expect(decode.workerType).toBe("decode");
    expect(decode.bootstrapPort).toBeUndefined();
    expect(podWorker(makePod({ name: "x", ip: "10.0.0.3", labels: { role: "router" } }), pd)).toEqual({
      none: "matches neither the prefill nor the decode selector",
    });
  });

  test("misshapen pods throw MalformedObjectError (the loop skips them)", () => {
    const bad = [
      { metadata: { uid: "u" } },
      { metadata: { name: "a" } },
      { ...makePod({ name: "a", ip: "10.0.0.7" }), status: { phase: "Running", podIP: "10.0.0.7", conditions: "Ready" } },
      { ...makePod({ name: "a", ip: "10.0.0.7" }), metadata: { name: "a", uid: "u", labels: { n: 5 } } },
      { ...makePod({ name: "a", ip: "10.0.0.7" }), status: { phase: "Running", podIP: 7 } },
      makePod({ name: "a", ip: "10.0.0.7", labels: { role: "prefill" }, annotations: { "vllm.ai/bootstrap-port": "80a" } }),
      "a string",
    ];
    const pd = { ...m, prefillSelector: { role: "prefill" } };
    for (const pod of bad) expect(() => podWorker(pod, pd)).toThrow(MalformedObjectError);
  });
});
