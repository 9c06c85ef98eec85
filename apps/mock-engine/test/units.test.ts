import { describe, expect, test } from "bun:test";
import { goFloat } from "../src/metrics.ts";
import { PrefixCache } from "../src/prefix-cache.ts";
import { Scheduler } from "../src/scheduler.ts";

describe("scheduler", () => {
  test("admits up to the limit, then first come first served", async () => {
    const counts: [number, number][] = [];
    const s = new Scheduler(1, (r, w) => counts.push([r, w]));
    const never = new AbortController().signal;
    const order: number[] = [];
    expect(await s.acquire(never)).toBe(true);
    const waiting = [1, 2, 3].map((i) => s.acquire(never).then(() => order.push(i)));
    expect(counts.at(-1)).toEqual([1, 3]);
    for (let i = 0; i < 3; i++) {
      s.release();
      await Bun.sleep(0);
    }
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
    s.release();
    expect(counts.at(-1)).toEqual([0, 0]);
  });

  test("a request that gives up leaves the queue", async () => {
    let waiting = -1;
    const s = new Scheduler(1, (_, w) => (waiting = w));
    await s.acquire(new AbortController().signal);
    const ac = new AbortController();
    const p = s.acquire(ac.signal);
    expect(waiting).toBe(1);
    ac.abort();
    expect(await p).toBe(false);
    expect(waiting).toBe(0);
  });
});

describe("prefix cache", () => {
  const text = (s: string) => ({ text: s });
  test("block hashes are chained: equal blocks after different prefixes differ", () => {
    const c = new PrefixCache(1, 100); // one token (4 chars) per block
    const a = c.hashes(text("AAAABBBB"));
    const b = c.hashes(text("CCCCBBBB"));
    expect(a.length).toBe(2);
    expect(a[1]).not.toBe(b[1]);
    expect(c.hashes(text("AAAABBBB"))).toEqual(a);
  });

  test("lookup counts leading cached blocks only, up to a bound", () => {
    const c = new PrefixCache(1, 100);
    c.insert(c.hashes(text("AAAABBBBCCCC")));
    expect(c.lookup(c.hashes(text("AAAABBBBDDDD")), 10)).toBe(2);
    expect(c.lookup(c.hashes(text("XXXXBBBBCCCC")), 10)).toBe(0);
    expect(c.lookup(c.hashes(text("AAAABBBBCCCC")), 2)).toBe(2);
  });

  test("least recently used blocks are evicted first", () => {
    const c = new PrefixCache(1, 2);
    const a = c.hashes(text("AAAA"));
    const b = c.hashes(text("BBBB"));
    c.insert(a);
    c.insert(b);
    c.lookup(a, 1); // a is now the most recent
    c.insert(c.hashes(text("CCCC")));
    expect(c.lookup(a, 1)).toBe(1);
    expect(c.lookup(b, 1)).toBe(0);
  });
});

describe("Prometheus float formatting (as Python's client writes it)", () => {
  test("integers get .0, large values an exponent", () => {
    expect(goFloat(0)).toBe("0.0");
    expect(goFloat(12)).toBe("12.0");
    expect(goFloat(0.25)).toBe("0.25");
    expect(goFloat(1764500000.12)).toBe("1.76450000012e+09");
    expect(goFloat(1764500000)).toBe("1.7645e+09");
    expect(goFloat(1e9)).toBe("1e+09");
    expect(goFloat(123456.5)).toBe("123456.5");
    expect(Number(goFloat(1796024495.596))).toBeCloseTo(1796024495.596, 3);
  });
});
