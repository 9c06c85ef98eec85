import type { V1EndpointSlice, V1ObjectMeta, V1Pod, V1Service } from "@kubernetes/client-node";

/**
 * client-node's model types describe deserialized objects (timestamps as Date). List and
 * watch hand over the JSON as received, where timestamps are RFC 3339 strings; this maps
 * the official types to that wire shape so the compiler tells the truth.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export type ObjectMeta = Wire<V1ObjectMeta>;
export type Pod = Wire<V1Pod>;
export type Service = Wire<V1Service>;
export type EndpointSlice = Wire<V1EndpointSlice>;

/** What list and watch require of every object: JSON with metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export function isKubeObject(v: unknown): v is KubeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    typeof (v as KubeObject).metadata === "object" && (v as KubeObject).metadata !== null;
}
