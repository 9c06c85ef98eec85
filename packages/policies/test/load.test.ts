import { describe, expect, test } from "bun:test";
import { loadScore } from "../src/index.ts";
import { cand, engine } from "./helpers.ts";

const now = 1_000_000;

describe("loadScore", () => {
  test("without an engine scrape, the gateway's in-flight count is the load", () => {
    expect(loadScore(cand("a", 7), now, 5_000)).toBe(7);
  });

  test("a stale scrape is ignored", () => {
    const c = cand("a", 2, { engineLoad: engine(40, 10, now - 5_001) });
    expect(loadScore(c, now, 5_000)).toBe(2);
  });

  test("a fresh scrape counts running + waiting, never below our own in-flight", () => {
    expect(loadScore(cand("a", 2, { engineLoad: engine(40, 10, now - 100) }), now, 5_000)).toBe(50);
    expect(loadScore(cand("a", 60, { engineLoad: engine(40, 10, now - 100) }), now, 5_000)).toBe(60);
  });

  test("with the in-flight snapshot, the engine count moves with our own requests since the scrape", () => {
    // 30 at the engine when we had 5 there; we now have 12 → 7 more than the engine saw.
    expect(loadScore(cand("a", 12, { engineLoad: engine(25, 5, now - 100, 5) }), now, 5_000)).toBe(37);
    // Ours finished since: the engine has 3 fewer.
    expect(loadScore(cand("a", 2, { engineLoad: engine(25, 5, now - 100, 5) }), now, 5_000)).toBe(27);
  });
});
