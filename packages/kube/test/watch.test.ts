import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { type FakeKubeApi, makePod, startFakeKubeApi, waitFor, writeKubeconfig } from "@switchboard/testkit";
import {
  GoneError,
  type KubeClient,
  type Pod,
  type WatchEnd,
  WatchError,
  type WatchEvent,
  type WatchOptions,
  type WatchSkip,
  list,
  loadKubeClient,
  podsPath,
  watch,
} from "../src/index.ts";
import { rejection, startBlackHole } from "./helpers.ts";

let api: FakeKubeApi;
let client: KubeClient;
const NS = "serving";
const aborts: AbortController[] = [];

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: NS });
  client = loadKubeClient({ kubeconfigPath: api.kubeconfig() });
});

afterEach(async () => {
  for (const a of aborts.splice(0)) a.abort();
  // The next test counts open watches: let the server see these ones go.
  await waitFor(() => api.openWatchCount === 0, { message: "previous watches closed on the server" });
  api.setChunking(null);
  api.setGoneMode("http");
  for (const p of api.pods()) api.deletePod(p.metadata.name, p.metadata.namespace);
});

afterAll(() => api.close());

/** Starts a watch that records everything; aborted after each test. */
function recorder(opts: Partial<WatchOptions<Pod>> = {}) {
  const events: WatchEvent<Pod>[] = [];
  const bookmarks: string[] = [];
  const skipped: WatchSkip[] = [];
  const ac = new AbortController();
  aborts.push(ac);
  const done: Promise<WatchEnd> = watch<Pod>(client, podsPath(NS), {
    timeoutSeconds: 30,
    signal: ac.signal,
    onEvent: (e) => events.push(e),
    onBookmark: (rv) => bookmarks.push(rv),
    onSkipped: (s) => skipped.push(s),
    ...opts,
  });
  done.catch(() => {}); // inspected by the tests that care
  const seen = () => events.map((e) => `${e.type} ${e.object.metadata?.name}`);
  return { events, bookmarks, skipped, done, ac, seen };
}

const watchOpen = (n = 1) => waitFor(() => api.openWatchCount >= n, { message: "watch open on the fake server" });

