import { identity, list, objectKey, optionalString, record, stringMap } from "./object-fields";
import type { WorkerMapping } from "./options";
import type { Verdict } from "./pod-worker";
import { httpUrl, roleOf, workerFromMetadata } from "./worker-fields";

/** EndpointSlices name their Service with this label. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/**
 * service-name mode, first half: the worker a Service would be if it were serving, URL
 * `http://NAME.NAMESPACE.svc:port`. Whether it serves is up to its EndpointSlices.
 */
export function serviceCandidate(service: unknown, m: WorkerMapping): Verdict {
  const id = identity(service);
  record(record(service, "service").spec, "spec");
  const role = roleOf(id.labels, m);
  if (!role) return { none: "matches neither the prefill nor the decode selector" };
  return { worker: workerFromMetadata(id, httpUrl(`${id.name}.${id.namespace}.svc`, m.port), role, m) };
}

/** What an EndpointSlice says about its Service: its key and whether any endpoint can take traffic. */
export interface SliceSummary {
  service: string;
  ready: boolean;
}

/** null for a slice that names no Service. Throws MalformedObjectError on a misshapen slice. */
export function sliceSummary(slice: unknown): SliceSummary | null {
  const obj = record(slice, "endpointslice");
  const meta = record(obj.metadata, "metadata");
  const name = stringMap(meta.labels, "metadata.labels")[SERVICE_NAME_LABEL];
  if (!name) return null;
  const namespace = optionalString(meta.namespace, "metadata.namespace") ?? "default";
  const ready = list(obj.endpoints, "endpoints").some((e, i) => {
    const ep = record(e, `endpoints[${i}]`);
    // The API says a missing `ready` means ready; only an explicit false keeps traffic away.
    return list(ep.addresses, `endpoints[${i}].addresses`).length > 0 && record(ep.conditions, `endpoints[${i}].conditions`).ready !== false;
  });
  return { service: objectKey(namespace, name), ready };
}

/** Keys (`namespace/name`) of the Services with at least one ready endpoint. */
export function servingServices(slices: Iterable<SliceSummary>): Set<string> {
  const serving = new Set<string>();
  for (const s of slices) if (s.ready) serving.add(s.service);
  return serving;
}

/**
 * Both halves for one Service: a worker while any of its slices has a ready endpoint (or, once
 * terminating, a draining one). A Service without slices — new, headless without pods,
 * ExternalName — simply has no worker.
 */
export function serviceWorker(service: unknown, slices: readonly unknown[], m: WorkerMapping): Verdict {
  const candidate = serviceCandidate(service, m);
  if (!("worker" in candidate)) return candidate;
  const summaries = slices.map(sliceSummary).filter((s): s is SliceSummary => s !== null);
  return decideService(identity(service).key, candidate, servingServices(summaries));
}

export function decideService(key: string, candidate: Verdict, serving: ReadonlySet<string>): Verdict {
  if (!("worker" in candidate)) return candidate;
  if (candidate.worker.drain) return candidate;
  return serving.has(key) ? candidate : { none: "no ready endpoint" };
}
