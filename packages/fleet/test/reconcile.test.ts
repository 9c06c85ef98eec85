import { describe, expect, test } from "bun:test";
import type { DesiredWorker } from "@switchboard/discovery";
import { reconcile, type RunningWorker } from "../src";

function desired(key: string, over: Partial<DesiredWorker> = {}): DesiredWorker {
  return { url: `http://10.0.0.${key}:8000`, connectionMode: "http", workerType: "regular", labels: {}, priority: 0, source: "s", sourceKey: key, ...over };
}
function running(key: string, over: Partial<DesiredWorker> = {}, draining = false): RunningWorker {
  const { modelsVersion, drain: _d, id: _i, ...spec } = desired(key, over);
  return { id: `id-${key}`, sourceKey: key, spec: { ...spec, id: `id-${key}` }, modelsVersion, draining };
}

describe("reconcile", () => {
  test("adds what is new, removes what vanished, leaves the rest alone", () => {
    const actions = reconcile([running("1"), running("2")], [desired("2"), desired("3")]);
    expect(actions).toEqual([
      { kind: "spawn", desired: desired("3") },
      { kind: "remove", id: "id-1" },
    ]);
  });

  test("a changed address or role is a new worker, not an update", () => {
    expect(reconcile([running("1")], [desired("1", { url: "http://10.9.9.9:8000" })])[0]).toMatchObject({ kind: "replace", oldId: "id-1" });
    expect(reconcile([running("1")], [desired("1", { workerType: "prefill" })])[0]).toMatchObject({ kind: "replace" });
  });

  test("labels, priority and sleeping are updates; a models version change is a refresh", () => {
    const actions = reconcile([running("1", { modelsVersion: "a" })], [desired("1", { labels: { x: "1" }, sleeping: true, modelsVersion: "b" })]);
    expect(actions).toEqual([
      { kind: "update", id: "id-1", patch: { sleeping: true, labels: { x: "1" } } },
      { kind: "refreshModels", id: "id-1", modelsVersion: "b" },
    ]);
  });

  test("terminating objects drain; a draining worker is left to finish even when its object is gone", () => {
    expect(reconcile([running("1")], [desired("1", { drain: true })])).toEqual([{ kind: "drain", id: "id-1" }]);
    expect(reconcile([running("1", {}, true)], [])).toEqual([]);
    expect(reconcile([], [desired("1", { drain: true })])).toEqual([]);
  });

  test("is idempotent: applying the same truth twice does nothing the second time", () => {
    const truth = [desired("1"), desired("2", { labels: { a: "b" } })];
    expect(reconcile([running("1"), running("2", { labels: { a: "b" } })], truth)).toEqual([]);
  });
});
