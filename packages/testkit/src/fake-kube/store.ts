import { randomUUID } from "node:crypto";
import type { KubeObject } from "../kube-objects.ts";

export type FakeResource = "pods" | "services" | "endpointslices";

export const RESOURCE_KINDS: Record<FakeResource, { kind: string; apiVersion: string }> = {
  pods: { kind: "Pod", apiVersion: "v1" },
  services: { kind: "Service", apiVersion: "v1" },
  endpointslices: { kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1" },
};

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

/** One write, as etcd would record it: the object after, and before for MODIFIED/DELETED. */
export interface Change {
  rv: number;
  resource: FakeResource;
  type: ChangeType;
  object: KubeObject;
  prev?: KubeObject;
}

export class ExpiredError extends Error {}

const key = (namespace: string, name: string) => `${namespace}/${name}`;

/**
 * The fake API server's storage: one resourceVersion counter across all resources, the
 * current objects, and the history of changes since the last compaction.
 */
export class FakeStore {
  /** resourceVersion of the latest change. */
  rv = 1;
  /** History before this point is gone: watching or continuing from older versions gets 410. */
  compactedRv = 1;
  private readonly objects = new Map<FakeResource, Map<string, KubeObject>>(
    (Object.keys(RESOURCE_KINDS) as FakeResource[]).map((r) => [r, new Map()]),
  );
  private history: Change[] = [];
  private readonly listeners = new Set<(c: Change) => void>();

  constructor(private readonly defaultNamespace: string) {}

  onChange(fn: (c: Change) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get(resource: FakeResource, name: string, namespace = this.defaultNamespace): KubeObject | undefined {
    const obj = this.objects.get(resource)!.get(key(namespace, name));
    return obj && structuredClone(obj);
  }

  /** Current objects, sorted by namespace/name. */
  current(resource: FakeResource): KubeObject[] {
    return sortByKey([...this.objects.get(resource)!.values()]).map((o) => structuredClone(o));
  }

  create(resource: FakeResource, input: KubeObject): KubeObject {
    const namespace = input.metadata.namespace ?? this.defaultNamespace;
    const k = key(namespace, input.metadata.name);
    if (this.objects.get(resource)!.has(k)) throw new Error(`${resource} ${k} already exists`);
    const obj = structuredClone(input);
    obj.kind = RESOURCE_KINDS[resource].kind;
    obj.apiVersion = RESOURCE_KINDS[resource].apiVersion;
    obj.metadata.namespace = namespace;
    obj.metadata.uid ??= randomUUID();
    obj.metadata.creationTimestamp ??= new Date().toISOString();
    return this.commit(resource, "ADDED", obj);
  }

  /** The mutator gets a copy; it may edit it in place or return a replacement. */
  update(
    resource: FakeResource,
    name: string,
    mutate: (obj: KubeObject) => KubeObject | void,
    namespace = this.defaultNamespace,
  ): KubeObject {
    const prev = this.objects.get(resource)!.get(key(namespace, name));
    if (!prev) throw new Error(`${resource} ${namespace}/${name} not found`);
    const draft = structuredClone(prev);
    const next = mutate(draft) ?? draft;
    // Identity is the server's, not the mutator's.
    next.kind = prev.kind;
    next.apiVersion = prev.apiVersion;
    next.metadata = { ...next.metadata, name, namespace, uid: prev.metadata.uid };
    return this.commit(resource, "MODIFIED", next, prev);
  }

  delete(resource: FakeResource, name: string, namespace = this.defaultNamespace): KubeObject | undefined {
    const prev = this.objects.get(resource)!.get(key(namespace, name));
    if (!prev) return undefined;
    return this.commit(resource, "DELETED", structuredClone(prev), prev);
  }

  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  /** Changes to `resource` after `rv`; throws ExpiredError if they were compacted away. */
  changesSince(resource: FakeResource, rv: number): Change[] {
    if (rv < this.compactedRv) throw new ExpiredError(`too old resource version: ${rv} (${this.compactedRv})`);
    return this.history.filter((c) => c.resource === resource && c.rv > rv);
  }

  /** The objects as they were at `rv` (for consistent pagination): undo later changes. */
  snapshotAt(resource: FakeResource, rv: number): KubeObject[] {
    const later = this.changesSince(resource, rv);
    const state = new Map(this.objects.get(resource)!);
    for (const c of later.reverse()) {
      const k = key(c.object.metadata.namespace!, c.object.metadata.name);
      if (c.type === "ADDED") state.delete(k);
      else state.set(k, c.prev!);
    }
    return sortByKey([...state.values()]).map((o) => structuredClone(o));
  }

  private commit(resource: FakeResource, type: ChangeType, obj: KubeObject, prev?: KubeObject): KubeObject {
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    const objects = this.objects.get(resource)!;
    const k = key(obj.metadata.namespace!, obj.metadata.name);
    if (type === "DELETED") objects.delete(k);
    else objects.set(k, obj);
    const change: Change = { rv: this.rv, resource, type, object: obj, prev };
    this.history.push(change);
    for (const fn of this.listeners) fn(change);
    return structuredClone(obj);
  }
}

export const objectKey = (o: KubeObject) => key(o.metadata.namespace ?? "", o.metadata.name);

function sortByKey(objs: KubeObject[]): KubeObject[] {
  return objs.sort((a, b) => (objectKey(a) < objectKey(b) ? -1 : objectKey(a) > objectKey(b) ? 1 : 0));
}
