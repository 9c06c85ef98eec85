import { describe, expect, test } from "bun:test";
import { roundRobinPolicy } from "../src/index.ts";
import { counts, fleet } from "./helpers.ts";

describe("round_robin", () => {
  test("takes each candidate in turn: exactly equal shares", () => {
    const p = roundRobinPolicy();
    const cands = fleet(5);
    const picks = Array.from({ length: 500 }, () => p.pick(cands, { model: "m" }));
    expect(picks.slice(0, 6).map((c) => c.id)).toEqual(["w0", "w1", "w2", "w3", "w4", "w0"]);
    for (const c of cands) expect(counts(picks).get(c.id)).toBe(100);
  });

  test("stays in range when the set shrinks", () => {
    const p = roundRobinPolicy();
    const big = fleet(10);
    for (let i = 0; i < 7; i++) p.pick(big, { model: "m" });
    const small = fleet(3);
    const picks = Array.from({ length: 30 }, () => p.pick(small, { model: "m" }));
    expect(picks.every((c) => c !== undefined)).toBe(true);
    for (const c of small) expect(counts(picks).get(c.id)).toBe(10);
  });
});
