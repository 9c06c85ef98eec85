/**
 * HTTP (vLLM + Mooncake bootstrap /query) prefills that restart: decode params must always name the
 * prefill's current engine id. Probing: interval 0.2 s, fast 0.05 s, timeout 0.5 s, 3 failures → NotReady.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { MockEngine } from "@switchboard/mock-engine";
import type { RunningGateway } from "../src";
import { Harness, post, testConfig, waitFor } from "./harness";
import { captureLog, chat, metric, moreProbes, pdFlags, probeLog, ready, released, steadyDelta, view, type ProbeSeen } from "./pd-helpers";

const h = new Harness();
let p: MockEngine; // the prefill that restarts
let other: MockEngine; // another prefill (own model), probed alongside
let noId: MockEngine; // a prefill whose bootstrap names no engine
let d: MockEngine;
let gw: RunningGateway;
let client: OpenAI;
let pLog: ProbeSeen[];
let otherLog: ProbeSeen[];
let noIdLog: ProbeSeen[];
const log = captureLog();

const prefill = (model: string) => h.engine({ models: [model], role: "prefill", kvConnector: "MooncakeConnector", bootstrapPort: 0 });

/** Sends `n` PD requests for `model` (streamed and not) and returns the engine ids the decode legs named. */
async function decodeIds(n: number, model = "mock-model"): Promise<(string | undefined)[]> {
  const from = d.received.length;
  for (let i = 0; i < n; i++) {
    if (i % 2) {
      const s = await client.chat.completions.create({ ...chat(`q${i}`), model, stream: true });
      for await (const _ of s);
    } else {
      await client.completions.create({ model, prompt: `q${i}`, max_tokens: 2 });
    }
  }
  return d.received.slice(from).map((r) => r.kv_transfer_params?.remote_engine_id as string | undefined);
}

beforeAll(async () => {
  p = await prefill("mock-model");
  other = await prefill("other-model");
  noId = await prefill("noid-model");
  noId.setFault({ bootstrapNoEngineId: true });
  d = await h.engine({ models: ["mock-model", "other-model", "noid-model"], role: "decode", kvConnector: "MooncakeConnector" });
  gw = h.gateway(testConfig(pdFlags([p, other, noId], [d])), { logger: log.logger });
  pLog = probeLog(gw, p.url);
  otherLog = probeLog(gw, other.url);
  noIdLog = probeLog(gw, noId.url);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: "unused", maxRetries: 0 });
  await ready(gw, [p.url, other.url, noId.url, d.url]);
  await waitFor(() => view(gw, p.url).engineId === p.state.engineId, 5000, "engine id read");
});
afterAll(() => h.close());

