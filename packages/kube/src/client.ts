import type { RequestOptions } from "node:https";
import { bufferFromFileOrString } from "@kubernetes/client-node";
import { loadKubeConfig, type KubeConfigOptions, type LoadedKubeConfig } from "./config.ts";
import { KubeError, classifyFetchError, errorText } from "./errors.ts";
import { raceAbort } from "./abort.ts";

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface KubeFetchOptions {
  signal?: AbortSignal;
  /**
   * Deadline for the whole exchange, body included (default 30 s). `Infinity` only for
   * streams the caller bounds itself through `signal` (the watch does).
   */
  timeoutMs?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface KubeClient extends LoadedKubeConfig {
  /**
   * GET (or `method`) `server + path` with the config's CA, client certificate/key and
   * auth header, via Bun's fetch. Resolves with any HTTP status; throws KubeError with
   * reason connect | tls | timeout | aborted | config.
   */
  kubeFetch(path: string, opts?: KubeFetchOptions): Promise<Response>;
}

export function loadKubeClient(opts: KubeConfigOptions = {}): KubeClient {
  return createKubeClient(loadKubeConfig(opts));
}

export function createKubeClient(loaded: LoadedKubeConfig): KubeClient {
  return { ...loaded, kubeFetch: (path, opts) => kubeFetch(loaded, path, opts) };
}

async function kubeFetch(loaded: LoadedKubeConfig, path: string, opts: KubeFetchOptions = {}): Promise<Response> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const deadline = Number.isFinite(timeoutMs) ? AbortSignal.timeout(timeoutMs) : undefined;
  const signals = [opts.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;

  try {
    // Auth providers (exec plugins, OIDC refresh) may take time: the deadline covers them too.
    const pending = connectionInit(loaded).catch((err) => {
      throw err instanceof KubeError ? err : new KubeError("request", "config", errorText(err), undefined, { cause: err });
    });
    const init = signal ? await raceAbort(pending, signal) : await pending;
    const headers = { accept: "application/json", ...(init.headers as Record<string, string>), ...opts.headers };
    const request = fetch(loaded.server + path, {
      ...init,
      method: opts.method ?? "GET",
      headers,
      body: opts.body,
      signal,
      // Streams bounded by the caller keep Bun's own 5-minute idle timer out of the way.
      ...(deadline ? {} : { timeout: false }),
    });
    // Race too: an abort must settle us even if the socket layer is slow to notice it.
    return signal ? await raceAbort(request, signal) : await request;
  } catch (err) {
    if (err instanceof KubeError) throw err;
    if (deadline?.aborted) throw new KubeError("request", "timeout", `no response within ${timeoutMs} ms`, undefined, { cause: err });
    if (opts.signal?.aborted) throw new KubeError("request", "aborted", "aborted by caller", undefined, { cause: err });
    throw new KubeError("request", classifyFetchError(err), errorText(err), undefined, { cause: err });
  }
}

/**
 * The seam: client-node computes TLS material and auth headers (tokens, token files that
 * rotate, exec and OIDC providers, client certs) into https options meant for its undici
 * dispatcher, which Bun ignores. We hand the same material to Bun's fetch `tls` instead.
 */
async function connectionInit(loaded: LoadedKubeConfig): Promise<BunFetchRequestInit> {
  const kc = loaded.kubeConfig;
  const opts: RequestOptions & { headers: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers)) if (v !== undefined) headers[k] = String(v);
  if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString("base64")}`;

  const cluster = kc.getCurrentCluster();
  const proxy = cluster?.proxyUrl ? { proxy: cluster.proxyUrl } : {};
  if (loaded.server.startsWith("http:")) return { headers, ...proxy };
  if (opts.rejectUnauthorized === false) {
    throw new KubeError("request", "config", "config asks to skip TLS verification; refused");
  }
  // client-node skips the CA when the context has no user; the cluster's CA still applies.
  const ca = opts.ca ?? bufferFromFileOrString(cluster?.caFile, cluster?.caData) ?? undefined;
  const tls: BunFetchRequestInitTLS = { rejectUnauthorized: true };
  if (ca) tls.ca = ca as Buffer;
  if (opts.cert) tls.cert = opts.cert as Buffer;
  if (opts.key) tls.key = opts.key as Buffer;
  if (opts.passphrase) tls.passphrase = opts.passphrase;
  if (opts.servername) tls.serverName = opts.servername;
  return { headers, tls, ...proxy };
}
