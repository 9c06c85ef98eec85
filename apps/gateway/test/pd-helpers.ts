/** Shared by the pd-*.test.ts files: PD gateways over mock engines, and ways to watch their workers. */
import type { WorkerView } from "@switchboard/fleet";
import type { MockEngine } from "@switchboard/mock-engine";
import pino from "pino";
import type { RunningGateway } from "../src";
import { waitFor } from "./harness";

export const MODEL = "mock-model";

/** `--pd-disaggregation --prefill URL PORT ... --decode URL ...` for the given engines. */
export function pdFlags(prefill: MockEngine[], decode: MockEngine[], extra: string[] = []): string[] {
  const flags = ["--pd-disaggregation"];
  for (const p of prefill) flags.push("--prefill", p.url, ...(p.bootstrapPort ? [String(p.bootstrapPort)] : []));
  for (const d of decode) flags.push("--decode", d.url);
  return [...flags, ...extra];
}

export function view(gw: RunningGateway, url: string): WorkerView {
  const v = gw.fleet.index.byAddress(url);
  if (!v) throw new Error(`no worker at ${url}`);
  return v;
}

export async function ready(gw: RunningGateway, urls: string[], timeoutMs = 5000) {
  await waitFor(() => urls.every((u) => gw.fleet.index.byAddress(u)?.status === "ready"), timeoutMs, `ready: ${urls.join(", ")}`);
}

export async function released(gw: RunningGateway, timeoutMs = 3000) {
  await waitFor(() => [...gw.fleet.index.views.values()].every((v) => v.inFlight === 0), timeoutMs, "every in-flight count released");
}

/** One probe of one worker as the index saw it. */
export interface ProbeSeen {
  /** When the probe started (ms since epoch). */
  startedAt: number;
  at: number;
  healthy: boolean;
  status: string;
  engineId: string | null;
  confirmed: boolean;
  restarts: number;
}

/** Records every completed probe of the worker at `url` (the index's view after it). */
export function probeLog(gw: RunningGateway, url: string): ProbeSeen[] {
  const seen: ProbeSeen[] = [];
  let last: unknown = null;
  gw.fleet.index.onChange((c) => {
    const v = c.view;
    if (v.url !== url || !v.lastProbe || v.lastProbe === last) return;
    last = v.lastProbe;
    seen.push({
      startedAt: v.lastProbe.at - v.lastProbe.latencyMs,
      at: v.lastProbe.at,
      healthy: v.lastProbe.healthy,
      status: v.status,
      engineId: v.engineId,
      confirmed: v.engineIdConfirmed,
      restarts: v.restarts,
    });
  });
  return seen;
}

/** Waits until `n` more probes of a log have completed. */
export async function moreProbes(log: ProbeSeen[], n: number, timeoutMs = 5000) {
  const target = log.length + n;
  await waitFor(() => log.length >= target, timeoutMs, `${n} more probes`);
}

/** kv_transfer_params the decode engine received, in order. */
export const decodeParams = (d: MockEngine) => d.received.map((r) => r.kv_transfer_params);

/** A logger whose JSON lines the test can read. */
export function captureLog(level = "warn") {
  const lines: any[] = [];
  const logger = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

/** A sample's value from the gateway's /metrics (0 when absent). */
export async function metric(gw: RunningGateway, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

export const chat = (content = "hello there", over: Record<string, unknown> = {}) => ({ model: MODEL, messages: [{ role: "user" as const, content }], max_tokens: 4, ...over });

/**
 * How much `count` moved over `n` consecutive probes that were all healthy and Ready. A window
 * that a failed probe spoiled (a slow machine) is retried: NotReady rightly re-reads.
 */
export async function steadyDelta(log: ProbeSeen[], n: number, count: () => number, attempts = 4): Promise<number> {
  for (let i = 0; i < attempts; i++) {
    const from = log.length;
    const before = count();
    await moreProbes(log, n);
    const after = count();
    const window = log.slice(from);
    if (window.every((s) => s.healthy && s.status === "ready" && s.confirmed)) return after - before;
  }
  throw new Error(`no ${n} consecutive healthy Ready probes in ${attempts} tries`);
}
