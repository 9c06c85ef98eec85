import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GraphTransition, MachineGraph } from "../src/live";
import type { RunningGateway } from "../src";
import { Harness, testConfig } from "./harness";

const h = new Harness();
let gw: RunningGateway;
let doc: { worker: MachineGraph; discovery: Record<string, MachineGraph> };

beforeAll(async () => {
  const e = await h.engine();
  gw = h.gateway(testConfig(["--worker-urls", e.url]));
  const res = await fetch(`${gw.url}/machine`, { signal: AbortSignal.timeout(5000) });
  expect(res.status).toBe(200);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  doc = (await res.json()) as typeof doc;
});
afterAll(() => h.close());

const between = (from: string, to: string) => (t: GraphTransition) => t.source === from && t.targets.includes(to);

describe("GET /machine", () => {
  test("the worker machine's top-level states, as the machine defines them", () => {
    const states = doc.worker.root.states.map((s) => [s.key, s.type]);
    expect(states).toEqual([
      ["pending", "compound"],
      ["ready", "compound"],
      ["not_ready", "compound"],
      ["failed", "compound"],
      ["draining", "atomic"],
      ["stopped", "final"],
    ]);
    expect(doc.worker.root.initial).toBe("pending");
    const ready = doc.worker.root.states.find((s) => s.key === "ready")!;
    expect(ready.states.map((s) => s.key)).toEqual(["waiting", "probing", "judging"]);
    expect(ready.entry).toEqual(["enterState"]);
    expect(doc.worker.root.states.find((s) => s.key === "draining")!.invoke).toEqual(["waitForIdle"]);
  });

  test("transitions carry event labels and guards", () => {
    const t = doc.worker.transitions;
    expect(t.find(between("worker", "worker.draining"))).toMatchObject({ kind: "event", label: "worker.drain" });
    expect(t.find(between("worker.pending.judging", "worker.ready"))).toMatchObject({ kind: "always", guard: "promotable" });
    expect(t.find(between("worker.ready.judging", "worker.not_ready"))).toMatchObject({ guard: "failedEnough" });
    expect(t.find(between("worker.not_ready.judging", "worker.failed"))).toMatchObject({ guard: "failedLong" });
    expect(t.find(between("worker.ready", "worker.not_ready"))).toMatchObject({ kind: "event", label: "worker.passiveFailure", actions: ["notePassive"] });
    expect(t.filter(between("worker.ready.waiting", "worker.ready.probing")).map((x) => x.label).sort()).toEqual(["after interval", "worker.refreshModels"]);
    expect(t.find(between("worker.ready.probing", "worker.ready.judging"))).toMatchObject({ kind: "done", label: "probe done", actions: ["recordProbe"] });
    expect(t.filter(between("worker.draining", "worker.stopped")).map((x) => x.label).sort()).toEqual(["waitForIdle done", "waitForIdle error"]);
    // Internal xstate actions are not the author's words.
    expect(JSON.stringify(doc.worker)).not.toContain("xstate.raise");
  });

  test("the discovery machines the fleet runs are there too", () => {
    expect(Object.keys(doc.discovery).sort()).toEqual(["admin", "static"]);
    expect(doc.discovery.admin!.transitions.map((t) => t.event).sort()).toEqual(["admin.forget", "admin.patch", "admin.register"]);
  });

  test("answers CORS preflight for a page served elsewhere", async () => {
    for (const path of ["/machine", "/live"]) {
      const res = await fetch(`${gw.url}${path}`, { method: "OPTIONS", headers: { origin: "http://127.0.0.1:9", "access-control-request-headers": "authorization" } });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-headers")).toContain("authorization");
    }
  });
});

describe("GET /ui", () => {
  test("serves the page and its script, built offline from apps/visualizer", async () => {
    const html = await fetch(`${gw.url}/ui`, { signal: AbortSignal.timeout(20_000) });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toStartWith("text/html");
    const text = await html.text();
    expect(text).toContain('src="/ui/app.js"');
    expect(text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from a CDN
    const js = await fetch(`${gw.url}/ui/app.js`, { signal: AbortSignal.timeout(20_000) });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toStartWith("text/javascript");
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(`${gw.url}/ui/app.css`, { signal: AbortSignal.timeout(5000) });
    expect(css.status).toBe(200);
  });
});
