import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeKubeApi, makePod, startFakeKubeApi, waitFor } from "../src/index.ts";

let api: FakeKubeApi;

beforeAll(async () => {
  api = await startFakeKubeApi({ namespace: "serving" });
  api.createPod(makePod({ name: "p0", ip: "10.0.0.1", labels: { app: "vllm" } }));
});

afterAll(() => api.close());

/** Plain Bun fetch against the fake, trusting its CA. */
const get = (path: string, opts: { token?: string; signal?: AbortSignal } = {}) =>
  fetch(api.url + path, {
    tls: { ca: api.pki.caCert },
    headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
    signal: opts.signal ?? AbortSignal.timeout(5_000),
  });

describe("fake Kubernetes API server", () => {
  test("answers without credentials with a 401 Status", async () => {
    const res = await get("/api/v1/namespaces/serving/pods");
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: "Status", code: 401, reason: "Unauthorized" });
  });

  test("lists like the API server: a typed list, items without kind, the list's resourceVersion", async () => {
    const res = await get("/api/v1/namespaces/serving/pods?labelSelector=app%3Dvllm", { token: api.token });
    const body = await res.json();
    expect(body.kind).toBe("PodList");
    expect(body.metadata.resourceVersion).toBe(api.resourceVersion);
    expect(body.items).toHaveLength(1);
    expect(body.items[0].kind).toBeUndefined();
    expect(body.items[0].metadata.namespace).toBe("serving");
  });

  test("rejects a selector it cannot parse with 400", async () => {
    const res = await get("/api/v1/namespaces/serving/pods?labelSelector=app%20in%20(a,b)", { token: api.token });
    expect(res.status).toBe(400);
  });

  test("sends watch headers before the first event", async () => {
    const ac = new AbortController();
    const res = await get(`/api/v1/namespaces/serving/pods?watch=1&resourceVersion=${api.resourceVersion}`, {
      token: api.token,
      signal: AbortSignal.any([ac.signal, AbortSignal.timeout(5_000)]),
    });
    expect(res.status).toBe(200);
    expect(api.openWatchCount).toBe(1);
    ac.abort();
    await waitFor(() => api.openWatchCount === 0, { message: "watch closed after client abort" });
  });

  test("blind refuses connections, then serves again on the same port", async () => {
    const port = api.port;
    await api.setBlind(true);
    const err = await get("/api/v1/namespaces/serving/pods", { token: api.token }).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    await api.setBlind(false);
    expect(api.port).toBe(port);
    expect((await get("/api/v1/namespaces/serving/pods", { token: api.token })).status).toBe(200);
  });
});

describe("waitFor", () => {
  test("resolves once the condition holds", async () => {
    let n = 0;
    await waitFor(() => ++n >= 3, { intervalMs: 1 });
    expect(n).toBe(3);
  });

  test("rejects after its bound, naming what it waited for", async () => {
    const err = await waitFor(() => false, { timeoutMs: 50, message: "the moon" }).catch((e) => e);
    expect(String(err)).toContain("the moon");
  });
});
