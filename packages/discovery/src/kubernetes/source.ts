import { loadKubeClient, type KubeClient } from "@switchboard/kube";
import { KubeAccess } from "./kube-actors";
import { kubernetesDiscovery, type KubeDiscoveryInput } from "./machine";
import { silentLogger, type DiscoveryLogger, type DiscoveryTiming, type KubeDiscoveryMode, type LabelSelector } from "./options";
import { discoveryPlan } from "./plan";

/** The `--service-discovery*` flags, as the gateway config carries them. */
export interface KubernetesDiscoveryOptions {
  mode: KubeDiscoveryMode;
  /** Default: the kubeconfig context's namespace, or the pod's own namespace in-cluster. */
  namespace?: string;
  /** `--selector`: which pods (pod-ip) or Services (service-name) are engines. */
  selector: LabelSelector;
  /** The engines' port. */
  port: number;
  modelLabel?: string;
  prefillSelector?: LabelSelector;
  decodeSelector?: LabelSelector;
  /** `--kubeconfig`: wins over in-cluster and KUBECONFIG / ~/.kube/config. */
  kubeconfigPath?: string;
  /** Not a flag: tests shrink the loop's bounds. */
  timing?: Partial<DiscoveryTiming>;
}

export interface KubernetesSourceDeps {
  log?: DiscoveryLogger;
  /** Default: loaded from the options (in-cluster, else kubeconfig). */
  client?: KubeClient;
  random?: () => number;
}

/**
 * A discovery source for the fleet (`{ id, logic, input }`, the fleet's SourceConfig). Loads the
 * Kubernetes config now, so a missing or unsafe config fails start-up (KubeError reason "config").
 */
export function kubernetesSource(o: KubernetesDiscoveryOptions, deps: KubernetesSourceDeps = {}) {
  const client = deps.client ?? loadKubeClient({ kubeconfigPath: o.kubeconfigPath });
  const namespace = o.namespace || client.namespace;
  const source = `${o.mode === "pod-ip" ? "k8s-pods" : "k8s-services"}:${namespace}`;
  const plan = discoveryPlan({
    mode: o.mode,
    namespace,
    selector: o.selector,
    mapping: { source, port: o.port, modelLabel: o.modelLabel, prefillSelector: o.prefillSelector, decodeSelector: o.decodeSelector },
  });
  const input: KubeDiscoveryInput = { source, access: new KubeAccess(client, deps.log ?? silentLogger), plan, timing: o.timing, random: deps.random };
  return { id: source, logic: kubernetesDiscovery, input };
}
