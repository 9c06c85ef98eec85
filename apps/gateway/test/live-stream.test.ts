import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SourceStatus } from "@switchboard/discovery";
import type { MockEngine } from "@switchboard/mock-engine";
import { fromCallback } from "xstate";
import { Fleet } from "@switchboard/fleet";
import { defaultHealthConfig } from "@switchboard/workers";
import type { RunningGateway } from "../src";
import { LiveHub } from "../src/live";
import { Harness, post, testConfig, waitFor } from "./harness";
import { SseReader } from "./live-sse";

const h = new Harness();
let a: MockEngine;
let b: MockEngine;
let gw: RunningGateway;
const readers: SseReader[] = [];

// A discovery source whose connection can be dropped on demand, as a Kubernetes watch's might.
const flakySource = fromCallback<{ type: "drop" }>(({ sendBack, receive }) => {
  const status = (connected: boolean): SourceStatus => ({
    source: "flaky",
    kind: "k8s-pods",
    connected,
    lastSyncAt: Date.now(),
    lastError: connected ? null : "watch closed by the API server",
    reconnects: connected ? 0 : 1,
    workers: 0,
  });
  sendBack({ type: "source.status", status: status(true) });
  receive(() => sendBack({ type: "source.status", status: status(false) }));
});

async function open(path = "/live", headers: Record<string, string> = {}) {
  const r = await SseReader.open(`${gw.url}${path}`, headers);
  readers.push(r);
  return r;
}

const deltas = (r: SseReader) => r.messages.filter((m) => m.event === "delta");

beforeAll(async () => {
  a = await h.engine();
  b = await h.engine();
  gw = h.gateway(testConfig(["--worker-urls", a.url, b.url]), { sources: [{ id: "flaky", logic: flakySource, input: {} }], live: { keepaliveMs: 150 } });
  await waitFor(() => gw.fleet.index.readyCount() === 2, 5000, "both workers ready");
});
afterAll(async () => {
  for (const r of readers) r.close();
  await h.close();
});

