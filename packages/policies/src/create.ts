import { CacheAwarePolicy, type CacheAwareOptions } from "./cache_aware.ts";
import { ConsistentHashPolicy, type ConsistentHashOptions } from "./consistent_hash.ts";
import { leastLoadPolicy } from "./least_load.ts";
import { powerOfTwoPolicy } from "./power_of_two.ts";
import { randomPolicy } from "./random.ts";
import { roundRobinPolicy } from "./round_robin.ts";
import type { Policy, PolicyName } from "./types.ts";

export const policyNames: readonly PolicyName[] = [
  "cache_aware",
  "consistent_hash",
  "least_load",
  "power_of_two",
  "round_robin",
  "random",
];

export const defaultPolicyName: PolicyName = "cache_aware";

export function isPolicyName(s: string): s is PolicyName {
  return (policyNames as readonly string[]).includes(s);
}

export interface PolicyOptions extends CacheAwareOptions, ConsistentHashOptions {
  /** What consistent_hash does with a request that has no session key (default least_load). */
  fallbackPolicy?: Exclude<PolicyName, "consistent_hash">;
}

/** A fresh policy (with its own routing memory). Options a policy does not use are ignored. */
export function createPolicy(name: PolicyName, options: PolicyOptions = {}): Policy {
  switch (name) {
    case "round_robin":
      return roundRobinPolicy();
    case "random":
      return randomPolicy(options);
    case "least_load":
      return leastLoadPolicy(options);
    case "power_of_two":
      return powerOfTwoPolicy(options);
    case "cache_aware":
      return new CacheAwarePolicy(options);
    case "consistent_hash": {
      const fallback = options.fallbackPolicy ?? "least_load";
      if ((fallback as string) === "consistent_hash") throw new Error("consistent_hash cannot fall back to itself");
      return new ConsistentHashPolicy(createPolicy(fallback, options), options);
    }
    default:
      throw new Error(`unknown policy "${name as string}"; expected one of ${policyNames.join(", ")}`);
  }
}
