import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type FakeKubeApi, createTestPki, makePod, startFakeKubeApi, writeKubeconfig, type TestPki } from "@switchboard/testkit";
import { KubeError, ListError, list, loadKubeClient, podsPath, SERVICE_ACCOUNT_DIR } from "../src/index.ts";
import { rejection } from "./helpers.ts";

let pki: TestPki;
let api: FakeKubeApi;
const scratch = mkdtempSync(path.join(tmpdir(), "kube-config-test-"));

beforeAll(async () => {
  pki = createTestPki();
  api = await startFakeKubeApi({ pki, namespace: "serving" });
  api.createPod(makePod({ name: "engine-0", ip: "10.1.0.1", labels: { app: "vllm" } }));
});

afterAll(async () => {
  await api.close();
  pki.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const lastAuth = () => api.requests[api.requests.length - 1]?.auth;

describe("kubeconfig over TLS", () => {
  test("CA data and client certificate from a kubeconfig authenticate by certificate", async () => {
    const client = loadKubeClient({ kubeconfigPath: api.kubeconfig({ auth: "cert" }) });
    expect(client.source).toBe("kubeconfig");
    expect(client.server).toBe(api.url);
    expect(client.namespace).toBe("serving");
    const pods = await list(client, podsPath(client.namespace));
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(["engine-0"]);
    expect(lastAuth()).toBe("cert");
  });

  test("file paths relative to the kubeconfig are resolved", async () => {
    const dir = path.join(scratch, "files");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "ca.pem"), pki.caCert);
    writeFileSync(path.join(dir, "client.pem"), pki.clientCert);
    writeFileSync(path.join(dir, "client-key.pem"), pki.clientKey);
    const file = writeKubeconfig({
      server: api.url,
      caFile: "ca.pem",
      certFile: "client.pem",
      keyFile: "client-key.pem",
      path: path.join(dir, "config"),
    });
    const client = loadKubeClient({ kubeconfigPath: file });
    await list(client, podsPath("serving"));
    expect(lastAuth()).toBe("cert");
  });

  test("a bearer token from the kubeconfig is sent", async () => {
    const client = loadKubeClient({ kubeconfigPath: api.kubeconfig({ auth: "token" }) });
    const pods = await list(client, podsPath("serving"));
    expect(pods.items).toHaveLength(1);
    expect(lastAuth()).toBe("token");
  });

  test("KUBECONFIG is used when no path is given", async () => {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = api.kubeconfig({ auth: "token" });
    try {
      const client = loadKubeClient();
      expect(client.source).toBe("kubeconfig");
      await list(client, podsPath("serving"));
      expect(lastAuth()).toBe("token");
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  test("a server certificate from another CA is rejected: verification is on", async () => {
    const client = loadKubeClient({ kubeconfigPath: api.kubeconfig({ auth: "token", ca: pki.otherCaCert }) });
    const before = api.requests.length;
    const err = await rejection(list(client, podsPath("serving")));
    expect(err).toBeInstanceOf(ListError);
    expect((err as ListError).reason).toBe("tls");
    expect(api.requests.length).toBe(before); // nothing reached the handler
  });

  test("no credentials, or a client cert from an untrusted CA, get 401", async () => {
    const anonymous = loadKubeClient({ kubeconfigPath: api.kubeconfig({ auth: "none" }) });
    const e1 = (await rejection(list(anonymous, podsPath("serving")))) as ListError;
    expect([e1.reason, e1.status]).toEqual(["unauthorized", 401]);

    const intruder = loadKubeClient({
      kubeconfigPath: writeKubeconfig({
        server: api.url,
        ca: pki.caCert,
        cert: pki.otherClientCert,
        key: pki.otherClientKey,
        path: path.join(scratch, "intruder"),
      }),
    });
    const e2 = (await rejection(list(intruder, podsPath("serving")))) as ListError;
    expect([e2.reason, e2.status]).toEqual(["unauthorized", 401]);
  });

  test("insecure-skip-tls-verify is refused, not honoured", () => {
    const file = path.join(scratch, "insecure");
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${api.url}\n    insecure-skip-tls-verify: true\n` +
        `users:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n`,
    );
    let err: unknown;
    try {
      loadKubeClient({ kubeconfigPath: file });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).reason).toBe("config");
  });

  test("a missing kubeconfig file is a config error", () => {
    expect(() => loadKubeClient({ kubeconfigPath: path.join(scratch, "nope") })).toThrow(KubeError);
  });
});

describe("in-cluster service account", () => {
  test("token, CA and namespace files plus KUBERNETES_SERVICE_HOST/PORT", async () => {
    const root = path.join(scratch, "pod-root");
    const sa = path.join(root, SERVICE_ACCOUNT_DIR);
    mkdirSync(sa, { recursive: true });
    writeFileSync(path.join(sa, "token"), api.token);
    writeFileSync(path.join(sa, "ca.crt"), pki.caCert);
    writeFileSync(path.join(sa, "namespace"), "serving\n");
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = "127.0.0.1";
    process.env.KUBERNETES_SERVICE_PORT = String(api.port);
    try {
      const client = loadKubeClient({ inClusterRoot: root });
      expect(client.source).toBe("in-cluster");
      expect(client.namespace).toBe("serving");
      expect(client.server).toBe(api.url);
      const pods = await list(client, podsPath(client.namespace));
      expect(pods.items.map((p) => p.metadata?.name)).toEqual(["engine-0"]);
      expect(lastAuth()).toBe("token");

      // The in-cluster CA is what makes the server trusted.
      writeFileSync(path.join(sa, "ca.crt"), pki.otherCaCert);
      const err = (await rejection(list(loadKubeClient({ inClusterRoot: root }), podsPath("serving")))) as ListError;
      expect(err.reason).toBe("tls");
    } finally {
      for (const [k, v] of [["KUBERNETES_SERVICE_HOST", saved.host], ["KUBERNETES_SERVICE_PORT", saved.port]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  test("without KUBERNETES_SERVICE_HOST the service-account files are not used", () => {
    const root = path.join(scratch, "pod-root");
    const saved = process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_HOST;
    const savedKc = process.env.KUBECONFIG;
    process.env.KUBECONFIG = api.kubeconfig({ auth: "token" });
    try {
      expect(loadKubeClient({ inClusterRoot: root }).source).toBe("kubeconfig");
    } finally {
      if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
      if (savedKc === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = savedKc;
    }
  });
});
