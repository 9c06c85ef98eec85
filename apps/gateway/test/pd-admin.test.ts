/** PATCH of a PD worker changes labels and priority only: connector, role, bootstrap port and engine id stay. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MockEngine } from "@switchboard/mock-engine";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";
import { pdFlags, ready, view } from "./pd-helpers";

const h = new Harness();
let p: MockEngine; // static (--prefill) Mooncake prefill
let np: MockEngine; // admin-registered NIXL prefill with a pinned id
let d: MockEngine;
let gw: RunningGateway;

const getWorker = async (id: string) => (await (await fetch(`${gw.url}/workers/${id}`)).json()) as any;
const patch = (id: string, body: unknown) => fetch(`${gw.url}/workers/${id}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const PD_FIELDS = ["id", "url", "worker_type", "connection_mode", "kv_connector", "bootstrap_port", "engine_id", "engine_id_confirmed", "engine_id_pinned", "source"];
const pdFields = (w: any) => Object.fromEntries(PD_FIELDS.map((k) => [k, w[k]]));

beforeAll(async () => {
  p = await h.engine({ role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0 });
  np = await h.engine({ models: ["nixl-model"], role: "prefill", kvConnector: "NixlConnector" });
  d = await h.engine({ models: ["mock-model", "nixl-model"], role: "decode" });
  gw = h.gateway(testConfig(pdFlags([p], [d])));
  await ready(gw, [p.url, d.url]);
  await waitFor(() => view(gw, p.url).engineId === p.state.engineId, 5000, "engine id read");
});
afterAll(() => h.close());

describe("PATCH keeps a PD worker's identity", () => {
  test("static Mooncake prefill: labels and priority change, nothing else; requests still mint its id", async () => {
    const id = view(gw, p.url).id;
    const before = await getWorker(id);
    expect(before).toMatchObject({ worker_type: "prefill", kv_connector: "MooncakeConnector", bootstrap_port: p.bootstrapPort, engine_id: p.state.engineId });
    const res = await patch(id, { labels: { zone: "b" }, priority: 7 });
    expect(res.status).toBe(200);
    const after = (await res.json()) as any;
    expect(after).toMatchObject({ labels: { zone: "b" }, priority: 7 });
    expect(pdFields(after)).toEqual(pdFields(before));
    // Still the same worker actor, still Ready, still probed with its bootstrap.
    await Bun.sleep(300);
    expect(pdFields(await getWorker(id))).toEqual(pdFields(before));
    expect(view(gw, p.url).status).toBe("ready");
    const r = await post(`${gw.url}/v1/completions`, { model: "mock-model", prompt: "x", max_tokens: 2 });
    expect(r.status).toBe(200);
    expect(d.received.at(-1)!.kv_transfer_params).toMatchObject({ remote_engine_id: p.state.engineId, remote_bootstrap_addr: `http://127.0.0.1:${p.bootstrapPort}` });
  });

  test("admin-registered NIXL prefill with a pinned id: PATCH, then another registration, keep all of it", async () => {
    const res = await post(`${gw.url}/workers`, {
      url: np.url,
      worker_type: "prefill",
      kv_connector: "NixlConnector",
      bootstrap_port: 5577,
      engine_id: "pinned-engine",
      pin_engine_id: true,
      labels: { tier: "x" },
    });
    const { id } = (await res.json()) as { id: string };
    await waitFor(() => gw.fleet.index.get(id)?.status === "ready", 5000, "registered prefill ready");
    const before = await getWorker(id);
    expect(before).toMatchObject({ worker_type: "prefill", kv_connector: "NixlConnector", bootstrap_port: 5577, engine_id: "pinned-engine", engine_id_pinned: true });

    expect((await patch(id, { labels: { tier: "y" } })).status).toBe(200);
    expect((await patch(id, { priority: 3 })).status).toBe(200);
    expect(pdFields(await getWorker(id))).toEqual(pdFields(before));
    // Another registration makes the admin source announce its whole set again.
    const other = await h.engine({ models: ["other"] });
    await post(`${gw.url}/workers`, { url: other.url });
    await waitFor(() => gw.fleet.index.byAddress(other.url)?.status === "ready", 5000, "other registered");

    const after = await getWorker(id);
    expect(after).toMatchObject({ labels: { tier: "y" }, priority: 3 });
    expect(pdFields(after)).toEqual(pdFields(before));
    // And it still serves as a NIXL prefill: tagged, its answer relayed.
    const r = await post(`${gw.url}/v1/completions`, { model: "nixl-model", prompt: "x", max_tokens: 2 });
    expect(r.status).toBe(200);
    expect(np.received.at(-1)!.kv_transfer_params).toEqual({ do_remote_decode: true, do_remote_prefill: false });
    expect(d.received.at(-1)!.kv_transfer_params).toMatchObject({ remote_engine_id: np.state.engineId });
  });

  test("PATCH cannot change PD fields", async () => {
    const id = view(gw, p.url).id;
    for (const field of ["kv_connector", "bootstrap_port", "worker_type", "engine_id"]) {
      const res = await patch(id, { [field]: field === "bootstrap_port" ? 1 : "x" });
      expect(res.status).toBe(400);
    }
  });
});