describe("watch", () => {
  test("events from the list's resourceVersion, in order, including selector moves", async () => {
    api.createPod(makePod({ name: "a", ip: "10.0.0.1", labels: { app: "vllm" } }));
    const { resourceVersion } = await list(client, podsPath(NS), { labelSelector: "app=vllm" });
    // Changes between the list and the watch must be replayed, not lost.
    api.createPod(makePod({ name: "b", ip: "10.0.0.2", labels: { app: "vllm" } }));
    const w = recorder({ resourceVersion, labelSelector: "app=vllm" });
    await watchOpen();
    api.updatePod("a", (p) => {
      p.status.podIP = undefined;
    });
    api.updatePod("b", (p) => {
      p.metadata.labels = { app: "other" }; // leaves the selection
    });
    api.createPod(makePod({ name: "c", ip: "10.0.0.3", labels: { app: "other" } })); // never selected
    api.updatePod("c", (p) => {
      p.metadata.labels = { app: "vllm" }; // enters the selection
    });
    api.deletePod("a");
    await waitFor(() => w.events.length >= 5, { message: "5 events" });
    expect(w.seen()).toEqual(["ADDED b", "MODIFIED a", "DELETED b", "ADDED c", "DELETED a"]);
    expect(w.events[1].object.status?.podIP).toBeUndefined();
    w.ac.abort();
    const end = await w.done;
    expect(end.ended).toBe("aborted");
    expect(end.resourceVersion).toBe(api.resourceVersion);
  });

  test("without a resourceVersion the current objects arrive as ADDED", async () => {
    api.createPod(makePod({ name: "x", ip: "10.0.0.9" }));
    const w = recorder();
    await waitFor(() => w.events.length === 1, { message: "synthetic ADDED" });
    expect(w.seen()).toEqual(["ADDED x"]);
  });

  test("bookmarks advance the resourceVersion without events", async () => {
    const { resourceVersion } = await list(client, podsPath(NS));
    const w = recorder({ resourceVersion });
    await watchOpen();
    api.createPod(makePod({ name: "elsewhere", ip: "10.9.0.1", namespace: "batch" })); // bumps RV, not our namespace
    expect(api.sendBookmark()).toBe(1);
    await waitFor(() => w.bookmarks.length === 1, { message: "bookmark" });
    expect(w.bookmarks).toEqual([api.resourceVersion]);
    expect(w.events).toHaveLength(0);
    w.ac.abort();
    expect((await w.done).resourceVersion).toBe(api.resourceVersion);
    api.deletePod("elsewhere", "batch");
  });

  test("the server ending the stream at timeoutSeconds resolves as closed", async () => {
    const { resourceVersion } = await list(client, podsPath(NS));
    const w = recorder({ resourceVersion, timeoutSeconds: 1 });
    await watchOpen();
    api.createPod(makePod({ name: "p", ip: "10.0.0.1" }));
    const end = await w.done;
    expect(end).toEqual({ ended: "closed", events: 1, resourceVersion: api.resourceVersion });
  });

  test("410 as HTTP status is a GoneError", async () => {
    const { resourceVersion } = await list(client, podsPath(NS));
    api.createPod(makePod({ name: "p", ip: "10.0.0.1" }));
    api.compact();
    const err = await rejection(recorder({ resourceVersion }).done);
    expect(err).toBeInstanceOf(GoneError);
    expect(api.requests[api.requests.length - 1]).toMatchObject({ kind: "watch", status: 410 });
  });

  test("410 as an ERROR event is a GoneError", async () => {
    api.setGoneMode("event");
    const { resourceVersion } = await list(client, podsPath(NS));
    api.createPod(makePod({ name: "p", ip: "10.0.0.1" }));
    api.compact();
    const err = await rejection(recorder({ resourceVersion }).done);
    expect(err).toBeInstanceOf(GoneError);
    expect(api.requests[api.requests.length - 1]).toMatchObject({ kind: "watch", status: 200 });
  });

  test("an ERROR 410 event in the middle of a stream is a GoneError", async () => {
    const { resourceVersion } = await list(client, podsPath(NS));
    const w = recorder({ resourceVersion });
    await watchOpen();
    api.createPod(makePod({ name: "p", ip: "10.0.0.1" }));
    await waitFor(() => w.events.length === 1);
    api.expireWatches();
    expect(await rejection(w.done)).toBeInstanceOf(GoneError);
  });

  test("other ERROR events and HTTP statuses are WatchErrors with a reason", async () => {
    const { resourceVersion } = await list(client, podsPath(NS));
    const w = recorder({ resourceVersion });
    await watchOpen();
    api.injectRawEvent(JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 500, reason: "InternalError", message: "boom" } }));
    const e1 = (await rejection(w.done)) as WatchError;
    expect([e1.constructor, e1.reason, e1.status]).toEqual([WatchError, "error-event", 500]);

    for (const [code, reason] of [[401, "unauthorized"], [403, "forbidden"], [500, "http"]] as const) {
      api.failNext("watch", code);
      const e = (await rejection(recorder({ resourceVersion }).done)) as WatchError;
      expect([e.constructor, e.reason, e.status]).toEqual([WatchError, reason, code]);
    }
  });

  test("a dropped connection rejects promptly with reason dropped", async () => {
    const { resourceVersion } = await list(client, podsPath(NS));
    const w = recorder({ resourceVersion, timeoutSeconds: 60 });
    await watchOpen();
    api.createPod(makePod({ name: "p", ip: "10.0.0.1" }));
    await waitFor(() => w.events.length === 1);
    const dropped = Date.now();
    expect(api.dropWatches()).toBe(1);
    const err = (await rejection(w.done)) as WatchError;
    expect(err).toBeInstanceOf(WatchError);
    expect(err.reason).toBe("dropped");
    expect(Date.now() - dropped).toBeLessThan(5_000); // far below the 120 s idle bound
  });

  test("a blind server is a connect error well within the connect timeout", async () => {
    await api.setBlind(true);
    try {
      const started = Date.now();
      const err = (await rejection(recorder({ connectTimeoutMs: 10_000 }).done)) as WatchError;
      expect(err).toBeInstanceOf(WatchError);
      expect(err.reason).toBe("connect");
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await api.setBlind(false);
    }
  });

  test("setBlind cuts open watches too, and the server is back afterwards", async () => {
    const w = recorder();
    await watchOpen();
    await api.setBlind(true);
    expect(((await rejection(w.done)) as WatchError).reason).toBe("dropped");
    await api.setBlind(false);
    api.createPod(makePod({ name: "back", ip: "10.0.0.1" }));
    const again = recorder();
    await waitFor(() => again.events.length === 1, { message: "watch works after blindness" });
  });

  test("a server that never answers hits the connect timeout", async () => {
    const hole = await startBlackHole();
    try {
      const silent = loadKubeClient({ kubeconfigPath: writeKubeconfig({ server: hole.url, ca: api.pki.caCert, token: api.token, path: `${api.pki.dir}/black-hole` }) });
      const err = (await rejection(
        watch(silent, podsPath(NS), { connectTimeoutMs: 300, onEvent: () => {} }),
      )) as WatchError;
      expect([err.constructor, err.reason]).toEqual([WatchError, "timeout"]);
    } finally {
      await hole.close();
    }
  });

  test("a stream that goes silent past the idle bound is treated as dropped", async () => {
    const w = recorder({ timeoutSeconds: 60, idleTimeoutMs: 400 });
    await watchOpen();
    const err = (await rejection(w.done)) as WatchError;
    expect([err.constructor, err.reason]).toEqual([WatchError, "idle"]);
    await waitFor(() => api.openWatchCount === 0, { message: "the client closed its idle watch" });
  });

  test("bytes keep an idle bound from firing", async () => {
    const w = recorder({ timeoutSeconds: 60, idleTimeoutMs: 600 });
    await watchOpen();
    for (let i = 0; i < 6; i++) {
      await Bun.sleep(200);
      api.sendBookmark();
    }
    expect(w.bookmarks.length).toBeGreaterThanOrEqual(5);
    expect(api.openWatchCount).toBe(1);
  });

  test("lines split across chunks, inside multi-byte characters, and several per chunk", async () => {
    api.setChunking({ pieces: 7, delayMs: 3 });
    const w = recorder({ resourceVersion: api.resourceVersion });
    await watchOpen();
    const note = `naïve — 模型 ${"🚀".repeat(150)}`; // long enough that cuts land inside characters
    for (let i = 0; i < 4; i++) {
      api.createPod(makePod({ name: `split-${i}`, ip: `10.0.0.${i}`, annotations: { note } }));
    }
    await waitFor(() => w.events.length === 4, { message: "4 events through fragmented chunks" });
    expect(w.events.map((e) => e.object.metadata?.annotations?.note)).toEqual([note, note, note, note]);
    api.setChunking(null);
    const two = [
      JSON.stringify({ type: "MODIFIED", object: { ...makePod({ name: "split-0", ip: "10.0.0.0" }), kind: "Pod" } }),
      JSON.stringify({ type: "MODIFIED", object: { ...makePod({ name: "split-1", ip: "10.0.0.1" }), kind: "Pod" } }),
    ].join("\r\n");
    api.injectRawEvent(two);
    await waitFor(() => w.events.length === 6, { message: "two events in one chunk" });
    expect(w.skipped).toHaveLength(0);
  });

  test("a malformed or surprising line is reported and skipped; the stream goes on", async () => {
    const w = recorder({
      resourceVersion: api.resourceVersion,
      onEvent: (e) => {
        if (e.object.metadata?.name === "poison") throw new Error("handler choked");
        w.events.push(e);
      },
    });
    await watchOpen();
    api.injectRawEvent('{"type":"ADDED","object":{"metadata":', { pieces: 3 }); // cut-off JSON, then newline
    api.injectRawEvent("not json at all");
    api.injectRawEvent(JSON.stringify({ type: "SURPRISE", object: {} }));
    api.injectRawEvent(JSON.stringify({ type: "ADDED", object: "a string" }));
    api.createPod(makePod({ name: "poison", ip: "10.0.0.66" }));
    api.createPod(makePod({ name: "fine", ip: "10.0.0.1" }));
    await waitFor(() => w.events.length === 1, { message: "the good event after the bad ones" });
    expect(w.seen()).toEqual(["ADDED fine"]);
    expect(w.skipped.map((s) => s.reason)).toEqual([
      "not JSON",
      "not JSON",
      'unknown event type "SURPRISE"',
      "ADDED event without an object with metadata",
      "onEvent threw",
    ]);
    expect(api.openWatchCount).toBe(1);
  });

  test("aborting before or during connect resolves as aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    expect((await watch(client, podsPath(NS), { signal: ac.signal, onEvent: () => {} })).ended).toBe("aborted");
    const hole = await startBlackHole();
    try {
      const silent = loadKubeClient({ kubeconfigPath: writeKubeconfig({ server: hole.url, ca: api.pki.caCert, token: api.token, path: `${api.pki.dir}/black-hole` }) });
      const late = new AbortController();
      const p = watch(silent, podsPath(NS), { signal: late.signal, onEvent: () => {} });
      setTimeout(() => late.abort(), 100);
      expect((await p).ended).toBe("aborted");
    } finally {
      await hole.close();
    }
  });
});
