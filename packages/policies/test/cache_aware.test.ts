import { describe, expect, test } from "bun:test";
import { CacheAwarePolicy, renderChatForPrefix, type Candidate } from "../src/index.ts";
import { cand, counts, fleet, manualClock, randomText, seeded } from "./helpers.ts";

const req = (text: string) => ({ model: "m", text });

describe("cache_aware", () => {
  test("a repeated or extended prompt goes back to the worker that has its prefix", () => {
    const p = new CacheAwarePolicy({ random: seeded(1) });
    const cands = fleet(8);
    const doc = `Document: ${"lorem ipsum ".repeat(50)}`;
    const first = p.pick(cands, req(`${doc} Q: what is it?`));
    for (let i = 0; i < 20; i++) {
      const w = p.pick(cands, req(`${doc} Q: question ${i}`));
      expect(w.id).toBe(first.id);
      expect(p.lastReason).toBe("affinity");
    }
  });

  test("new prompts spread: least loaded first, then the least cached text", () => {
    const p = new CacheAwarePolicy({ random: seeded(2) });
    const cands = fleet(4);
    const rng = seeded(3);
    const picks = Array.from({ length: 8 }, () => p.pick(cands, req(randomText(rng, 200))));
    expect(p.lastReason).toBe("spread");
    expect([...counts(picks).values()]).toEqual([2, 2, 2, 2]);
  });

  test("follows a cached prefix only when it covers cacheThreshold of the text", () => {
    const p = new CacheAwarePolicy({ random: seeded(4), cacheThreshold: 0.3 });
    const cands = fleet(4);
    const owner = p.pick(cands, req("X".repeat(100)));
    const below = p.pick(cands, req("X".repeat(20) + "Y".repeat(80)));
    expect(p.lastReason).toBe("spread");
    expect(below.id).not.toBe(owner.id); // the owner holds the most text
    const above = p.pick(cands, req("X".repeat(40) + "Z".repeat(60)));
    expect(p.lastReason).toBe("affinity");
    expect(above.id).toBe(owner.id);
  });

  test("among workers sharing the prefix, the least loaded gets it", () => {
    const p = new CacheAwarePolicy({ random: seeded(5), balanceAbsThreshold: 64 });
    const text = "S".repeat(300);
    p.pick([cand("a")], req(text));
    p.pick([cand("b")], req(text));
    const w = p.pick([cand("a", 9), cand("b", 4), cand("c", 0)], req(text));
    expect(p.lastReason).toBe("affinity");
    expect(w.id).toBe("b");
  });

  test("imbalance guard: a wide spread (absolute and relative) sends work to the least loaded, which then holds the prefix", () => {
    const p = new CacheAwarePolicy({ random: seeded(6), balanceAbsThreshold: 64, balanceRelThreshold: 1.5 });
    const text = "P".repeat(500);
    p.pick([cand("a")], req(text));
    // Spread 30: under the absolute threshold, affinity holds.
    expect(p.pick([cand("a", 100), cand("b", 70)], req(text)).id).toBe("a");
    // Spread 70 but 300 < 1.5 × 230: under the relative threshold, affinity holds.
    expect(p.pick([cand("a", 300), cand("b", 230)], req(text)).id).toBe("a");
    expect(p.lastReason).toBe("affinity");
    // Spread 100 and 100 > 1.5 × 0: the guard fires.
    expect(p.pick([cand("a", 100), cand("b", 0)], req(text)).id).toBe("b");
    expect(p.lastReason).toBe("balance");
    expect(p.tree.longestMatch(text, (w) => w === "b").matched).toBe(500);
  });

  test("a burst of one prefix is spread once loads diverge (hot-spot trap)", () => {
    for (const abs of [64, 4]) {
      const p = new CacheAwarePolicy({ random: seeded(7), balanceAbsThreshold: abs });
      const inFlight = new Map(fleet(8).map((c) => [c.id, 0]));
      const text = `You are a helpful assistant. ${"context ".repeat(100)}`;
      // Concurrent burst: nothing completes, and the gateway counts each routed request at once.
      for (let i = 0; i < 400; i++) {
        const cands = [...inFlight].map(([id, n]) => cand(id, n));
        const w = p.pick(cands, req(text));
        inFlight.set(w.id, inFlight.get(w.id)! + 1);
      }
      const loads = [...inFlight.values()];
      const max = Math.max(...loads);
      const min = Math.min(...loads);
      expect(max - min).toBeLessThanOrEqual(abs + 1);
      // A wide threshold recruits workers one at a time as holders fill up; a tight one uses all.
      if (abs === 4) expect(min).toBeGreaterThan(0);
      if (abs === 4) expect(max / (400 / 8)).toBeLessThanOrEqual(1.5);
    }
  });

  test("a hot worker does not cost other prefixes their affinity (the guard judges the chosen worker)", () => {
    const p = new CacheAwarePolicy({ random: seeded(19), balanceAbsThreshold: 2 });
    const hot = "H".repeat(400);
    const cold = "C".repeat(400);
    p.pick([cand("a")], req(hot));
    p.pick([cand("b")], req(cold));
    // a is far above the least loaded (c); b, which holds the cold prefix, is not.
    const cands = [cand("a", 10), cand("b", 1), cand("c", 0)];
    expect(p.pick(cands, req(`${cold} next`)).id).toBe("b");
    expect(p.lastReason).toBe("affinity");
    expect(p.pick(cands, req(`${hot} next`)).id).toBe("c");
    expect(p.lastReason).toBe("balance");
  });

  test("ignores stale engine loads in the guard", () => {
    const clock = manualClock();
    const p = new CacheAwarePolicy({ now: clock.now, staleAfterMs: 1_000, random: seeded(8) });
    const text = "Q".repeat(200);
    p.pick([cand("a")], req(text));
    const cands = () => [
      cand("a", 0, { engineLoad: { running: 150, waiting: 50, kvUsage: 0.9, at: 1_000_000 } }),
      cand("b", 1),
    ];
    expect(p.pick(cands(), req(text)).id).toBe("b");
    expect(p.lastReason).toBe("balance");
    clock.advance(1_001);
    // Both hold the prefix now; with a's scrape stale, a (0 in flight) is the less loaded.
    expect(p.pick(cands(), req(text)).id).toBe("a");
    expect(p.lastReason).toBe("affinity");
  });

  test("bounded memory: a worker over its char budget loses its least recently used prefixes", () => {
    const p = new CacheAwarePolicy({ random: seeded(9), maxCharsPerWorker: 1_000 });
    const rng = seeded(10);
    const texts = Array.from({ length: 20 }, () => randomText(rng, 100));
    const only = [cand("a")];
    for (const t of texts) p.pick(only, req(t));
    expect(p.tree.chars("a")).toBeLessThanOrEqual(1_000);
    expect(p.tree.longestMatch(texts[0], () => true).matched).toBeLessThan(30);
    expect(p.tree.longestMatch(texts[19], () => true).matched).toBe(100);
    expect(p.tree.verify()).toEqual([]);
  });

  test("time eviction: prefixes unused for evictAfterMs stop attracting and are swept lazily", () => {
    const clock = manualClock();
    const p = new CacheAwarePolicy({ now: clock.now, evictAfterMs: 1_000, random: seeded(11) });
    const cands = fleet(4);
    const text = "T".repeat(300);
    const owner = p.pick(cands, req(text));
    clock.advance(500);
    expect(p.pick(cands, req(text)).id).toBe(owner.id);
    clock.advance(1_001);
    const rng = seeded(12);
    p.pick(cands, req(randomText(rng, 50))); // triggers the sweep
    expect(p.tree.longestMatch(text, () => true).matched).toBe(0);
    expect(p.tree.chars(owner.id)).toBeLessThanOrEqual(50);
    p.pick(cands, req(text));
    expect(p.lastReason).toBe("spread");
  });

  test("time eviction: an expired prefix is not followed even before a sweep removes it", () => {
    const clock = manualClock();
    const p = new CacheAwarePolicy({ now: clock.now, evictAfterMs: 1_000, sweepEveryMs: 1e12, random: seeded(18) });
    const text = "E".repeat(300);
    p.pick([cand("a")], req(text));
    clock.advance(1_001);
    p.pick([cand("a"), cand("b")], req(text));
    expect(p.lastReason).toBe("spread");
  });

  test("forget drops a worker's prefixes", () => {
    const p = new CacheAwarePolicy({ random: seeded(13) });
    const text = "F".repeat(300);
    p.pick([cand("a")], req(text));
    p.forget("a");
    expect(p.tree.chars("a")).toBe(0);
    p.pick([cand("a"), cand("b")], req(text));
    expect(p.lastReason).toBe("spread");
  });

  test("an engine restart (new incarnation) voids what the old one cached", () => {
    const p = new CacheAwarePolicy({ random: seeded(14) });
    const text = "I".repeat(300);
    p.pick([cand("a", 0, { incarnation: "boot-1" })], req(text));
    p.pick([cand("a", 0, { incarnation: "boot-1" }), cand("b", 0)], req(text));
    expect(p.lastReason).toBe("affinity");
    // a restarted: its cache is empty, so the text is new to every candidate.
    const w = p.pick([cand("a", 0, { incarnation: "boot-2" }), cand("b", 0)], req(text));
    expect(p.lastReason).toBe("spread");
    if (w.id === "a") expect(p.tree.chars("a")).toBe(300);
    else expect(p.tree.chars("a")).toBe(0);
    // Picking the restarted worker directly also starts it afresh.
    p.pick([cand("a", 0, { incarnation: "boot-3" })], req("other"));
    expect(p.tree.chars("a")).toBe("other".length);
  });

  test("only candidates count: a worker that is not offered is not followed", () => {
    const p = new CacheAwarePolicy({ random: seeded(15) });
    const text = "C".repeat(300);
    p.pick([cand("gone")], req(text));
    const w = p.pick([cand("x"), cand("y")], req(text));
    expect(p.lastReason).toBe("spread");
    expect(["x", "y"]).toContain(w.id);
  });

  test("multi-turn chat keeps its worker as the conversation grows", () => {
    const p = new CacheAwarePolicy({ random: seeded(16) });
    const cands = fleet(6);
    const sessions = Array.from({ length: 6 }, (_, s) => [
      { role: "system", content: "You are a terse assistant." },
      { role: "user", content: `Session ${s}: ${"tell me about the sea. ".repeat(10)}` },
    ]);
    const home = new Map<number, string>();
    for (let turn = 0; turn < 4; turn++) {
      sessions.forEach((msgs, s) => {
        const w: Candidate = p.pick(cands, req(renderChatForPrefix(msgs)));
        if (turn === 0) home.set(s, w.id);
        else expect(w.id).toBe(home.get(s)!);
        msgs.push({ role: "assistant", content: `answer ${turn}` }, { role: "user", content: `follow-up ${turn}` });
      });
    }
    expect(new Set(home.values()).size).toBeGreaterThan(3);
  });

  test("an array reordered in place still routes to the worker holding the prefix", () => {
    const p = new CacheAwarePolicy({ random: seeded(17) });
    const arr = fleet(5);
    const text = "R".repeat(300);
    const owner = p.pick(arr, req(text));
    const i = arr.indexOf(owner);
    const j = (i + 1) % arr.length;
    [arr[i], arr[j]] = [arr[j], arr[i]];
    expect(p.pick(arr, req(text)).id).toBe(owner.id);
    expect(p.lastReason).toBe("affinity");
  });
});
