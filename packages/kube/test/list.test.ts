import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeKubeApi, makeEndpointSlice, makePod, makeService, startFakeKubeApi, writeKubeconfig } from "@switchboard/testkit";
import {
  GoneError,
  type KubeClient,
  ListError,
  type Pod,
  endpointSlicesPath,
  list,
  loadKubeClient,
  podsPath,
  servicesPath,
} from "../src/index.ts";
import { rejection, startBlackHole } from "./helpers.ts";

let api: FakeKubeApi;
let client: KubeClient;

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: "serving" });
  client = loadKubeClient({ kubeconfigPath: api.kubeconfig() });
  for (let i = 0; i < 7; i++) {
    api.createPod(makePod({ name: `engine-${i}`, ip: `10.1.0.${i}`, labels: { app: "vllm", role: i % 2 ? "decode" : "prefill" } }));
  }
  api.createPod(makePod({ name: "other", ip: "10.1.1.1", labels: { app: "redis" } }));
  api.createPod(makePod({ name: "elsewhere", ip: "10.2.0.1", labels: { app: "vllm" }, namespace: "batch" }));
});

afterAll(() => api.close());

const names = (items: Pod[]) => items.map((p) => p.metadata?.name);

describe("list", () => {
  test("label selector, namespace and the list's resourceVersion", async () => {
    const res = await list<Pod>(client, podsPath("serving"), { labelSelector: "app=vllm,role=decode" });
    expect(names(res.items)).toEqual(["engine-1", "engine-3", "engine-5"]);
    expect(res.resourceVersion).toBe(api.resourceVersion);
    expect(res.items[0].status?.podIP).toBe("10.1.0.1");
  });

  test("all namespaces when none is given", async () => {
    const res = await list<Pod>(client, podsPath(), { labelSelector: "app=vllm" });
    expect(res.items).toHaveLength(8);
    expect(res.items.map((p) => p.metadata?.namespace)).toContain("batch");
  });

  test("pagination follows continue tokens and returns one consistent snapshot", async () => {
    const before = api.listCount;
    const rv = api.resourceVersion;
    // Change the world between pages: the continued pages must still show the first page's snapshot.
    api.onRequest = (r) => {
      if (r.kind === "list" && r.query.includes("continue=") && !api.get("pods", "engine-9")) {
        api.createPod(makePod({ name: "engine-9", ip: "10.1.0.9", labels: { app: "vllm" } }));
      }
    };
    try {
      const res = await list<Pod>(client, podsPath("serving"), { labelSelector: "app=vllm", limit: 2 });
      expect(api.listCount - before).toBe(4); // 7 items, 2 per page
      expect(names(res.items)).toEqual(["engine-0", "engine-1", "engine-2", "engine-3", "engine-4", "engine-5", "engine-6"]);
      expect(res.resourceVersion).toBe(rv);
    } finally {
      api.onRequest = null;
      api.deletePod("engine-9");
    }
  });

  test("an expired continue token restarts the list from the first page", async () => {
    let compactions = 0;
    api.onRequest = (r) => {
      if (r.kind === "list" && r.query.includes("continue=") && compactions === 0) {
        compactions++;
        api.updatePod("engine-0", (p) => {
          p.metadata.labels = { ...p.metadata.labels, touched: "yes" };
        });
        api.compact();
      }
    };
    try {
      const res = await list<Pod>(client, podsPath("serving"), { labelSelector: "app=vllm", limit: 3 });
      expect(res.items).toHaveLength(7);
      expect(res.resourceVersion).toBe(api.resourceVersion); // the restarted snapshot
      expect(res.items[0].metadata?.labels?.touched).toBe("yes");
      expect(api.requests.some((r) => r.kind === "list" && r.status === 410)).toBe(true);
    } finally {
      api.onRequest = null;
    }
  });

  test("services and endpointslices", async () => {
    api.createService(makeService({ name: "llama" }));
    api.createEndpointSlice(makeEndpointSlice({ name: "llama-abc", serviceName: "llama", endpoints: [{ ip: "10.1.0.1" }] }));
    const svcs = await list(client, servicesPath("serving"));
    expect(svcs.items.map((s) => s.metadata?.name)).toEqual(["llama"]);
    const slices = await list(client, endpointSlicesPath("serving"), { labelSelector: "kubernetes.io/service-name=llama" });
    expect(slices.items.map((s) => s.metadata?.name)).toEqual(["llama-abc"]);
  });

  test("HTTP failures are typed: 403 forbidden, 500 http, 410 gone", async () => {
    api.failNext("list", 403);
    const forbidden = (await rejection(list(client, podsPath("serving")))) as ListError;
    expect(forbidden).toBeInstanceOf(ListError);
    expect([forbidden.reason, forbidden.status]).toEqual(["forbidden", 403]);
    api.failNext("list", 500);
    const broken = (await rejection(list(client, podsPath("serving")))) as ListError;
    expect([broken.reason, broken.status]).toEqual(["http", 500]);
    api.failNext("list", 410);
    expect(await rejection(list(client, podsPath("serving")))).toBeInstanceOf(GoneError);
  });

  test("a server that never answers costs at most the list timeout", async () => {
    const hole = await startBlackHole();
    try {
      const silent = loadKubeClient({
        kubeconfigPath: writeKubeconfig({ server: hole.url, ca: api.pki.caCert, token: api.token, path: `${api.pki.dir}/black-hole` }),
      });
      const started = Date.now();
      const err = (await rejection(list(silent, podsPath("serving"), { timeoutMs: 300 }))) as ListError;
      expect(err.reason).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await hole.close();
    }
  });

  test("a refused connection is a connect error", async () => {
    await api.setBlind(true);
    try {
      const err = (await rejection(list(client, podsPath("serving"), { timeoutMs: 5_000 }))) as ListError;
      expect(err.reason).toBe("connect");
    } finally {
      await api.setBlind(false);
    }
    expect((await list(client, podsPath("serving"))).items.length).toBeGreaterThan(0);
  });
});
