import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startMockEngine, type MockEngine } from "@switchboard/mock-engine";
import { type FakeKubeApi, makePod, startFakeKubeApi, waitFor } from "@switchboard/testkit";
import { Harness } from "./harness";
import { NS, captureLogs, chat, k8sGateway, loopbackEngines, workersJson } from "./k8s-harness";

const h = new Harness();
let api: FakeKubeApi;
let port: number;
let engines: MockEngine[];
/** Engine i listens on 127.0.0.(i+2). */
const ip = (i: number) => `127.0.0.${i + 2}`;
const url = (i: number) => `http://${ip(i)}:${port}`;
const pod = (name: string, i: number, extra: Partial<Parameters<typeof makePod>[0]> = {}) => makePod({ name, ip: ip(i), labels: { app: "llm" }, ...extra });

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: NS });
  ({ port, engines } = await loopbackEngines(5));
});

afterEach(async () => {
  await h.close();
  await api.setBlind(false);
  api.onRequest = null;
  api.setGoneMode("http");
  await waitFor(() => api.openWatchCount === 0, { message: "previous gateway's watch closed" });
  for (const p of api.pods()) api.deletePod(p.metadata.name, p.metadata.namespace);
  for (const e of engines) {
    e.clearReceived();
    e.setModels(["mock-model"], []);
  }
});

afterAll(async () => {
  await h.close();
  await api.close();
  await Promise.all(engines.map((e) => e.stop()));
});

const urls = async (gw: ReturnType<typeof k8sGateway>) => (await workersJson(gw)).workers.map((w) => w.url).sort();
const ready = (gw: ReturnType<typeof k8sGateway>) => gw.fleet.index.readyCount();
const discovery = (gw: ReturnType<typeof k8sGateway>) => gw.fleet.sources().find((s) => s.source === `k8s-pods:${NS}`);

/** Goes blind, lets `change` alter the cluster, comes back; resolves with the time of the reconnect's list. */
async function whileBlind(gw: ReturnType<typeof k8sGateway>, change: () => void): Promise<number> {
  await api.setBlind(true);
  await waitFor(() => discovery(gw)?.connected === false, { message: "router noticed it is blind" });
  change();
  let relistAt = 0;
  api.onRequest = (r) => {
    if (r.kind === "list" && relistAt === 0) relistAt = Date.now();
  };
  await api.setBlind(false);
  await waitFor(() => relistAt > 0, { timeoutMs: 5_000, message: "reconnect list" });
  return relistAt;
}

