import { describe, expect, test } from "bun:test";
import { ConsistentHashPolicy, HashRing, createPolicy, roundRobinPolicy, type Candidate, type Policy } from "../src/index.ts";
import { cand, counts, fleet, seeded } from "./helpers.ts";

const keys = Array.from({ length: 20_000 }, (_, i) => `user-${i}`);
const owners = (p: Policy, cands: Candidate[]) => keys.map((k) => p.pick(cands, { model: "m", sessionKey: k }).id);

describe("consistent_hash", () => {
  test("a session stays on its worker while the set holds, and the ring is built once", () => {
    const p = createPolicy("consistent_hash") as ConsistentHashPolicy;
    const first = p.pick(fleet(10), { model: "m", sessionKey: "alice" }).id;
    for (let i = 0; i < 50; i++) {
      // Fresh candidate objects with changing loads, same ids: same worker, no rebuild.
      const cands = fleet(10).map((c, k) => cand(c.id, (i * 7 + k) % 13));
      expect(p.pick(cands, { model: "m", sessionKey: "alice" }).id).toBe(first);
    }
    expect(p.ringBuilds).toBe(1);
  });

  test("the order of candidates does not change who owns a key", () => {
    const p = createPolicy("consistent_hash");
    const cands = fleet(12);
    const before = owners(p, cands);
    expect(owners(p, [...cands].reverse())).toEqual(before);
  });

  test("shares are even with virtual nodes", () => {
    const p = createPolicy("consistent_hash");
    const c = counts(owners(p, fleet(10)).map((id) => cand(id)));
    expect(c.size).toBe(10);
    for (const n of c.values()) {
      expect(n).toBeGreaterThan(2_000 * 0.75);
      expect(n).toBeLessThan(2_000 * 1.25);
    }
  });

  test("removing a worker moves only its own keys (~1/N)", () => {
    const p = createPolicy("consistent_hash");
    const cands = fleet(20);
    const before = owners(p, cands);
    const after = owners(p, cands.filter((c) => c.id !== "w7"));
    let moved = 0;
    for (let i = 0; i < keys.length; i++) {
      if (before[i] !== after[i]) {
        moved++;
        expect(before[i]).toBe("w7");
      }
    }
    expect(moved).toBe(before.filter((id) => id === "w7").length);
    expect(moved / keys.length).toBeGreaterThan(0.5 / 20);
    expect(moved / keys.length).toBeLessThan(1.5 / 20);
  });

  test("adding a worker moves keys only to it (~1/(N+1))", () => {
    const p = createPolicy("consistent_hash");
    const cands = fleet(20);
    const before = owners(p, cands);
    const after = owners(p, [...cands, cand("new")]);
    let moved = 0;
    for (let i = 0; i < keys.length; i++) {
      if (before[i] !== after[i]) {
        moved++;
        expect(after[i]).toBe("new");
      }
    }
    expect(moved / keys.length).toBeGreaterThan(0.5 / 21);
    expect(moved / keys.length).toBeLessThan(1.5 / 21);
  });

  test("without a key it falls back: least_load by default, or the configured policy", () => {
    const byDefault = createPolicy("consistent_hash");
    const cands = [cand("a", 5), cand("b", 0), cand("c", 9)];
    for (let i = 0; i < 10; i++) expect(byDefault.pick(cands, { model: "m" }).id).toBe("b");
    expect(byDefault.pick(cands, { model: "m", sessionKey: "" }).id).toBe("b");

    const rr = new ConsistentHashPolicy(roundRobinPolicy());
    expect([0, 1, 2, 3].map(() => rr.pick(cands, { model: "m" }).id)).toEqual(["a", "b", "c", "a"]);
    const viaFactory = createPolicy("consistent_hash", { fallbackPolicy: "round_robin" });
    expect([0, 1, 2].map(() => viaFactory.pick(cands, { model: "m" }).id)).toEqual(["a", "b", "c"]);
  });

  test("keeps rings for several candidate sets without rebuilding on alternation", () => {
    const p = createPolicy("consistent_hash") as ConsistentHashPolicy;
    const setA = fleet(5, "a");
    const setB = fleet(7, "b");
    for (let i = 0; i < 20; i++) {
      p.pick(i % 2 ? setA : setB, { model: "m", sessionKey: `k${i}` });
    }
    expect(p.ringBuilds).toBe(2);
  });

  test("an array changed in place is noticed when a key lands on the changed slot", () => {
    const p = createPolicy("consistent_hash");
    const arr = fleet(10);
    const before = owners(p, arr);
    arr[3] = cand("replacement");
    const fresh = createPolicy("consistent_hash");
    const k = keys.findIndex((key, i) => before[i] === "w3" && fresh.pick([...arr], { model: "m", sessionKey: key }).id !== "replacement");
    expect(k).toBeGreaterThanOrEqual(0);
    const expected = fresh.pick([...arr], { model: "m", sessionKey: keys[k] }).id;
    expect(p.pick(arr, { model: "m", sessionKey: keys[k] }).id).toBe(expected);
    expect(owners(p, arr)).toEqual(owners(fresh, [...arr]));
  });

  test("a ring updated from the previous one maps keys exactly as one built from scratch", () => {
    const rng = seeded(21);
    let ids = Array.from({ length: 40 }, (_, i) => `w${i}`);
    let ring = HashRing.build(ids, 160);
    for (let round = 0; round < 5; round++) {
      // Drop a few, add a few, shuffle.
      ids = ids.filter(() => rng() > 0.1).concat(Array.from({ length: 3 }, (_, k) => `n${round}-${k}`));
      ids.sort(() => rng() - 0.5);
      ring = HashRing.build(ids, 160, ring);
      const fresh = HashRing.build(ids, 160);
      for (const k of keys.slice(0, 5_000)) expect(ids[ring.ownerOfKey(k)]).toBe(ids[fresh.ownerOfKey(k)]);
    }
  });
});
