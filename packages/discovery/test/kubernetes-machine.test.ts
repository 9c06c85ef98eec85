import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { type FakeKubeApi, makeEndpointSlice, makePod, makeService, startFakeKubeApi, waitFor } from "@switchboard/testkit";
import { fastTiming, runDiscovery } from "./helpers";

const NS = "serving";
let api: FakeKubeApi;
let kubeconfig: string;
const running: { stop(): void }[] = [];

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: NS });
  kubeconfig = api.kubeconfig();
});

afterEach(async () => {
  for (const r of running.splice(0)) r.stop();
  await api.setBlind(false);
  api.onRequest = null;
  api.setGoneMode("http");
  await waitFor(() => api.openWatchCount === 0, { message: "watches of the previous test closed" });
  for (const p of api.pods()) api.deletePod(p.metadata.name, p.metadata.namespace);
  for (const s of api.services()) api.deleteService(s.metadata.name, s.metadata.namespace);
  for (const s of api.endpointSlices()) api.deleteEndpointSlice(s.metadata.name, s.metadata.namespace);
});

afterAll(() => api.close());

function start(opts: Parameters<typeof runDiscovery>[0] = { kubeconfigPath: kubeconfig }) {
  const d = runDiscovery({ namespace: NS, ...opts });
  running.push(d);
  return d;
}

describe("kubernetes discovery actor (pod-ip)", () => {
  test("lists, announces the whole set, then follows the watch; status says connected with the sync time", async () => {
    api.createPod(makePod({ name: "a", ip: "10.0.0.1", labels: { app: "llm" } }));
    api.createPod(makePod({ name: "other", ip: "10.0.0.9", labels: { app: "web" } }));
    const d = start({ kubeconfigPath: kubeconfig, selector: { app: "llm" } });
    await waitFor(() => d.urls()?.length === 1, { message: "first desired set" });
    expect(d.source).toBe(`k8s-pods:${NS}`);
    await waitFor(() => d.status()?.connected === true);
    const s = d.status()!;
    expect(s).toMatchObject({ source: d.source, kind: "k8s-pods", connected: true, workers: 1, reconnects: 0, lastError: null });
    expect(s.lastSyncAt).toBeNumber();
    // The selector went to the API server.
    expect(api.requests.some((r) => r.kind === "list" && r.query.includes("labelSelector=app%3Dllm"))).toBe(true);

    await waitFor(() => api.openWatchCount === 1, { message: "watch open" });
    api.createPod(makePod({ name: "b", ip: "10.0.0.2", labels: { app: "llm" } }));
    await waitFor(() => d.urls()?.join() === "http://10.0.0.1:8000,http://10.0.0.2:8000", { message: "b through the watch" });
    expect(d.status()!.workers).toBe(2);
  });

  test("a watch that cannot connect is logged with its reason and shown in the status; it comes back by itself", async () => {
    api.createPod(makePod({ name: "a", ip: "10.0.0.1" }));
    const d = start();
    await waitFor(() => d.status()?.connected === true);
    await api.setBlind(true);
    await waitFor(() => d.status()?.connected === false, { message: "disconnected" });
    await waitFor(() => d.log.lines.some((l) => l.level === "warn" && l.message === "kubernetes list failed" && l.fields.reason === "connect"), {
      message: "list failure logged with reason connect",
    });
    // The cut watch itself: a broken stream (warn, with its reason) or, depending on timing, a clean end.
    expect(d.log.lines.some((l) => l.message === "kubernetes watch lost; reconnecting" || l.message === "kubernetes watch closed by the server; listing again")).toBe(true);
    expect(d.status()!.lastError).toMatch(/^list connect: /);
    const lastSyncBefore = d.status()!.lastSyncAt!;
    await api.setBlind(false);
    await waitFor(() => d.status()?.connected === true, { timeoutMs: 5_000, message: "reconnected" });
    expect(d.status()!.reconnects).toBeGreaterThanOrEqual(1);
    expect(d.status()!.lastSyncAt!).toBeGreaterThan(lastSyncBefore);
    expect(d.log.lines.some((l) => l.level === "info" && l.message === "kubernetes discovery synced" && l.fields.source === d.source)).toBe(true);
  });

  test("snapshots and input carry no credentials (they reach the live inspector)", async () => {
    const tokenConfig = api.kubeconfig({ auth: "token" });
    for (const kubeconfigPath of [kubeconfig, tokenConfig]) {
      const d = start({ kubeconfigPath });
      await waitFor(() => d.status()?.connected === true);
      const keyBody = api.pki.clientKey.split("\n")[1]!;
      for (const json of [d.snapshotJson(), d.inputJson()]) {
        expect(json).toContain(api.url); // the server is shown…
        expect(json).not.toContain(keyBody); // …the key, its base64 and the token are not
        expect(json).not.toContain(Buffer.from(api.pki.clientKey).toString("base64").slice(0, 40));
        expect(json).not.toContain(api.token);
      }
      d.stop();
    }
  });

  test("certificates are really checked: an API server signed by another CA is refused and logged as tls", async () => {
    const wrongCa = api.kubeconfig({ ca: api.pki.otherCaCert });
    const d = start({ kubeconfigPath: wrongCa });
    await waitFor(() => d.log.lines.some((l) => l.message === "kubernetes list failed" && l.fields.reason === "tls"), { message: "tls failure logged" });
    expect(d.status()).toMatchObject({ connected: false });
    expect(d.status()!.lastError).toMatch(/^list tls: /);
    expect(d.urls()).toBeNull();
  });

  test("an ERROR 410 mid-watch lists again and keeps the set right", async () => {
    api.createPod(makePod({ name: "a", ip: "10.0.0.1" }));
    const d = start();
    await waitFor(() => api.openWatchCount === 1);
    const lists = api.listCount;
    api.expireWatches();
    await waitFor(() => api.listCount > lists && api.openWatchCount === 1, { message: "relisted and watching again" });
    expect(d.log.lines.some((l) => l.message === "kubernetes watch expired (410 Gone); listing again")).toBe(true);
    api.createPod(makePod({ name: "b", ip: "10.0.0.2" }));
    await waitFor(() => d.urls()?.length === 2);
  });

  test("watches failing right after each list back off more each time instead of hammering the API server", async () => {
    api.createPod(makePod({ name: "a", ip: "10.0.0.1" }));
    api.failNext("watch", 410, 4);
    // A watch must stay open 2 s to count as healthy; these 410s come back far sooner.
    const d = start({ kubeconfigPath: kubeconfig, timing: { ...fastTiming, stableAfterMs: 2_000 } });
    await waitFor(() => api.openWatchCount === 1, { timeoutMs: 5_000, message: "watching after four 410s" });
    const attempts = d.log.lines.filter((l) => l.message === "kubernetes discovery reconnecting").map((l) => l.fields.attempt);
    // The first 410 relists at once; the next ones wait, each longer (attempt 2, 3, 4).
    expect(attempts).toEqual([2, 3, 4]);
    expect(d.urls()).toEqual(["http://10.0.0.1:8000"]);
  });

  test("every reconnect lists again: after a dropped connection and after the server's clean end of the watch", async () => {
    api.createPod(makePod({ name: "a", ip: "10.0.0.1" }));
    const d = start();
    for (let i = 0; i < 3; i++) {
      await waitFor(() => api.openWatchCount === 1);
      const lists = api.listCount;
      api.dropWatches();
      await waitFor(() => api.listCount > lists, { message: `relist after drop ${i}` });
    }
    await waitFor(() => d.status()?.reconnects === 3);
    d.stop();
    await waitFor(() => api.openWatchCount === 0);

    const short = start({ kubeconfigPath: kubeconfig, timing: { ...fastTiming, watchTimeoutSeconds: 1 } });
    await waitFor(() => api.openWatchCount === 1);
    const lists = api.listCount;
    await waitFor(() => api.listCount > lists, { timeoutMs: 5_000, message: "relist after the server ended the watch" });
    expect(short.log.lines.some((l) => l.message === "kubernetes watch closed by the server; listing again")).toBe(true);
    expect(short.urls()).toEqual(["http://10.0.0.1:8000"]);
  });
});

