import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { type FakeKubeApi, makeEndpointSlice, makeService, startFakeKubeApi, waitFor } from "@switchboard/testkit";
import type { ProbeFn } from "@switchboard/workers";
import { Harness } from "./harness";
import { NS, k8sGateway, workersJson } from "./k8s-harness";

const h = new Harness();
let api: FakeKubeApi;

/**
 * `NAME.NAMESPACE.svc` does not resolve here (and tests touch no DNS): this probe stands in for
 * an engine nobody can reach — it answers nothing until the probe deadline cuts it.
 */
let probes = 0;
const unreachable: ProbeFn = ({ signal }) =>
  new Promise((_, reject) => {
    probes++;
    signal.addEventListener("abort", () => reject(new Error("getaddrinfo ENOTFOUND")), { once: true });
  });

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: NS });
});

afterEach(async () => {
  await h.close();
  await api.setBlind(false);
  await waitFor(() => api.openWatchCount === 0, { message: "previous gateway's watches closed" });
  for (const s of api.services()) api.deleteService(s.metadata.name, s.metadata.namespace);
  for (const s of api.endpointSlices()) api.deleteEndpointSlice(s.metadata.name, s.metadata.namespace);
});

afterAll(async () => {
  await h.close();
  await api.close();
});

const svcUrl = (name: string) => `http://${name}.${NS}.svc:8000`;
const slice = (name: string, service: string, ready = true) => makeEndpointSlice({ name, serviceName: service, endpoints: [{ ip: "10.1.0.1", ready }] });
type Gw = ReturnType<typeof k8sGateway>;
const urls = async (gw: Gw) => (await workersJson(gw)).workers.map((w) => w.url).sort();
const discovery = (gw: Gw) => gw.fleet.sources().find((s) => s.source === `k8s-services:${NS}`);

describe("service-name discovery through the gateway", () => {
  test("Services without EndpointSlices (new, headless, ExternalName) are not workers and stop nobody; unreachable workers cost the reconcile nothing", async () => {
    api.createService(makeService({ name: "llm", labels: { app: "llm" } }));
    api.createService(makeService({ name: "fresh", labels: { app: "llm" } }));
    api.createService(makeService({ name: "headless", clusterIP: "None", labels: { app: "llm" } }));
    api.createService(makeService({ name: "ext", type: "ExternalName", labels: { app: "llm" } }));
    api.createService(makeService({ name: "web", labels: { app: "web" } }));
    api.createEndpointSlice(slice("llm-1", "llm"));
    api.createEndpointSlice(slice("web-1", "web"));
    // Health probes a 60 s affair: the unreachable workers sit in their first probe throughout.
    const gw = k8sGateway(h, api, ["--k8s-discovery-mode", "service-name", "--selector", "app=llm", "--health-check-timeout-secs", "60"], {
      probes: { http: unreachable },
    });
    await waitFor(async () => (await urls(gw)).join() === svcUrl("llm"), { message: "only llm" });
    const w = (await workersJson(gw)).workers[0]!;
    expect(w).toMatchObject({ source: `k8s-services:${NS}`, status: "pending" });

    // The discovery loop goes on while that probe hangs: new endpoints appear at once.
    await waitFor(() => api.openWatchCount === 2);
    api.createEndpointSlice(slice("fresh-1", "fresh"));
    api.createEndpointSlice(slice("headless-1", "headless"));
    await waitFor(async () => (await urls(gw)).join() === [svcUrl("fresh"), svcUrl("headless"), svcUrl("llm")].join(), {
      timeoutMs: 2_000,
      message: "fresh and headless join while probes hang",
    });
    expect((await workersJson(gw)).workers.every((x) => x.status === "pending")).toBe(true);
    expect(probes).toBeGreaterThanOrEqual(3);
    expect(discovery(gw)).toMatchObject({ kind: "k8s-services", connected: true, workers: 3 });
  }, 20_000);

  test("while blind: endpoints lost, a Service deleted, another created with a ready slice — right after the reconnect", async () => {
    api.createService(makeService({ name: "a" }));
    api.createService(makeService({ name: "b" }));
    api.createService(makeService({ name: "c" }));
    api.createEndpointSlice(slice("a-1", "a"));
    api.createEndpointSlice(slice("b-1", "b"));
    api.createEndpointSlice(slice("c-1", "c"));
    const gw = k8sGateway(h, api, ["--k8s-discovery-mode", "service-name"], { probes: { http: unreachable } });
    await waitFor(async () => (await urls(gw)).length === 3);
    const cId = (await workersJson(gw)).workers.find((w) => w.url === svcUrl("c"))!.id;

    await api.setBlind(true);
    await waitFor(() => discovery(gw)?.connected === false);
    api.updateEndpointSlice("a-1", (s) => void (s.endpoints[0].conditions.ready = false));
    api.deleteService("b");
    api.deleteEndpointSlice("b-1");
    api.createService(makeService({ name: "d" }));
    api.createEndpointSlice(slice("d-1", "d"));
    // c is recreated under the same name: a new uid, a new worker at the same URL.
    api.deleteService("c");
    api.createService(makeService({ name: "c" }));
    const seen = api.requests.length;
    await api.setBlind(false);

    await waitFor(async () => (await urls(gw)).join() === [svcUrl("c"), svcUrl("d")].join(), { timeoutMs: 3_000, message: "set after reconnect" });
    expect((await workersJson(gw)).workers.find((w) => w.url === svcUrl("c"))!.id).not.toBe(cId);
    expect(discovery(gw)!.reconnects).toBeGreaterThanOrEqual(1);
    // The reconnect listed both collections (a resumed watch is not a reconcile).
    const listed = new Set(api.requests.slice(seen).filter((r) => r.kind === "list" && r.status === 200).map((r) => r.path.split("/").at(-1)));
    expect(listed).toEqual(new Set(["services", "endpointslices"]));
  }, 20_000);
});
