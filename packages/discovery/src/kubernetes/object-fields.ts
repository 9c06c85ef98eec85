import type { LabelSelector } from "./options";

/**
 * An object whose shape is not what the API promises. Mapping throws it; the discovery loop
 * catches it per object, logs it and leaves that object out, so the others are unaffected.
 */
export class MalformedObjectError extends Error {
  override name = "MalformedObjectError";
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `v` as a record, `{}` when absent, or a MalformedObjectError naming `what`. */
export function record(v: unknown, what: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) throw new MalformedObjectError(`${what} is not an object`);
  return v;
}

/** Labels or annotations: string → string, or a MalformedObjectError. */
export function stringMap(v: unknown, what: string): Record<string, string> {
  const r = record(v, what);
  for (const [k, x] of Object.entries(r)) {
    if (typeof x !== "string") throw new MalformedObjectError(`${what}["${k}"] is not a string`);
  }
  return { ...(r as Record<string, string>) };
}

export function optionalString(v: unknown, what: string): string | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new MalformedObjectError(`${what} is not a string`);
  return v;
}

export function list(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new MalformedObjectError(`${what} is not a list`);
  return v;
}

export interface ObjectIdentity {
  namespace: string;
  name: string;
  uid: string;
  /** `namespace/name`: unique among live objects of one kind. */
  key: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  terminating: boolean;
}

/** The metadata every mapping needs, validated. */
export function identity(obj: unknown): ObjectIdentity {
  const meta = record(record(obj, "object").metadata, "metadata");
  const name = optionalString(meta.name, "metadata.name");
  const uid = optionalString(meta.uid, "metadata.uid");
  if (!name) throw new MalformedObjectError("metadata.name is missing");
  if (!uid) throw new MalformedObjectError(`${name}: metadata.uid is missing`);
  const namespace = optionalString(meta.namespace, "metadata.namespace") ?? "default";
  return {
    namespace,
    name,
    uid,
    key: objectKey(namespace, name),
    labels: stringMap(meta.labels, "metadata.labels"),
    annotations: stringMap(meta.annotations, "metadata.annotations"),
    terminating: optionalString(meta.deletionTimestamp, "metadata.deletionTimestamp") !== undefined,
  };
}

export const objectKey = (namespace: string, name: string) => `${namespace}/${name}`;

/** The cache key of any object (DELETED events need only this much to be applied). */
export function keyOf(obj: unknown): string {
  const meta = record(record(obj, "object").metadata, "metadata");
  const name = optionalString(meta.name, "metadata.name");
  if (!name) throw new MalformedObjectError("metadata.name is missing");
  return objectKey(optionalString(meta.namespace, "metadata.namespace") ?? "default", name);
}

export function matchesSelector(labels: Record<string, string>, selector: LabelSelector | undefined): boolean {
  if (!selector) return false;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** `--selector a=1 b=2` → `{a: "1", b: "2"}`; throws on anything but `key=value`. */
export function parseSelector(args: readonly string[]): LabelSelector {
  const out: LabelSelector = {};
  for (const arg of args) {
    for (const part of arg.split(",")) {
      const m = /^([A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?)=([-A-Za-z0-9_.]*)$/.exec(part.trim());
      if (!m) throw new Error(`'${part}' is not a label selector of the form key=value`);
      out[m[1]!] = m[3]!;
    }
  }
  return out;
}
