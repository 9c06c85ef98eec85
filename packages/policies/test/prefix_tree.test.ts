import { describe, expect, test } from "bun:test";
import { PrefixTree } from "../src/index.ts";
import { randomText, seeded } from "./helpers.ts";

const all = () => true;

describe("PrefixTree", () => {
  test("finds the longest prefix and who has seen it, through partial edges", () => {
    const t = new PrefixTree();
    t.insert("hello world", "a", 1);
    t.insert("hello there", "b", 2);
    expect(t.longestMatch("hello world, again", all)).toEqual({ matched: 11, workers: ["a"] });
    expect(t.longestMatch("hello thx", all)).toEqual({ matched: 8, workers: ["b"] });
    expect(t.longestMatch("hello", all).matched).toBe(5);
    expect(t.longestMatch("hello", all).workers.sort()).toEqual(["a", "b"]);
    expect(t.longestMatch("goodbye", all)).toEqual({ matched: 0, workers: [] });
    expect(t.verify()).toEqual([]);
  });

  test("walks back up to the deepest prefix an accepted worker has", () => {
    const t = new PrefixTree();
    t.insert("shared system prompt / alice", "a", 1);
    t.insert("shared system prompt / bob", "b", 1);
    const m = t.longestMatch("shared system prompt / alice asks", (w) => w !== "a");
    expect(m).toEqual({ matched: "shared system prompt / ".length, workers: ["b"] });
  });

  test("counts each worker's chars once per shared prefix", () => {
    const t = new PrefixTree();
    t.insert("hello world", "a", 1);
    t.insert("hello there", "a", 2);
    t.insert("hello", "b", 3);
    expect(t.chars("a")).toBe("hello world".length + "there".length);
    expect(t.chars("b")).toBe(5);
    t.insert("hello world", "a", 4); // nothing new
    expect(t.chars("a")).toBe(16);
    expect(t.verify()).toEqual([]);
  });

  test("least-recent eviction drops the oldest prefixes and keeps shared ones in use", () => {
    const t = new PrefixTree();
    t.insert("system: be brief. q1", "a", 1);
    t.insert("system: be brief. q2", "a", 2);
    t.insert("system: be brief. q3", "a", 3);
    t.evictLeastRecent("a", t.chars("a") - 1);
    expect(t.longestMatch("system: be brief. q1", all).matched).toBe("system: be brief. q".length);
    expect(t.longestMatch("system: be brief. q2", all).matched).toBe(20);
    t.evictLeastRecent("a", 0);
    expect(t.chars("a")).toBe(0);
    expect(t.workers()).toEqual([]);
    expect(t.nodeCount()).toBe(0);
    expect(t.verify()).toEqual([]);
  });

  test("expiry drops what was not used since the cutoff, per worker", () => {
    const t = new PrefixTree();
    t.insert("prefix-old", "a", 10);
    t.insert("prefix-new", "a", 20);
    t.insert("prefix-old", "b", 30);
    t.expire(15);
    expect(t.longestMatch("prefix-old", (w) => w === "a").matched).toBe("prefix-".length);
    expect(t.longestMatch("prefix-old", all)).toEqual({ matched: 10, workers: ["b"] });
    expect(t.chars("a")).toBe("prefix-new".length);
    expect(t.verify()).toEqual([]);
  });

  test("an incremental sweep does the same work in bounded steps", () => {
    const rng = seeded(13);
    const t = new PrefixTree();
    const texts = Array.from({ length: 200 }, () => randomText(rng, 40));
    texts.forEach((text, i) => t.insert(text, `w${i % 5}`, i < 150 ? 1 : 2));
    let steps = 0;
    while (!t.expireSome(2, 10)) {
      steps++;
      expect(t.verify()).toEqual([]);
      t.insert(randomText(rng, 40), "w0", 3); // inserts interleave with the sweep
    }
    expect(steps).toBeGreaterThan(10);
    for (let i = 0; i < 150; i++) expect(t.longestMatch(texts[i], (_, at) => at < 2).matched).toBe(0);
    for (let i = 150; i < 200; i++) expect(t.longestMatch(texts[i], () => true).matched).toBe(40);
    expect(t.verify()).toEqual([]);
  });

  test("forget drops one worker and frees nodes nobody else holds", () => {
    const t = new PrefixTree();
    t.insert("abcdef", "a", 1);
    t.insert("abcxyz", "b", 1);
    t.forget("a");
    expect(t.chars("a")).toBe(0);
    expect(t.longestMatch("abcdef", all)).toEqual({ matched: 3, workers: ["b"] });
    t.forget("b");
    expect(t.nodeCount()).toBe(0);
    expect(t.verify()).toEqual([]);
  });

  test("invariants hold under a random mix of inserts, evictions, expiry and forgets", () => {
    const rng = seeded(11);
    const t = new PrefixTree();
    const workers = ["a", "b", "c", "d"];
    const stems = Array.from({ length: 6 }, () => randomText(rng, 30));
    let now = 0;
    for (let step = 0; step < 3_000; step++) {
      now += Math.floor(rng() * 3);
      const w = workers[Math.floor(rng() * workers.length)];
      const r = rng();
      if (r < 0.8) {
        const stem = stems[Math.floor(rng() * stems.length)];
        t.insert(stem.slice(0, Math.floor(rng() * 30)) + randomText(rng, Math.floor(rng() * 20)), w, now);
      } else if (r < 0.9) t.evictLeastRecent(w, Math.floor(t.chars(w) * rng()));
      else if (r < 0.97) t.expire(now - 50);
      else t.forget(w);
      if (step % 100 === 0) expect(t.verify()).toEqual([]);
    }
    expect(t.verify()).toEqual([]);
  });

  test("matches agree with a brute-force model (inserts, expiry, forgets)", () => {
    const rng = seeded(12);
    const t = new PrefixTree();
    const workers = ["a", "b", "c"];
    const stems = Array.from({ length: 4 }, () => randomText(rng, 12));
    // The model: every (worker, text, time) inserted; held = not forgotten and not expired.
    let held: { w: string; text: string; at: number }[] = [];
    const textFor = () => stems[Math.floor(rng() * stems.length)].slice(0, 4 + Math.floor(rng() * 8)) + randomText(rng, Math.floor(rng() * 4));
    let now = 0;
    for (let step = 0; step < 2_000; step++) {
      now += 1;
      const w = workers[Math.floor(rng() * workers.length)];
      const r = rng();
      if (r < 0.85) {
        const text = textFor();
        t.insert(text, w, now);
        held.push({ w, text, at: now });
      } else if (r < 0.95) {
        t.expire(now - 40);
        held = held.filter((h) => h.at >= now - 40);
      } else {
        t.forget(w);
        held = held.filter((h) => h.w !== w);
      }
      const query = textFor();
      const best = new Map<string, number>();
      for (const h of held) best.set(h.w, Math.max(best.get(h.w) ?? 0, commonPrefix(h.text, query)));
      const matched = Math.max(0, ...best.values());
      const expected = matched === 0 ? [] : [...best].filter(([, n]) => n === matched).map(([w]) => w).sort();
      const got = t.longestMatch(query, all);
      expect({ matched: got.matched, workers: got.workers.sort() }).toEqual({ matched, workers: expected });
    }
  });
});

function commonPrefix(a: string, b: string): number {
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  return k;
}

describe("PrefixTree memory", () => {
  test("edges do not pin the request texts they were cut from", () => {
    const { heapStats } = require("bun:jsc") as typeof import("bun:jsc");
    const t = new PrefixTree();
    const doc = "shared document ".repeat(6_250); // 100k chars
    Bun.gc(true);
    const before = heapStats().heapSize;
    for (let i = 0; i < 600; i++) {
      // A fresh, flat 100k-char text per request (as JSON.parse gives), differing in its tail.
      const text = JSON.parse(JSON.stringify(`${doc}question ${i}: what does the document say about it?`)) as string;
      t.insert(text, `w${i % 4}`, i);
    }
    Bun.gc(true);
    const grown = heapStats().heapSize - before;
    // Pinned texts would hold 600 × 100k chars ≈ 60 MB; the tree itself needs well under 10 MB.
    expect(grown).toBeLessThan(20e6);
    expect(t.chars("w0")).toBeLessThan(110_000);
  });
});
