import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";

const h = new Harness();
let gw: RunningGateway;
const KEY = "s3cret";
const auth = { authorization: `Bearer ${KEY}` };

async function workers() {
  return (await (await fetch(`${gw.url}/workers`)).json()) as { workers: any[]; total: number; sources: any[] };
}
function req(method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  return fetch(`${gw.url}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
}

beforeAll(async () => {
  gw = h.gateway(testConfig(["--admin-api-key", KEY]));
});
afterAll(() => h.close());

describe("admin API", () => {
  test("writes need the admin key; reads do not", async () => {
    const e = await h.engine();
    const denied = await req("POST", "/workers", { url: e.url }, {});
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as any).error.type).toBe("authentication_error");
    expect((await req("POST", "/workers", { url: e.url }, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await fetch(`${gw.url}/workers`)).status).toBe(200);
    expect((await workers()).total).toBe(0);
  });

  test("register → pending → ready with the engine's models; GET /workers/:id", async () => {
    const e = await h.engine({ models: ["base"], loras: [{ id: "adapter", parent: "base" }] });
    const res = await req("POST", "/workers", { url: e.url, labels: { zone: "a" }, priority: 5 });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    expect(id).toBeTruthy();
    const first = (await (await fetch(`${gw.url}/workers/${id}`)).json()) as any;
    expect(["pending", "ready"]).toContain(first.status);
    await waitFor(() => gw.fleet.index.get(id)?.status === "ready", 5000, "ready");
    const w = (await (await fetch(`${gw.url}/workers/${id}`)).json()) as any;
    expect(w).toMatchObject({ id, url: e.url, status: "ready", worker_type: "regular", connection_mode: "http", labels: { zone: "a" }, priority: 5, load: 0, source: "admin" });
    expect(w.models).toEqual([
      { id: "base", parent: null },
      { id: "adapter", parent: "base" },
    ]);
    const list = await workers();
    expect(list.workers.find((x) => x.id === id)).toBeTruthy();
    expect(list.sources.map((s: any) => s.source)).toContain("admin");
  });

  test("PATCH changes labels and priority and never drops other fields", async () => {
    const e = await h.engine({ models: ["pm"] });
    const { id } = (await (await req("POST", "/workers", { url: e.url, model_id: "pm", labels: { a: "1" }, priority: 1, worker_type: "regular" })).json()) as any;
    await waitFor(() => gw.fleet.index.get(id)?.status === "ready");
    const before = (await (await fetch(`${gw.url}/workers/${id}`)).json()) as any;
    const patched = (await (await req("PATCH", `/workers/${id}`, { labels: { b: "2" } })).json()) as any;
    expect(patched.labels).toEqual({ b: "2" });
    expect(patched.priority).toBe(1);
    const p2 = (await (await req("PATCH", `/workers/${id}`, { priority: 9 })).json()) as any;
    expect(p2).toMatchObject({ ...before, labels: { b: "2" }, priority: 9, last_probe: p2.last_probe, since: p2.since, reason: p2.reason });
    expect((await req("PATCH", `/workers/${id}`, { priority: 3 }, {})).status).toBe(401);
    expect((await req("PATCH", `/workers/nope`, { priority: 3 })).status).toBe(404);
  });

  test("re-registering a URL replaces the old worker completely", async () => {
    const e = await h.engine({ models: ["rr"], tokenDelayMs: 30 });
    const first = (await (await req("POST", "/workers", { url: e.url, labels: { gen: "1" } })).json()) as any;
    await waitFor(() => gw.fleet.index.get(first.id)?.status === "ready");
    // Hold a request in flight on the old worker.
    const slow = post(`${gw.url}/v1/completions`, { model: "rr", prompt: "x", max_tokens: 20 });
    await waitFor(() => (gw.fleet.index.get(first.id)?.inFlight ?? 0) === 1, 2000, "in flight on old");
    const oldView = gw.fleet.index.get(first.id)!;
    const second = (await (await req("POST", "/workers", { url: e.url, labels: { gen: "2" } })).json()) as any;
    expect(second.id).not.toBe(first.id);
    // The old worker is gone from every view at once.
    expect(gw.fleet.index.get(first.id)).toBeUndefined();
    expect((await fetch(`${gw.url}/workers/${first.id}`)).status).toBe(404);
    const list = await workers();
    expect(list.workers.filter((w) => w.url === e.url).map((w) => w.id)).toEqual([second.id]);
    await waitFor(() => gw.fleet.index.get(second.id)?.status === "ready");
    expect(gw.fleet.index.candidates("rr").map((c) => c.id)).toEqual([second.id]);
    expect((await slow).status).toBe(200);
    // The old worker's load went with it; the new one starts clean.
    expect(gw.fleet.index.get(second.id)!.inFlight).toBe(0);
    expect(oldView.gone).toBe(true);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).not.toContain(`worker="${first.id}",url`);
  });

  test("DELETE drains, then removes", async () => {
    const e = await h.engine({ models: ["dm"], tokenDelayMs: 30 });
    const { id } = (await (await req("POST", "/workers", { url: e.url })).json()) as any;
    await waitFor(() => gw.fleet.index.get(id)?.status === "ready");
    const slow = post(`${gw.url}/v1/completions`, { model: "dm", prompt: "x", max_tokens: 15 });
    await waitFor(() => (gw.fleet.index.get(id)?.inFlight ?? 0) === 1);
    const del = await req("DELETE", `/workers/${id}`);
    expect(del.status).toBe(202);
    expect(gw.fleet.index.get(id)?.status).toBe("draining");
    // No new requests go to a draining worker.
    const refused = await post(`${gw.url}/v1/completions`, { model: "dm", prompt: "x", max_tokens: 1 });
    expect(refused.status).toBe(503);
    expect((await slow).status).toBe(200);
    await waitFor(() => gw.fleet.index.get(id) === undefined, 5000, "removed after drain");
    expect((await req("DELETE", `/workers/${id}`)).status).toBe(404);
  });
});
