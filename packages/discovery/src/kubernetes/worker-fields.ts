import type { WorkerType } from "@switchboard/workers";
import type { DesiredWorker } from "../types";
import { MalformedObjectError, matchesSelector, type ObjectIdentity } from "./object-fields";
import type { WorkerMapping } from "./options";

/** Bumped by whoever changes an engine's LoRA adapters: the worker re-reads its models. */
export const LORA_MODIFIED_ANNOTATION = "lora-modified";
/** `sleeping=true`: the engine is in vLLM sleep mode and must not be routed to. */
export const SLEEPING_LABEL = "sleeping";
/** Where a prefill engine says its KV bootstrap port is (SGLang / vLLM Mooncake). */
export const BOOTSTRAP_PORT_ANNOTATIONS = ["sglang.ai/bootstrap-port", "vllm.ai/bootstrap-port"] as const;

/** The object's PD role, or null when PD selectors are set and it matches neither. */
export function roleOf(labels: Record<string, string>, m: WorkerMapping): WorkerType | null {
  if (!m.prefillSelector && !m.decodeSelector) return "regular";
  if (matchesSelector(labels, m.prefillSelector)) return "prefill";
  if (matchesSelector(labels, m.decodeSelector)) return "decode";
  return null;
}

export function bootstrapPortOf(annotations: Record<string, string>): number | undefined {
  for (const name of BOOTSTRAP_PORT_ANNOTATIONS) {
    const raw = annotations[name];
    if (raw === undefined) continue;
    const port = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || port < 1 || port > 65535) {
      throw new MalformedObjectError(`annotation ${name}="${raw}" is not a port number`);
    }
    return port;
  }
  return undefined;
}

/** `http://host:port`, with brackets around an IPv6 address. */
export function httpUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Everything about a worker that comes from the object's metadata, the same for pods and Services. */
export function workerFromMetadata(id: ObjectIdentity, url: string, workerType: WorkerType, m: WorkerMapping): DesiredWorker {
  const modelId = m.modelLabel ? id.labels[m.modelLabel] || undefined : undefined;
  const bootstrapPort = workerType === "prefill" ? bootstrapPortOf(id.annotations) : undefined;
  const modelsVersion = id.annotations[LORA_MODIFIED_ANNOTATION];
  return {
    url,
    connectionMode: "http",
    workerType,
    labels: id.labels,
    priority: 0,
    source: m.source,
    // The uid, not the name or address: a replacement under the same name or IP is a new worker.
    sourceKey: id.uid,
    sleeping: id.labels[SLEEPING_LABEL] === "true",
    ...(modelId ? { modelId } : {}),
    ...(bootstrapPort !== undefined ? { bootstrapPort } : {}),
    ...(modelsVersion !== undefined ? { modelsVersion } : {}),
    ...(id.terminating ? { drain: true } : {}),
  };
}