describe("HTTP prefill restarts (Mooncake bootstrap /query)", () => {
  test("restart with downtime and a new id: after Ready again every decode names the new id, none the old", async () => {
    const old = p.state.engineId;
    expect(await decodeIds(2)).toEqual([old, old]);

    const restarted = p.restart({ downtimeMs: 1_200 });
    const fresh = p.state.engineId;
    expect(fresh).not.toBe(old);
    await waitFor(() => view(gw, p.url).status === "not_ready", 5000, "prefill NotReady");
    await restarted;
    await ready(gw, [p.url]);

    expect(view(gw, p.url).engineId).toBe(fresh);
    const ids = await decodeIds(6);
    expect(ids).toEqual(Array(6).fill(fresh));
    expect(d.received.slice(-6).every((r) => r.kvPull?.ok)).toBe(true);
    await released(gw);
  });

  test("restart with downtime while /metrics is unreadable: the re-read before promotion (not the incarnation) finds the new id", async () => {
    p.setFault({ metricsFail: true });
    try {
      await moreProbes(pLog, 1);
      const restarted = p.restart({ downtimeMs: 1_200 });
      const fresh = p.state.engineId;
      await waitFor(() => view(gw, p.url).status === "not_ready", 5000, "prefill NotReady");
      await restarted;
      await ready(gw, [p.url]);
      expect(view(gw, p.url).engineId).toBe(fresh);
      expect(await decodeIds(4)).toEqual(Array(4).fill(fresh));
    } finally {
      p.clearFaults();
    }
    await moreProbes(pLog, 2); // the incarnation is readable again
  });

  test("in-place restart faster than any failed probe: detected by the first probe after it, new id used", async () => {
    const before = view(gw, p.url).restarts;
    const from = pLog.length;
    const t0 = Date.now();
    await p.restart(); // no downtime: the next probe sees a new process start time
    const fresh = p.state.engineId;
    // A probe that started after the restart (within one interval of it) must already know.
    await waitFor(() => pLog.slice(from).some((s) => s.healthy && s.startedAt > t0 + 20), 5000, "a healthy probe that started after the restart");
    const firstAfter = pLog.slice(from).find((s) => s.healthy && s.startedAt > t0 + 20)!;
    expect(firstAfter.engineId).toBe(fresh);
    expect(firstAfter.restarts).toBe(before + 1);
    // Never out of Ready: the restart was found without a failure run.
    expect(pLog.slice(from).every((s) => s.status === "ready")).toBe(true);
    expect(await decodeIds(4)).toEqual(Array(4).fill(fresh));
    expect(await metric(gw, "switchboard_engine_restarts_total", { worker: view(gw, p.url).id })).toBeGreaterThanOrEqual(1);
  });

  test("partial bootstrap answer: previous id kept (unconfirmed) and re-read every probe until one completes", async () => {
    const old = p.state.engineId;
    expect(view(gw, p.url).engineId).toBe(old);
    p.setFault({ partialBootstrap: true });
    const restarts = view(gw, p.url).restarts;
    await p.restart(); // the probe notices the new process and reads /query: partial
    const fresh = p.state.engineId;
    await waitFor(() => view(gw, p.url).restarts === restarts + 1, 5000, "restart noticed");
    expect(view(gw, p.url).engineId).toBe(old);
    expect(view(gw, p.url).engineIdConfirmed).toBe(false);

    const q = p.state.bootstrapQueries;
    await moreProbes(pLog, 3);
    expect(p.state.bootstrapQueries).toBeGreaterThanOrEqual(q + 2); // retried on the following probes
    expect(view(gw, p.url).engineId).toBe(old);
    expect(view(gw, p.url).status).toBe("ready");

    p.clearFaults();
    await waitFor(() => view(gw, p.url).engineId === fresh, 5000, "new id once a read completes");
    expect(view(gw, p.url).engineIdConfirmed).toBe(true);
    expect(await steadyDelta(pLog, 4, () => p.state.bootstrapQueries)).toBe(0); // confirmed: no more reads
    expect(await decodeIds(2)).toEqual([fresh, fresh]);
  });

  test("bootstrap /query that hangs: the worker keeps its id, stays Ready and probed; other workers' probes go on", async () => {
    const old = p.state.engineId;
    p.setFault({ hangBootstrap: true });
    try {
      await p.restart(); // new process: the probe will try to read its id and hang
      const fresh = p.state.engineId;
      await waitFor(() => view(gw, p.url).engineIdConfirmed === false, 5000, "read did not complete");
      const mine = pLog.length;
      const theirs = otherLog.length;
      await moreProbes(pLog, 3);
      const stuck = pLog.slice(mine);
      expect(stuck.every((s) => s.healthy && s.status === "ready" && s.engineId === old && !s.confirmed)).toBe(true);
      expect(otherLog.length - theirs).toBeGreaterThanOrEqual(3);
      expect(view(gw, other.url).status).toBe("ready");
      p.clearFaults();
      await waitFor(() => view(gw, p.url).engineId === fresh && view(gw, p.url).engineIdConfirmed, 5000, "new id read");
    } finally {
      p.clearFaults();
    }
  });

  test("an engine that reports no id: read once, not on every probe; its requests decode without remote params", async () => {
    const v = view(gw, noId.url);
    expect(v.engineId).toBeNull();
    expect(v.engineIdConfirmed).toBe(true);
    expect(noId.state.bootstrapQueries).toBeGreaterThanOrEqual(1);
    expect(await steadyDelta(noIdLog, 5, () => noId.state.bootstrapQueries)).toBe(0);

    const before = await metric(gw, "switchboard_pd_unminted_total", { connector: "MooncakeConnector", reason: "no_engine_id" });
    const warns = log.lines.length;
    const res = await post(`${gw.url}/v1/chat/completions`, { ...chat(), model: "noid-model" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBeTruthy();
    expect(d.received.at(-1)!.kv_transfer_params).toBeUndefined();
    expect(noId.received).toHaveLength(0);
    expect(await metric(gw, "switchboard_pd_unminted_total", { connector: "MooncakeConnector", reason: "no_engine_id" })).toBe(before + 1);
    expect(log.lines.slice(warns).some((l) => l.level === 40 && l.reason === "no_engine_id" && l.prefill_url === noId.url)).toBe(true);
    await released(gw);
  });
});
