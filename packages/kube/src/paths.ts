/** API paths of the collections discovery reads. No namespace (or "") means all namespaces. */
export type ResourceName = "pods" | "services" | "endpointslices";

const API_PREFIX: Record<ResourceName, string> = {
  pods: "/api/v1",
  services: "/api/v1",
  endpointslices: "/apis/discovery.k8s.io/v1",
};

export function resourcePath(resource: ResourceName, namespace?: string): string {
  const prefix = API_PREFIX[resource];
  return namespace ? `${prefix}/namespaces/${encodeURIComponent(namespace)}/${resource}` : `${prefix}/${resource}`;
}

export const podsPath = (namespace?: string) => resourcePath("pods", namespace);
export const servicesPath = (namespace?: string) => resourcePath("services", namespace);
export const endpointSlicesPath = (namespace?: string) => resourcePath("endpointslices", namespace);

/** `{a: "1", b: "2"}` → `a=1,b=2`, the equality label selector the API server understands. */
export function labelSelector(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}
