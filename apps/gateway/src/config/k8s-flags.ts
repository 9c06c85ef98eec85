import { InvalidArgumentError, Option, type Command } from "commander";
import { parseSelector, type KubernetesDiscoveryOptions } from "@switchboard/discovery";

/** `k=v [k=v ...]` (also `k=v,k2=v2`), accumulated over repeats. */
function selectorArg(flag: string) {
  return (v: string, prev: string[] = []) => {
    try {
      parseSelector([v]);
    } catch (e) {
      throw new InvalidArgumentError(`${flag}: ${(e as Error).message}`);
    }
    return [...prev, v];
  };
}

function portArg(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError(`--service-discovery-port must be 1..65535, got '${v}'`);
  return n;
}

/** Kubernetes discovery (`--service-discovery`): pods or Services become workers. */
export function addKubernetesOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--service-discovery", "discover workers from Kubernetes (pods or Services), reconciled on every reconnect").default(false))
    .addOption(new Option("--service-discovery-namespace <ns>", "namespace to watch (default: the kubeconfig context's, or the pod's own in-cluster)"))
    .addOption(new Option("--selector <k=v...>", "label selector for engine pods (pod-ip) or Services (service-name)").default([]).argParser(selectorArg("--selector")))
    .addOption(new Option("--service-discovery-port <port>", "engine port on each discovered pod or Service").default(8000).argParser(portArg))
    .addOption(new Option("--k8s-discovery-mode <mode>", "pod-ip: http://podIP:port per Ready pod; service-name: http://NAME.NAMESPACE.svc:port per Service with ready endpoints").choices(["pod-ip", "service-name"]).default("pod-ip"))
    .addOption(new Option("--model-label <label>", "pod/Service label carrying the model id (else the engine's /v1/models is used)"))
    .addOption(new Option("--prefill-selector <k=v...>", "PD: labels of prefill pods/Services (needs --pd-disaggregation)").default([]).argParser(selectorArg("--prefill-selector")))
    .addOption(new Option("--decode-selector <k=v...>", "PD: labels of decode pods/Services (needs --pd-disaggregation)").default([]).argParser(selectorArg("--decode-selector")))
    .addOption(new Option("--kubeconfig <path>", "kubeconfig file (default: in-cluster service account, else KUBECONFIG or ~/.kube/config)"));
}

/** Discovery flags without --service-discovery, or PD selectors without PD, are refused rather than ignored. */
export function checkKubernetes(o: Record<string, any>): string | null {
  if (!o.serviceDiscovery) {
    const stray = [
      o.serviceDiscoveryNamespace !== undefined && "--service-discovery-namespace",
      o.selector.length && "--selector",
      o.modelLabel !== undefined && "--model-label",
      o.prefillSelector.length && "--prefill-selector",
      o.decodeSelector.length && "--decode-selector",
      o.kubeconfig !== undefined && "--kubeconfig",
    ].filter(Boolean);
    return stray.length ? `${stray[0]} needs --service-discovery` : null;
  }
  if ((o.prefillSelector.length || o.decodeSelector.length) && !o.pdDisaggregation) {
    return `${o.prefillSelector.length ? "--prefill-selector" : "--decode-selector"} needs --pd-disaggregation`;
  }
  return null;
}

export function kubernetesConfig(o: Record<string, any>): KubernetesDiscoveryOptions | undefined {
  if (!o.serviceDiscovery) return undefined;
  const selector = (args: string[]) => (args.length ? parseSelector(args) : undefined);
  return {
    mode: o.k8sDiscoveryMode,
    namespace: o.serviceDiscoveryNamespace,
    selector: selector(o.selector) ?? {},
    port: o.serviceDiscoveryPort,
    modelLabel: o.modelLabel,
    prefillSelector: selector(o.prefillSelector),
    decodeSelector: selector(o.decodeSelector),
    kubeconfigPath: o.kubeconfig,
  };
}
