import type { DesiredWorker } from "../types";
import { identity, list, optionalString, record } from "./object-fields";
import type { WorkerMapping } from "./options";
import { httpUrl, roleOf, workerFromMetadata } from "./worker-fields";

/** A worker for the object, or why there is none (for debug logs and tests). */
export type Verdict = { worker: DesiredWorker } | { none: string };

/**
 * pod-ip mode: a pod is a worker while Running, Ready and holding a podIP; a terminating one
 * (deletionTimestamp) is still listed, with `drain`, so its worker finishes in-flight requests.
 * Throws MalformedObjectError when the pod is not shaped like a pod.
 */
export function podWorker(pod: unknown, m: WorkerMapping): Verdict {
  const id = identity(pod);
  const status = record(record(pod, "pod").status, "status");
  // Read every field first: a misshapen pod is reported whatever it would have been.
  const ip = optionalString(status.podIP, "status.podIP");
  const phase = optionalString(status.phase, "status.phase");
  const ready = isReady(status);
  const role = roleOf(id.labels, m);
  if (!role) return { none: "matches neither the prefill nor the decode selector" };
  if (!ip) return { none: "no podIP" };
  const worker = workerFromMetadata(id, httpUrl(ip, m.port), role, m);
  if (id.terminating) return { worker };
  if (phase !== "Running") return { none: `phase ${phase ?? "unknown"}` };
  if (!ready) return { none: "not Ready" };
  return { worker };
}

function isReady(status: Record<string, unknown>): boolean {
  const conditions = list(status.conditions, "status.conditions");
  return conditions.some((c, i) => {
    const cond = record(c, `status.conditions[${i}]`);
    return cond.type === "Ready" && cond.status === "True";
  });
}
