import { endpointSlicesPath, labelSelector, podsPath, servicesPath, type ResourceName } from "@switchboard/kube";
import type { DesiredWorker, SourceStatus } from "../types";
import type { KubeDiscoveryMode, LabelSelector, WorkerMapping } from "./options";
import { podWorker } from "./pod-worker";
import { decideService, serviceCandidate, servingServices, sliceSummary, type SliceSummary } from "./service-worker";

/** What the discovery actor keeps per resource: object key (`namespace/name`) → its projection. */
export type Entries = Record<string, Record<string, unknown>>;

/** One collection the actor lists and watches. */
export interface Collection {
  resource: ResourceName;
  path: string;
  labelSelector?: string;
  /**
   * What to keep of one object: small, so snapshots stay small. null: nothing worth keeping.
   * Throws MalformedObjectError for an object that is not shaped as promised.
   */
  project(obj: unknown): unknown | null;
}

/** A discovery mode: which collections to follow, and how their projections become workers. */
export interface DiscoveryPlan {
  kind: SourceStatus["kind"];
  collections: Collection[];
  desired(entries: Entries): DesiredWorker[];
}

export interface PlanOptions {
  mode: KubeDiscoveryMode;
  namespace: string;
  /** `--selector`: narrows pods (pod-ip) or Services (service-name) on the API server. */
  selector: LabelSelector;
  mapping: WorkerMapping;
}

export function discoveryPlan(o: PlanOptions): DiscoveryPlan {
  const selector = Object.keys(o.selector).length > 0 ? labelSelector(o.selector) : undefined;
  return o.mode === "pod-ip" ? podPlan(o, selector) : servicePlan(o, selector);
}

const bySourceKey = (a: DesiredWorker, b: DesiredWorker) => (a.sourceKey < b.sourceKey ? -1 : a.sourceKey > b.sourceKey ? 1 : 0);

function podPlan(o: PlanOptions, selector?: string): DiscoveryPlan {
  return {
    kind: "k8s-pods",
    collections: [
      {
        resource: "pods",
        path: podsPath(o.namespace),
        labelSelector: selector,
        project: (pod) => {
          const v = podWorker(pod, o.mapping);
          return "worker" in v ? v.worker : null;
        },
      },
    ],
    desired: (entries) => Object.values(entries.pods ?? {}).map((w) => w as DesiredWorker).sort(bySourceKey),
  };
}

function servicePlan(o: PlanOptions, selector?: string): DiscoveryPlan {
  return {
    kind: "k8s-services",
    collections: [
      {
        resource: "services",
        path: servicesPath(o.namespace),
        labelSelector: selector,
        project: (svc) => {
          const v = serviceCandidate(svc, o.mapping);
          return "worker" in v ? v.worker : null;
        },
      },
      // Every slice of the namespace: a Service's slices carry its name, not its labels.
      { resource: "endpointslices", path: endpointSlicesPath(o.namespace), project: sliceSummary },
    ],
    desired: (entries) => {
      const serving = servingServices(Object.values(entries.endpointslices ?? {}) as SliceSummary[]);
      const out: DesiredWorker[] = [];
      for (const [key, worker] of Object.entries(entries.services ?? {})) {
        const v = decideService(key, { worker: worker as DesiredWorker }, serving);
        if ("worker" in v) out.push(v.worker);
      }
      return out.sort(bySourceKey);
    },
  };
}