describe("kubernetes discovery actor (service-name)", () => {
  test("one Service per worker while a slice has a ready endpoint; a drop of either watch relists both", async () => {
    api.createService(makeService({ name: "llm" }));
    api.createService(makeService({ name: "fresh" })); // no slices yet
    api.createService(makeService({ name: "ext", type: "ExternalName" }));
    api.createEndpointSlice(makeEndpointSlice({ name: "llm-1", serviceName: "llm", endpoints: [{ ip: "10.1.0.1" }] }));
    const seen = api.requests.length;
    const d = start({ kubeconfigPath: kubeconfig, mode: "service-name" });
    await waitFor(() => d.urls()?.join() === `http://llm.${NS}.svc:8000`, { message: "llm only" });
    expect(d.status()).toMatchObject({ kind: "k8s-services", source: `k8s-services:${NS}` });
    await waitFor(() => api.openWatchCount === 2, { message: "two watches" });
    expect(new Set(api.requests.slice(seen).filter((r) => r.kind === "watch").map((r) => r.path))).toEqual(
      new Set([`/api/v1/namespaces/${NS}/services`, `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`]),
    );

    api.createEndpointSlice(makeEndpointSlice({ name: "fresh-1", serviceName: "fresh", endpoints: [{ ip: "10.1.0.2", ready: false }] }));
    api.updateEndpointSlice("fresh-1", (s) => void (s.endpoints[0].conditions.ready = true));
    await waitFor(() => d.urls()?.length === 2, { message: "fresh became ready through the watch" });

    // Blind: the llm slice loses its ready endpoint, fresh is deleted; only a relist can tell.
    await api.setBlind(true);
    api.updateEndpointSlice("llm-1", (s) => void (s.endpoints[0].conditions.ready = false));
    api.deleteService("fresh");
    api.createService(makeService({ name: "late" }));
    api.createEndpointSlice(makeEndpointSlice({ name: "late-1", serviceName: "late", endpoints: [{ ip: "10.1.0.3" }] }));
    await api.setBlind(false);
    await waitFor(() => d.urls()?.join() === `http://late.${NS}.svc:8000`, { message: "set after reconnect" });

    // An ERROR event (not 410) ends the watches: both collections are listed again, the set stays right.
    await waitFor(() => api.openWatchCount === 2);
    const before = api.requests.length;
    api.updateEndpointSlice("llm-1", (s) => void (s.endpoints[0].conditions.ready = true));
    await waitFor(() => d.urls()?.length === 2);
    api.injectRawEvent(JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 500, reason: "InternalError", message: "etcd hiccup" } }));
    await waitFor(() => {
      const lists = api.requests.slice(before).filter((r) => r.kind === "list").map((r) => r.path);
      return lists.some((p) => p.endsWith("/services")) && lists.some((p) => p.endsWith("/endpointslices"));
    }, { message: "both collections relisted" });
    expect(d.log.lines.some((l) => l.level === "warn" && l.fields.reason === "error-event")).toBe(true);
    await waitFor(() => d.urls()?.length === 2 && d.status()?.connected === true);
  });
});
