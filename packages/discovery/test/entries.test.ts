import { describe, expect, test } from "bun:test";
import { makePod } from "@switchboard/testkit";
import { discoveryPlan, parseSelector, reconnectDelay } from "../src";
import { applyWatchEvent, entriesFromList } from "../src/kubernetes/entries";

const plan = discoveryPlan({ mode: "pod-ip", namespace: "serving", selector: { app: "llm" }, mapping: { source: "k8s-pods:serving", port: 8000 } });
const pods = plan.collections[0]!;
const pod = (name: string, ip: string, extra: Partial<Parameters<typeof makePod>[0]> = {}) => makePod({ name, ip, namespace: "serving", ...extra });

describe("entries: what discovery knows of a collection", () => {
  test("a list replaces everything: an entry it does not contain is gone", () => {
    const before = entriesFromList([pod("a", "10.0.0.1"), pod("b", "10.0.0.2")], pods.project).entries;
    expect(Object.keys(before)).toEqual(["serving/a", "serving/b"]);
    const after = entriesFromList([pod("b", "10.0.0.2")], pods.project).entries;
    expect(Object.keys(after)).toEqual(["serving/b"]);
  });

  test("one misshapen item is skipped and reported; the others stay", () => {
    const bad = { ...pod("bad", "10.0.0.9"), status: { conditions: "Ready", podIP: "10.0.0.9", phase: "Running" } };
    const { entries, skipped } = entriesFromList([pod("a", "10.0.0.1"), bad, { metadata: {} }, pod("c", "10.0.0.3")], pods.project);
    expect(Object.keys(entries)).toEqual(["serving/a", "serving/c"]);
    expect(skipped.map((s) => s.key)).toEqual(["serving/bad", "<object without a name>"]);
    expect(skipped[0]!.reason).toContain("status.conditions is not a list");
  });

  test("watch events: ADDED/MODIFIED project, DELETED removes, an unwanted or misshapen object loses its entry", () => {
    let e = entriesFromList([pod("a", "10.0.0.1")], pods.project).entries;
    e = applyWatchEvent(e, { type: "ADDED", object: pod("b", "10.0.0.2") }, pods.project).entries;
    expect(Object.keys(e).sort()).toEqual(["serving/a", "serving/b"]);
    e = applyWatchEvent(e, { type: "MODIFIED", object: pod("a", "10.0.0.1", { ready: false }) }, pods.project).entries;
    expect(Object.keys(e)).toEqual(["serving/b"]);
    const r = applyWatchEvent(e, { type: "MODIFIED", object: { ...pod("b", "10.0.0.2"), status: "x" } }, pods.project);
    expect(Object.keys(r.entries)).toEqual([]);
    expect(r.skipped?.key).toBe("serving/b");
    e = applyWatchEvent(e, { type: "DELETED", object: pod("b", "10.0.0.2") }, pods.project).entries;
    expect(e).toEqual({});
  });

  test("the plan's desired set is every entry, sorted by source key", () => {
    const e = entriesFromList([pod("b", "10.0.0.2", { uid: "2" }), pod("a", "10.0.0.1", { uid: "1" })], pods.project).entries;
    expect(plan.desired({ pods: e }).map((w) => w.url)).toEqual(["http://10.0.0.1:8000", "http://10.0.0.2:8000"]);
    expect(pods.labelSelector).toBe("app=llm");
    expect(pods.path).toBe("/api/v1/namespaces/serving/pods");
  });
});

describe("reconnect backoff", () => {
  test("the first retry is quick, the ceiling doubles to the cap, jitter stays in the upper half", () => {
    expect(reconnectDelay(0, 200, 30_000, () => 0)).toBe(100);
    expect(reconnectDelay(0, 200, 30_000, () => 1)).toBe(200);
    expect(reconnectDelay(3, 200, 30_000, () => 0.5)).toBe(1200);
    expect(reconnectDelay(40, 200, 30_000, () => 1)).toBe(30_000);
    expect(reconnectDelay(40, 200, 30_000, () => 0)).toBe(15_000);
  });
});

describe("--selector", () => {
  test("k=v pairs, separate or comma-joined; anything else is refused", () => {
    expect(parseSelector(["app=llm", "tier=gpu,zone=a"])).toEqual({ app: "llm", tier: "gpu", zone: "a" });
    expect(parseSelector(["app.kubernetes.io/name=vllm"])).toEqual({ "app.kubernetes.io/name": "vllm" });
    expect(() => parseSelector(["app"])).toThrow();
    expect(() => parseSelector(["app!=x"])).toThrow();
  });
});
