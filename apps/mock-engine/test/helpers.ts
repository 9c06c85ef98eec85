import OpenAI from "openai";
import type { MockEngine } from "../src/index.ts";

/** Polls `cond` until it holds or `timeoutMs` passes (then throws with `what`). */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 3_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}

export function client(engine: MockEngine): OpenAI {
  return new OpenAI({ baseURL: `${engine.url}/v1`, apiKey: "unused", timeout: 5_000, maxRetries: 0 });
}

/** A bounded fetch: every test request has a deadline. */
export function get(url: string, init: RequestInit = {}, timeoutMs = 2_000): Promise<Response> {
  return fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(timeoutMs) });
}

export function post(url: string, body: unknown, timeoutMs = 2_000): Promise<Response> {
  return get(url, { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers: { "content-type": "application/json" } }, timeoutMs);
}

/** The value of one Prometheus sample (first line whose name and labels match). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || (line[name.length] !== "{" && line[name.length] !== " ")) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

export async function scrape(engine: MockEngine, name: string, labels?: Record<string, string>): Promise<number | undefined> {
  const res = await get(`${engine.url}/metrics`);
  return metricValue(await res.text(), name, labels);
}