describe("pod-ip discovery through the gateway (fake API over TLS, real engines on loopback)", () => {
  test("a pod deleted while the watch is down is gone within 1 s of the reconnect, and gets no request afterwards", async () => {
    for (let i = 0; i < 3; i++) api.createPod(pod(`p${i}`, i));
    const gw = k8sGateway(h, api, ["--selector", "app=llm", "--service-discovery-port", String(port)]);
    await waitFor(() => ready(gw) === 3, { timeoutMs: 8_000, message: "three Ready workers" });

    const relistAt = await whileBlind(gw, () => api.deletePod("p2"));
    let goneAt = 0;
    await waitFor(
      async () => {
        const gone = !(await urls(gw)).includes(url(2));
        if (gone) goneAt = Date.now();
        return gone;
      },
      { timeoutMs: 3_000, intervalMs: 10, message: "p2 removed" },
    );
    expect(goneAt - relistAt).toBeLessThan(1_000);

    engines[2]!.clearReceived();
    for (let i = 0; i < 12; i++) expect((await chat(gw)).status).toBe(200);
    expect(engines[2]!.received.length).toBe(0);
    expect(engines[0]!.received.length + engines[1]!.received.length).toBe(12);
    expect(discovery(gw)).toMatchObject({ connected: true, workers: 2 });
    expect(discovery(gw)!.reconnects).toBeGreaterThanOrEqual(1);
  }, 20_000);

  test("while blind: a pod became Ready, one lost its IP, one was replaced under the same IP (new uid)", async () => {
    api.createPod(pod("steady", 0));
    api.createPod(pod("evicted", 1));
    const replacedOld = api.createPod(pod("replaced", 2));
    api.createPod(pod("late", 3, { ready: false }));
    const gw = k8sGateway(h, api, ["--service-discovery-port", String(port)]);
    await waitFor(() => ready(gw) === 3, { timeoutMs: 8_000, message: "three Ready workers" });
    const before = (await workersJson(gw)).workers;
    const oldReplacedId = before.find((w) => w.url === url(2))!.id;
    expect(before.find((w) => w.url === url(2))!.source_key).toBe(replacedOld.metadata.uid!);

    let replacedNew = "";
    await whileBlind(gw, () => {
      api.updatePod("late", (p) => void (p.status.conditions = [{ type: "Ready", status: "True" }]));
      api.updatePod("evicted", (p) => {
        delete p.status.podIP;
        delete p.status.podIPs;
        p.status.phase = "Failed";
      });
      api.deletePod("replaced");
      replacedNew = api.createPod(pod("replaced", 2)).metadata.uid!;
    });
    await waitFor(async () => (await urls(gw)).join() === [url(0), url(2), url(3)].join(), { timeoutMs: 3_000, message: "set after reconnect" });
    const after = (await workersJson(gw)).workers;
    const replaced = after.find((w) => w.url === url(2))!;
    expect(replaced.source_key).toBe(replacedNew);
    expect(replaced.id).not.toBe(oldReplacedId);
    expect(after.every((w) => w.source === `k8s-pods:${NS}`)).toBe(true);
    await waitFor(() => ready(gw) === 3, { timeoutMs: 8_000, message: "late and the replacement become Ready" });
  }, 20_000);

  test("the lora-modified annotation changing while blind makes the worker re-read its models", async () => {
    api.createPod(pod("lora", 0, { annotations: { "lora-modified": "1" } }));
    // Models are re-read only when asked: the annotation is the only trigger.
    const gw = k8sGateway(h, api, ["--service-discovery-port", String(port), "--model-refresh-probes", "0"]);
    await waitFor(() => ready(gw) === 1, { timeoutMs: 8_000 });
    const models = async () => (await workersJson(gw)).workers[0]!.models.map((m) => m.id).sort();
    expect(await models()).toEqual(["mock-model"]);

    await whileBlind(gw, () => {
      engines[0]!.setModels(["mock-model"], [{ id: "sql-lora", parent: "mock-model" }]);
      api.updatePod("lora", (p) => void (p.metadata.annotations!["lora-modified"] = "2"));
    });
    await waitFor(async () => (await models()).join() === "mock-model,sql-lora", { timeoutMs: 5_000, message: "adapter listed" });
    expect((await chat(gw, "sql-lora")).status).toBe(200);
  }, 20_000);

  for (const mode of ["http", "event"] as const) {
    test(`410 Gone (${mode === "http" ? "HTTP 410" : "ERROR event"}) on the watch leads to a relist and the right set`, async () => {
      for (let i = 0; i < 3; i++) api.createPod(pod(`p${i}`, i));
      const gw = k8sGateway(h, api, ["--service-discovery-port", String(port)]);
      await waitFor(() => ready(gw) === 3, { timeoutMs: 8_000 });
      await waitFor(() => api.openWatchCount === 1);

      // The reconnect's watch gets 410; history is compacted at that moment, after p1 went away:
      // only a new list can show it (a watch resumed from any older version gets 410 again).
      api.setGoneMode(mode);
      api.failNext("watch", 410);
      const seen = api.requests.length;
      let armed = true;
      api.onRequest = (r) => {
        if (armed && r.kind === "watch") {
          armed = false;
          api.deletePod("p1");
          api.compact();
        }
      };
      api.dropWatches();
      await waitFor(async () => (await urls(gw)).join() === [url(0), url(2)].join(), { timeoutMs: 3_000, message: "p1 gone after the relist" });
      const kinds = api.requests.slice(seen).map((r) => `${r.kind}:${r.status}`);
      // list, watch → 410 (HTTP, or 200 carrying the ERROR event), list again, watch.
      expect(kinds.slice(0, 3)).toEqual(["list:200", `watch:${mode === "http" ? 410 : 200}`, "list:200"]);
      await waitFor(() => api.openWatchCount === 1 && discovery(gw)?.connected === true);
    }, 20_000);
  }

  test("an object that makes processing throw is logged and skipped; the others are still discovered", async () => {
    const logs = captureLogs();
    api.createPod(pod("good-0", 0));
    const bad = pod("bad-list", 4);
    bad.status.conditions = "Ready"; // not a list: mapping throws
    api.createPod(bad);
    api.createPod(pod("good-1", 1));
    const gw = k8sGateway(h, api, ["--service-discovery-port", String(port)], { logger: logs.logger });
    await waitFor(async () => (await urls(gw)).join() === [url(0), url(1)].join(), { timeoutMs: 3_000, message: "both good pods from the list" });

    await waitFor(() => api.openWatchCount === 1);
    const badLabels = pod("bad-watch", 4);
    badLabels.metadata.labels = { app: 7 as unknown as string }; // a label that is not a string
    api.createPod(badLabels);
    api.createPod(pod("good-2", 2));
    await waitFor(async () => (await urls(gw)).join() === [url(0), url(1), url(2)].join(), { timeoutMs: 3_000, message: "the pod after the bad one" });

    const skipped = logs.lines.filter((l) => l.msg === "kubernetes object skipped");
    expect(skipped.map((l) => l.object)).toEqual([`${NS}/bad-list`, `${NS}/bad-watch`]);
    expect(skipped.every((l) => l.component === "k8s-discovery" && l.level === 40)).toBe(true);
    expect(discovery(gw)).toMatchObject({ connected: true, workers: 3 });
  }, 20_000);

  test("a terminating pod drains: its in-flight request finishes, new requests go elsewhere, then it is gone", async () => {
    // A slow engine of its own on the next loopback address: 300 ms per token.
    const slow = await startMockEngine({ models: ["mock-model"], host: ip(5), port, tokenDelayMs: 300 });
    try {
      api.createPod(pod("stay", 0));
      api.createPod(pod("leaving", 5));
      const gw = k8sGateway(h, api, ["--service-discovery-port", String(port)]);
      await waitFor(() => ready(gw) === 2, { timeoutMs: 8_000 });
      // Round robin over two: one of two requests lands on the slow engine.
      const inflight = [chat(gw), chat(gw)];
      await waitFor(() => slow.received.length === 1, { message: "a request in flight on the leaving pod" });
      api.updatePod("leaving", (p) => void (p.metadata.deletionTimestamp = new Date().toISOString()));
      await waitFor(async () => (await workersJson(gw)).workers.find((w) => w.url === url(5))?.status === "draining", { message: "draining" });
      for (let i = 0; i < 4; i++) expect((await chat(gw)).status).toBe(200);
      expect(slow.received.length).toBe(1);
      for (const r of await Promise.all(inflight)) expect(r.status).toBe(200);
      await waitFor(async () => (await urls(gw)).join() === url(0), { message: "drained worker removed" });
    } finally {
      await slow.stop();
    }
  }, 20_000);

  test("/workers shows the source of each worker and the discovery status", async () => {
    api.createPod(pod("a", 0, { labels: { app: "llm", sleeping: "true" } }));
    api.createPod(pod("b", 1));
    const gw = k8sGateway(h, api, ["--service-discovery-port", String(port)]);
    await waitFor(() => ready(gw) === 1, { timeoutMs: 8_000 });
    const body = await workersJson(gw);
    expect(body.workers.map((w) => [w.url, w.source, w.sleeping]).sort()).toEqual([
      [url(0), `k8s-pods:${NS}`, true],
      [url(1), `k8s-pods:${NS}`, false],
    ]);
    expect(body.workers.find((w) => w.url === url(0))!.status).not.toBe("ready");
    const status = body.sources.find((s) => s.source === `k8s-pods:${NS}`)!;
    expect(status).toMatchObject({ kind: "k8s-pods", connected: true, workers: 2, lastError: null });
    expect(typeof status.lastSyncAt).toBe("number");
  }, 20_000);
});
