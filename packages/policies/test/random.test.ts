import { describe, expect, test } from "bun:test";
import { randomPolicy } from "../src/index.ts";
import { counts, fleet, seeded } from "./helpers.ts";

describe("random", () => {
  test("spreads uniformly", () => {
    const p = randomPolicy({ random: seeded(1) });
    const cands = fleet(8);
    const c = counts(Array.from({ length: 8_000 }, () => p.pick(cands, { model: "m" })));
    for (const x of cands) {
      expect(c.get(x.id)!).toBeGreaterThan(800);
      expect(c.get(x.id)!).toBeLessThan(1_200);
    }
  });
});
