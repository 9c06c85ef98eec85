import { describe, expect, test } from "bun:test";
import { leastLoadPolicy } from "../src/index.ts";
import { cand, counts, engine, manualClock, seeded } from "./helpers.ts";

describe("least_load", () => {
  test("picks the least loaded", () => {
    const p = leastLoadPolicy({ random: seeded(2) });
    const cands = [cand("a", 5), cand("b", 3), cand("c", 1), cand("d", 4)];
    for (let i = 0; i < 50; i++) expect(p.pick(cands, { model: "m" }).id).toBe("c");
  });

  test("ties are shared fairly, not always the first", () => {
    const p = leastLoadPolicy({ random: seeded(3) });
    const cands = [cand("busy", 9), cand("a", 0), cand("b", 0), cand("c", 0)];
    const c = counts(Array.from({ length: 3_000 }, () => p.pick(cands, { model: "m" })));
    expect(c.get("busy")).toBeUndefined();
    for (const id of ["a", "b", "c"]) expect(c.get(id)!).toBeGreaterThan(800);
  });

  test("uses fresh engine loads, ignores stale ones", () => {
    const clock = manualClock();
    const p = leastLoadPolicy({ now: clock.now, staleAfterMs: 2_000 });
    // Engine says a is full (other replicas' work), though this gateway has nothing there.
    const cands = () => [cand("a", 0, { engineLoad: engine(30, 5, 1_000_000) }), cand("b", 3)];
    expect(p.pick(cands(), { model: "m" }).id).toBe("b");
    clock.advance(2_001);
    expect(p.pick(cands(), { model: "m" }).id).toBe("a");
  });

  test("follows in-flight counts as the gateway increments them", () => {
    const p = leastLoadPolicy({ random: seeded(4) });
    const inFlight = new Map([["a", 0], ["b", 0], ["c", 0]]);
    for (let i = 0; i < 30; i++) {
      const cands = [...inFlight].map(([id, n]) => cand(id, n));
      const w = p.pick(cands, { model: "m" });
      inFlight.set(w.id, inFlight.get(w.id)! + 1);
    }
    expect([...inFlight.values()]).toEqual([10, 10, 10]);
  });
});
