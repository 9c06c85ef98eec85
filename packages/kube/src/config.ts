import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeError, errorText } from "./errors.ts";

/** Where a pod finds its service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface KubeConfigOptions {
  /** An explicit kubeconfig file; wins over in-cluster and the defaults. */
  kubeconfigPath?: string;
  /**
   * Prefix put before SERVICE_ACCOUNT_DIR (client-node's `loadFromCluster(pathPrefix)`);
   * tests point it at a temp dir holding `var/run/secrets/kubernetes.io/serviceaccount/*`.
   */
  inClusterRoot?: string;
  /** Use this kubeconfig context instead of `current-context`. */
  context?: string;
}

export type KubeConfigSource = "in-cluster" | "kubeconfig";

export interface LoadedKubeConfig {
  /** client-node's config: clusters, users, contexts and its auth providers. */
  readonly kubeConfig: KubeConfig;
  readonly source: KubeConfigSource;
  /** API server base URL without a trailing slash, e.g. `https://10.96.0.1:443`. */
  readonly server: string;
  /** The context's (or service account's) namespace, else `default`. */
  readonly namespace: string;
}

/**
 * Loads Kubernetes config with client-node: an explicit kubeconfig if given, else the
 * service-account files when running in a pod, else `KUBECONFIG` or ~/.kube/config.
 * Throws KubeError(reason "config") when none is usable or the config asks to skip TLS checks.
 */
export function loadKubeConfig(opts: KubeConfigOptions = {}): LoadedKubeConfig {
  const kc = new KubeConfig();
  let source: KubeConfigSource = "kubeconfig";
  try {
    if (opts.kubeconfigPath) {
      kc.loadFromFile(opts.kubeconfigPath);
    } else if (inClusterAvailable(opts.inClusterRoot ?? "")) {
      kc.loadFromCluster(opts.inClusterRoot ?? "");
      source = "in-cluster";
    } else if (defaultKubeconfigPresent()) {
      kc.loadFromDefault();
    } else {
      throw new Error(
        `no service-account token under ${(opts.inClusterRoot ?? "") + SERVICE_ACCOUNT_DIR} ` +
          "(with KUBERNETES_SERVICE_HOST), no KUBECONFIG and no ~/.kube/config",
      );
    }
    if (opts.context) kc.setCurrentContext(opts.context);
  } catch (err) {
    throw new KubeError("config", "config", errorText(err), undefined, { cause: err });
  }
  return describeKubeConfig(kc, source);
}

/** Wraps an already-built client-node KubeConfig (e.g. from `loadFromOptions`). */
export function describeKubeConfig(kc: KubeConfig, source: KubeConfigSource): LoadedKubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeError("config", "config", `context "${kc.getCurrentContext()}" names no cluster`);
  const server = cluster.server.replace(/\/+$/, "");
  let scheme: string;
  try {
    scheme = new URL(server).protocol;
  } catch {
    throw new KubeError("config", "config", `cluster ${cluster.name} has an invalid server URL "${cluster.server}"`);
  }
  // We never turn certificate checks off. Plain http (kubectl proxy) has none to turn off,
  // and client-node itself only allows it when the cluster entry says skipTLSVerify.
  if (scheme === "https:" && cluster.skipTLSVerify) {
    throw new KubeError(
      "config",
      "config",
      `cluster ${cluster.name} sets insecure-skip-tls-verify; give it certificate-authority(-data) instead`,
    );
  }
  if (scheme !== "https:" && scheme !== "http:") {
    throw new KubeError("config", "config", `cluster ${cluster.name} server must be https, got ${server}`);
  }
  if (cluster.proxyUrl && !/^https?:/.test(cluster.proxyUrl)) {
    throw new KubeError("config", "config", `cluster ${cluster.name}: only http(s) proxy-url is supported on Bun`);
  }
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace?.trim() || "default";
  return { kubeConfig: kc, source, server, namespace };
}

function inClusterAvailable(root: string): boolean {
  return Boolean(process.env.KUBERNETES_SERVICE_HOST) && existsSync(`${root}${SERVICE_ACCOUNT_DIR}/token`);
}

// Same lookup client-node's loadFromDefault does, minus its silent localhost:8080 fallback.
function defaultKubeconfigPresent(): boolean {
  if (process.env.KUBECONFIG) return true;
  const home = process.env.HOME || homedir();
  return existsSync(path.join(home, ".kube", "config"));
}
