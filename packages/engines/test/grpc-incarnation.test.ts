import { describe, expect, test } from "bun:test";
import { IncarnationTracker, incarnationMarker, parseIncarnationMarker, START_EPOCH_TOLERANCE_S } from "../src/grpc/incarnation.ts";

const T0 = 1_800_000_000_000; // ms

describe("IncarnationTracker", () => {
  test("RPC jitter in the measured start epoch keeps the marker", () => {
    const t = new IncarnationTracker();
    const m = t.observe("w", "e1", 100, null, T0);
    // 60 s later uptime is ~160 s; measurement noise of ±0.9 s either way.
    expect(t.observe("w", "e1", 160.9, null, T0 + 60_000)).toBe(m);
    expect(t.observe("w", "e1", 219.1, null, T0 + 120_000)).toBe(m);
  });

  test("a start epoch straddling a whole second does not flap", () => {
    const t = new IncarnationTracker();
    const m = t.observe("w", "e1", 0.001, null, T0 + 999);
    expect(t.observe("w", "e1", 10.0, null, T0 + 10_001)).toBe(m);
  });

  test("uptime going backwards is a new incarnation, even with the same id", () => {
    const t = new IncarnationTracker();
    const m = t.observe("w", "e1", 3_600, null, T0);
    expect(t.observe("w", "e1", 1, null, T0 + 5_000)).not.toBe(m);
  });

  test("a new engine id is a new incarnation whatever the uptime", () => {
    const t = new IncarnationTracker();
    const m = t.observe("w", "e1", 50, null, T0);
    expect(t.observe("w", "e2", 50, null, T0)).not.toBe(m);
  });

  test("slow drift is followed; a jump beyond the tolerance is not", () => {
    const t = new IncarnationTracker();
    const m = t.observe("w", "e1", 0, null, T0);
    let now = T0;
    // Each probe's epoch drifts 1 s later than the last, well within the tolerance each time.
    for (let i = 1; i <= 10; i++) {
      now += 60_000;
      expect(t.observe("w", "e1", (now - T0) / 1000 - i, null, now)).toBe(m);
    }
    now += 60_000;
    expect(t.observe("w", "e1", (now - T0) / 1000 - 10 - START_EPOCH_TOLERANCE_S - 1, null, now)).not.toBe(m);
  });

  test("workers are tracked apart", () => {
    const t = new IncarnationTracker();
    // a's start epoch sits 0.5 s past a whole second, so re-minting it after jitter would differ.
    const a = t.observe("a", "e1", 100, null, T0 + 500);
    t.observe("b", "e1", 1, null, T0 + 500);
    expect(t.observe("a", "e1", 100.7, null, T0 + 500)).toBe(a);
  });

  test("a fresh tracker agrees with the worker's known marker within the tolerance", () => {
    const known = incarnationMarker("e1", T0 / 1000 - 101); // 1 s below the measured epoch, as after jitter
    const t = new IncarnationTracker();
    expect(t.observe("w", "e1", 100, known, T0)).toBe(known);
    expect(new IncarnationTracker().observe("w", "e1", 10, known, T0)).not.toBe(known);
    expect(new IncarnationTracker().observe("w", "e2", 100, known, T0)).not.toBe(known);
  });

  test("markers read back; engine ids may contain the separator", () => {
    expect(parseIncarnationMarker("a|b|1700000000")).toMatchObject({ engineId: "a|b", startEpochS: 1_700_000_000 });
    expect(parseIncarnationMarker("start:123")).toBeUndefined();
    expect(parseIncarnationMarker("e1|")).toBeUndefined();
  });
});
