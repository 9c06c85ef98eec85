import { randomUUID } from "node:crypto";

/** A Kubernetes object as JSON. Loose on purpose: tests build and mutate them freely. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    creationTimestamp?: string;
    [key: string]: unknown;
  };
  // Fixtures reach into spec/status/endpoints freely.
  [key: string]: any;
}

export interface PodFixture {
  name: string;
  ip?: string;
  /** Ready condition; default true. */
  ready?: boolean;
  /** Default "Running". */
  phase?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  deletionTimestamp?: string;
  namespace?: string;
  containerPort?: number;
}

export function makePod(p: PodFixture): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: p.name,
      ...(p.namespace ? { namespace: p.namespace } : {}),
      uid: p.uid ?? randomUUID(),
      labels: { ...p.labels },
      annotations: { ...p.annotations },
      ...(p.deletionTimestamp ? { deletionTimestamp: p.deletionTimestamp } : {}),
    },
    spec: {
      containers: [{ name: "engine", image: "vllm/vllm-openai", ports: [{ containerPort: p.containerPort ?? 8000 }] }],
    },
    status: {
      phase: p.phase ?? "Running",
      ...(p.ip ? { podIP: p.ip, podIPs: [{ ip: p.ip }] } : {}),
      conditions: [{ type: "Ready", status: (p.ready ?? true) ? "True" : "False" }],
    },
  };
}

export interface ServiceFixture {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Pod selector; default { app: name }. */
  selector?: Record<string, string>;
  port?: number;
  /** Default "ClusterIP". */
  type?: "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName";
  /** "None" makes it headless. */
  clusterIP?: string;
  externalName?: string;
  uid?: string;
}

export function makeService(s: ServiceFixture): KubeObject {
  const type = s.type ?? "ClusterIP";
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: s.name,
      ...(s.namespace ? { namespace: s.namespace } : {}),
      uid: s.uid ?? randomUUID(),
      labels: { ...s.labels },
      annotations: { ...s.annotations },
    },
    spec:
      type === "ExternalName"
        ? { type, externalName: s.externalName ?? `${s.name}.example.invalid` }
        : {
            type,
            clusterIP: s.clusterIP ?? "10.96.0.10",
            selector: s.selector ?? { app: s.name },
            ports: [{ name: "http", port: s.port ?? 8000, targetPort: s.port ?? 8000, protocol: "TCP" }],
          },
  };
}

export interface EndpointFixture {
  ip: string;
  /** Default true. */
  ready?: boolean;
  terminating?: boolean;
  podName?: string;
}

export interface EndpointSliceFixture {
  name: string;
  serviceName: string;
  namespace?: string;
  endpoints?: EndpointFixture[];
  port?: number;
  uid?: string;
}

export function makeEndpointSlice(e: EndpointSliceFixture): KubeObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: e.name,
      ...(e.namespace ? { namespace: e.namespace } : {}),
      uid: e.uid ?? randomUUID(),
      labels: { "kubernetes.io/service-name": e.serviceName, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io" },
    },
    addressType: "IPv4",
    endpoints: (e.endpoints ?? []).map((ep) => ({
      addresses: [ep.ip],
      conditions: { ready: ep.ready ?? true, serving: ep.ready ?? true, terminating: ep.terminating ?? false },
      ...(ep.podName ? { targetRef: { kind: "Pod", name: ep.podName } } : {}),
    })),
    ports: [{ name: "http", port: e.port ?? 8000, protocol: "TCP" }],
  };
}
