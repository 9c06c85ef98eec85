import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeKubeApi, type KubeObject, makePod, startFakeKubeApi, waitFor } from "@switchboard/testkit";
import type { ProbeFn } from "@switchboard/workers";
import { Harness } from "./harness";
import { NS, k8sGateway, seededRandom } from "./k8s-harness";

const DROPS = 100;
const seed = Number(process.env.K8S_CHURN_SEED ?? Date.now() % 2 ** 31);
const rand = seededRandom(seed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const h = new Harness();
let api: FakeKubeApi;
// Nothing listens at these addresses; discovery never probes, and the workers' probes are stubbed.
const offline: ProbeFn = async () => ({ healthy: false, detail: "not probed in this test", latencyMs: 0 });

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: NS });
});
afterAll(async () => {
  await h.close();
  await api.close();
});

/** The truth, by the rules of the issue (written here independently of the mapping under test). */
function truth(pods: KubeObject[], port: number): string[] {
  return pods
    .filter((p) => p.status?.phase === "Running" && p.status?.podIP && !p.metadata.deletionTimestamp && p.status?.conditions?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True"))
    .map((p) => `${p.metadata.uid} http://${p.status.podIP}:${port} sleeping=${p.metadata.labels?.sleeping === "true"} lora=${p.metadata.annotations?.["lora-modified"] ?? "-"}`)
    .sort();
}

let serial = 0;
let ips = 0;
/** Unique addresses: two live pods never share one (the fleet keeps one worker per URL). */
const nextIp = () => (ips++, `10.${(ips >> 16) & 255}.${(ips >> 8) & 255}.${ips & 255}`);

/** One random change to the cluster. */
function churn(): string {
  const pods = api.pods();
  const some = pods.length > 0 ? pick(pods) : undefined;
  const name = some?.metadata.name ?? "";
  const op = pods.length < 3 ? "create" : pick(["create", "create", "delete", "ready", "evict", "terminate", "replace", "sleep", "lora"] as const);
  switch (op) {
    case "create":
      serial++;
      api.createPod(makePod({ name: `pod-${serial}`, ip: nextIp(), ready: rand() < 0.8, phase: rand() < 0.9 ? "Running" : "Pending" }));
      return `create pod-${serial}`;
    case "delete":
      api.deletePod(name);
      break;
    case "ready":
      api.updatePod(name, (p) => {
        p.status.phase = "Running";
        p.status.conditions = [{ type: "Ready", status: p.status.conditions?.[0]?.status === "True" ? "False" : "True" }];
      });
      break;
    case "evict":
      api.updatePod(name, (p) => {
        delete p.status.podIP;
        delete p.status.podIPs;
      });
      break;
    case "terminate":
      api.updatePod(name, (p) => void (p.metadata.deletionTimestamp = new Date().toISOString()));
      break;
    case "replace": {
      const ip = some!.status?.podIP ?? nextIp();
      api.deletePod(name);
      api.createPod(makePod({ name, ip }));
      break;
    }
    case "sleep":
      api.updatePod(name, (p) => void (p.metadata.labels = { ...p.metadata.labels, sleeping: p.metadata.labels?.sleeping === "true" ? "false" : "true" }));
      break;
    case "lora":
      api.updatePod(name, (p) => void (p.metadata.annotations = { ...p.metadata.annotations, "lora-modified": String(Math.floor(rand() * 1e6)) }));
      break;
  }
  return `${op} ${name}`;
}

describe("randomized: watch drops with pod churn in between", () => {
  test(`${DROPS} drops; after each reconnect the worker set equals the truth`, async () => {
    console.log(`k8s churn seed: ${seed} (replay with K8S_CHURN_SEED=${seed})`);
    for (let i = 0; i < 6; i++) churn();
    const gw = k8sGateway(h, api, ["--service-discovery-port", "8000"], { probes: { http: offline } }, { backoffInitialMs: 20, backoffCapMs: 80, stableAfterMs: 30 });
    // The worker set is the fleet actor's own record of the worker actors it runs.
    const actual = () =>
      Object.values(gw.fleet.actor.getSnapshot().context.workers)
        .map((w) => `${w.sourceKey} ${w.spec.url} sleeping=${w.spec.sleeping === true} lora=${w.modelsVersion ?? "-"}`)
        .sort();
    let history: string[] = [];
    const settle = async (what: string) => {
      try {
        await waitFor(() => JSON.stringify(actual()) === JSON.stringify(truth(api.pods(), 8000)), { timeoutMs: 3_000, intervalMs: 5 });
      } catch {
        throw new Error(`seed ${seed}, ${what}: worker set differs from the truth after [${history.join("; ")}]\nwant ${truth(api.pods(), 8000).join("\n     ")}\ngot  ${actual().join("\n     ")}`);
      }
    };
    await settle("start");

    const started = Date.now();
    for (let drop = 0; drop < DROPS; drop++) {
      await waitFor(() => api.openWatchCount === 1, { timeoutMs: 3_000, message: `watch open before drop ${drop}` });
      history = [];
      // Sometimes a change the open watch does see.
      if (rand() < 0.3) history.push(`live: ${churn()}`);
      const lists = api.listCount;
      // Sometimes the history is compacted too: a resumed watch would get 410.
      const compact = rand() < 0.1;
      api.dropWatches();
      // Synchronous, so certainly before the router reconnects: only the next list can show these.
      const n = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) history.push(churn());
      if (compact) api.compact();
      await waitFor(() => api.listCount > lists, { timeoutMs: 3_000, message: `reconnect list after drop ${drop}` });
      await settle(`drop ${drop}`);
    }
    expect(gw.fleet.sources().find((s) => s.source === `k8s-pods:${NS}`)!.reconnects).toBeGreaterThanOrEqual(DROPS);
    console.log(`${DROPS} drops in ${Date.now() - started} ms, ${api.pods().length} pods at the end`);
  }, 60_000);
});
