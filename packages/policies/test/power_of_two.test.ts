import { describe, expect, test } from "bun:test";
import { powerOfTwoPolicy } from "../src/index.ts";
import { cand, counts, seeded } from "./helpers.ts";

describe("power_of_two", () => {
  test("the less loaded of the two always wins", () => {
    const p = powerOfTwoPolicy({ random: seeded(5) });
    const pair = [cand("hi", 5), cand("lo", 1)];
    for (let i = 0; i < 200; i++) expect(p.pick(pair, { model: "m" }).id).toBe("lo");
  });

  test("never picks the most loaded; lower loads win more often", () => {
    const p = powerOfTwoPolicy({ random: seeded(6) });
    const cands = Array.from({ length: 10 }, (_, k) => cand(`l${k}`, k));
    const c = counts(Array.from({ length: 20_000 }, () => p.pick(cands, { model: "m" })));
    expect(c.get("l9")).toBeUndefined();
    // P(load k wins) = 2(9 − k)/90: l0 ≈ 20%, l8 ≈ 2.2%.
    expect(c.get("l0")!).toBeGreaterThan(3_500);
    expect(c.get("l0")!).toBeGreaterThan(c.get("l4")!);
    expect(c.get("l4")!).toBeGreaterThan(c.get("l8")!);
  });

  test("a tie is a coin flip", () => {
    const p = powerOfTwoPolicy({ random: seeded(7) });
    const pair = [cand("a", 2), cand("b", 2)];
    const c = counts(Array.from({ length: 1_000 }, () => p.pick(pair, { model: "m" })));
    expect(c.get("a")!).toBeGreaterThan(400);
    expect(c.get("b")!).toBeGreaterThan(400);
  });

  test("one candidate is returned as is", () => {
    const p = powerOfTwoPolicy();
    const only = cand("only", 3);
    expect(p.pick([only], { model: "m" })).toBe(only);
  });
});