describe("GET /live", () => {
  test("opens with a full snapshot: workers with their journal, and the sources", async () => {
    const r = await open();
    expect(r.response.status).toBe(200);
    expect(r.response.headers.get("content-type")).toStartWith("text/event-stream");
    expect(r.response.headers.get("access-control-allow-origin")).toBe("*");
    const snap = await r.next((m) => m.event === "snapshot", 2000);
    expect(r.messages[0]!.event).toBe("snapshot");
    expect(r.retry).toBe(2000);
    const urls = snap.data.workers.map((w: { url: string }) => w.url).sort();
    expect(urls).toEqual([a.url, b.url].sort());
    const wa = snap.data.workers.find((w: { url: string }) => w.url === a.url);
    expect(wa.status).toBe("ready");
    expect(wa.models.map((m: { id: string }) => m.id)).toEqual(["mock-model"]);
    expect(wa.source).toBe("static");
    expect(wa.journal).toMatchObject({ kind: expect.any(String), message: expect.any(String) });
    expect(wa.last_probe.healthy).toBe(true);
    const sources = snap.data.sources.map((s: SourceStatus) => s.source).sort();
    expect(sources).toEqual(["admin", "flaky", "static"]);
    // The snapshot also carries the recent log, so a page opened late is not blank.
    expect(snap.data.events.some((e: { kind: string; url: string }) => e.kind === "status" && e.url === a.url)).toBe(true);
  });

  test("a worker going down and coming back reaches the stream within a second, coalesced per worker", async () => {
    const r = await open();
    await r.next((m) => m.event === "snapshot");
    const changedAt: Record<string, number> = {};
    let indexChanges = 0;
    const off = gw.fleet.index.onChange((c) => {
      if (c.view.url !== a.url) return;
      indexChanges++;
      if (c.kind === "status") changedAt[c.to] ??= Date.now();
    });
    try {
      const mark = r.messages.length;
      a.setFault({ unhealthy: true });
      const down = await r.next((m) => m.event === "delta" && m.data.workers.some((w: any) => w.url === a.url && w.status !== "ready"), 5000, mark);
      const downTo = down.data.workers.find((w: any) => w.url === a.url).status as string;
      expect(["not_ready", "failed"]).toContain(downTo);
      expect(down.at - changedAt[downTo]!).toBeLessThan(1000);
      const ev = down.data.events.find((e: any) => e.kind === "status" && e.url === a.url);
      expect(ev).toMatchObject({ from: "ready", to: "not_ready" });
      expect(ev.message).toContain("consecutive failures");

      // Failed probes keep coming while it is down; let a few batches pass.
      await Bun.sleep(800);
      const upFrom = r.messages.length;
      a.clearFaults();
      const up = await r.next((m) => m.event === "delta" && m.data.workers.some((w: any) => w.url === a.url && w.status === "ready"), 5000, upFrom);
      expect(up.at - changedAt.ready!).toBeLessThan(1000);
      expect(up.data.events.some((e: any) => e.kind === "status" && e.url === a.url && e.to === "ready")).toBe(true);
    } finally {
      off();
      a.clearFaults();
    }
    const ds = deltas(r);
    for (const d of ds) {
      const ids = d.data.workers.map((w: { id: string }) => w.id);
      expect(new Set(ids).size).toBe(ids.length);
    }
    // Many index changes for the worker, far fewer deltas: changes were batched.
    expect(ds.length).toBeLessThan(indexChanges);
  });

  test("a worker registered and then removed through the admin API shows up, then goes", async () => {
    const r = await open();
    await r.next((m) => m.event === "snapshot");
    const c = await h.engine();
    const res = await post(`${gw.url}/workers`, { url: c.url });
    const { id } = (await res.json()) as { id: string };
    const added = await r.next((m) => m.event === "delta" && m.data.workers.some((w: any) => w.id === id), 3000);
    expect(added.data.workers.find((w: any) => w.id === id).source).toBe("admin");
    await r.next((m) => m.event === "delta" && m.data.events.some((e: any) => e.kind === "added" && e.worker === id), 3000);
    expect((await fetch(`${gw.url}/workers/${id}`, { method: "DELETE" })).status).toBe(202);
    const gone = await r.next((m) => m.event === "delta" && m.data.removed.includes(id), 5000);
    expect(gone.data.workers.some((w: any) => w.id === id)).toBe(false);
    expect(r.messages.some((m) => m.event === "delta" && m.data.events.some((e: any) => e.kind === "removed" && e.worker === id))).toBe(true);
  });

  test("a discovery source losing its connection is sent as a source change", async () => {
    const r = await open();
    const snap = await r.next((m) => m.event === "snapshot");
    expect(snap.data.sources.find((s: SourceStatus) => s.source === "flaky")).toMatchObject({ connected: true, kind: "k8s-pods" });
    gw.fleet.actor.system.get("flaky")!.send({ type: "drop" });
    const d = await r.next((m) => m.event === "delta" && !!m.data.sources, 3000);
    expect(d.data.sources.find((s: SourceStatus) => s.source === "flaky")).toMatchObject({ connected: false, lastError: "watch closed by the API server" });
    expect(d.data.sources.map((s: SourceStatus) => s.source).sort()).toEqual(["admin", "flaky", "static"]);
    const ev = d.data.events.find((e: any) => e.kind === "source" && e.worker === "flaky");
    expect(ev.message).toContain("disconnected: watch closed by the API server");
  });

  test("quiet streams get keepalive comments", async () => {
    const r = await open();
    await waitFor(() => r.comments.includes("keepalive"), 3000, "a keepalive comment");
  });

  test("a page that goes away is forgotten", async () => {
    const before = gw.live.hub.clientCount;
    const r = await open();
    await r.next((m) => m.event === "snapshot");
    expect(gw.live.hub.clientCount).toBe(before + 1);
    r.close();
    await waitFor(() => gw.live.hub.clientCount === before, 3000, "the client to be dropped");
  });
});

describe("stopping the gateway with pages connected", () => {
  test("ends the live streams instead of waiting out the grace period", async () => {
    const local = new Harness();
    try {
      const e = await local.engine();
      const g = local.gateway(testConfig(["--worker-urls", e.url, "--shutdown-grace-secs", "30"]));
      const r = await SseReader.open(`${g.url}/live`);
      await r.next((m) => m.event === "snapshot");
      const stopped = await Promise.race([g.stop().then(() => "stopped"), Bun.sleep(5000).then(() => "still draining")]);
      expect(stopped).toBe("stopped");
      await waitFor(() => r.ended, 3000, "the stream to end");
    } finally {
      await local.close();
    }
  });
});

describe("a page that stops reading", () => {
  test("is cut once it falls too far behind, instead of being buffered without bound", async () => {
    const fleet = new Fleet({ health: defaultHealthConfig, sources: [] }).start();
    const hub = new LiveHub(fleet, { keepaliveMs: 5, maxQueuedChunks: 20 });
    try {
      const reading = hub.stream();
      const reader = reading.getReader();
      hub.stream(); // a page that never reads
      expect(hub.clientCount).toBe(2);
      let readerChunks = 0;
      const drain = (async () => {
        while (!(await reader.read()).done) readerChunks++;
      })();
      await waitFor(() => hub.clientCount === 1, 3000, "the stalled page to be cut");
      // The page that reads is still served.
      const before = readerChunks;
      await waitFor(() => readerChunks > before + 3, 3000, "more keepalives for the reading page");
      hub.close();
      await drain;
    } finally {
      hub.close();
      fleet.stop();
    }
  });
});
