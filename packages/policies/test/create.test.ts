import { describe, expect, test } from "bun:test";
import { createPolicy, defaultPolicyName, isPolicyName, policyNames } from "../src/index.ts";
import { fleet } from "./helpers.ts";

describe("createPolicy", () => {
  test("every listed name makes a working policy of that name", () => {
    for (const name of policyNames) {
      const p = createPolicy(name);
      expect(p.name).toBe(name);
      const cands = fleet(3);
      expect(cands).toContain(p.pick(cands, { model: "m", text: "hello", sessionKey: "s" }));
    }
    expect(defaultPolicyName).toBe("cache_aware");
  });

  test("says what each policy needs extracted", () => {
    expect(createPolicy("cache_aware").needsText).toBe(true);
    expect(createPolicy("consistent_hash").needsSessionKey).toBe(true);
    expect(createPolicy("consistent_hash").needsText).toBe(false);
    expect(createPolicy("consistent_hash", { fallbackPolicy: "cache_aware" }).needsText).toBe(true);
    expect(createPolicy("round_robin").needsText ?? false).toBe(false);
  });

  test("rejects unknown names and a self fallback", () => {
    expect(isPolicyName("least_load")).toBe(true);
    expect(isPolicyName("fastest")).toBe(false);
    expect(() => createPolicy("fastest" as never)).toThrow(/unknown policy/);
    expect(() => createPolicy("consistent_hash", { fallbackPolicy: "consistent_hash" as never })).toThrow();
  });
});
