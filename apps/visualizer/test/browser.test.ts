import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { RunningGateway } from "@switchboard/gateway";
import type { MockEngine } from "@switchboard/mock-engine";
import type { BrowserContext, Page } from "playwright-core";
import { startVisualizer, type RunningVisualizer } from "../src";
import { ensureChromium, launchChromium } from "./chromium";
import { Rig, waitFor } from "./gateways";

const ARTIFACTS = join(import.meta.dir, "../../../artifacts");
const chromium = await ensureChromium();
if (!chromium.ok) console.log(`SKIPPED browser tests: headless Chromium is not available (${chromium.why})`);

const rig = new Rig();
let browser: { context: BrowserContext; close: () => Promise<void> } | undefined;
let visualizer: RunningVisualizer | undefined;

afterAll(async () => {
  visualizer?.stop();
  await browser?.close();
  await rig.close();
});

const row = (url: string) => `#table-viewport .row[data-url="${url}"]`;

/** All the chart's counts at one instant (reading them one by one races the next frame). */
function counts(page: Page): Promise<Record<string, number>> {
  return page.evaluate(() => Object.fromEntries(Array.from(document.querySelectorAll<SVGGElement>("svg.statechart g.state")).map((g) => [g.dataset.state, Number(g.querySelector(".count")?.textContent ?? 0)])));
}

// Each step waits on the page with its own bounds; the test bound is above their sum.
const STEP = 30_000;

describe.skipIf(!chromium.ok)("the visualizer page in headless Chromium", () => {
  let a: MockEngine;
  let b: MockEngine;
  let gw: RunningGateway;
  let page: Page;

  beforeAll(async () => {
    a = await rig.engine();
    b = await rig.engine();
    gw = rig.gatewayWith(["--worker-urls", a.url, b.url]);
    await waitFor(() => gw.fleet.index.readyCount() === 2, 10_000, "both workers ready");
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on("pageerror", (e) => console.log(`[page error] ${e.message}`));
  }, STEP);

  test("served by the gateway at /ui: the statechart and a row per worker", async () => {
    await page.goto(`${gw.url}/ui`, { timeout: 20_000 });
    await page.waitForSelector('#conn[data-state="live"]', { timeout: 10_000 });
    // The chart is drawn from GET /machine: every top-level state, labelled arrows.
    const states = await page.$$eval("svg.statechart g.state", (gs) => gs.map((g) => (g as SVGGElement).dataset.state));
    expect(states.sort()).toEqual(["draining", "failed", "not_ready", "pending", "ready", "stopped"]);
    const labels = await page.$$eval("svg.statechart .edge-label", (ts) => ts.map((t) => t.textContent ?? ""));
    expect(labels.some((l) => l.includes("worker.drain"))).toBe(true);
    expect(labels.some((l) => l.includes("[promotable]"))).toBe(true);
    expect(labels.some((l) => l.includes("worker.passiveFailure"))).toBe(true);
    expect(await page.locator("svg.statechart path.edge").count()).toBeGreaterThanOrEqual(7);

    await page.waitForSelector(`${row(a.url)}[data-status="ready"]`, { timeout: 10_000 });
    await page.waitForSelector(`${row(b.url)}[data-status="ready"]`, { timeout: 10_000 });
    expect(await page.locator(`${row(a.url)} .c-models`).textContent()).toBe("mock-model");
    expect(await page.locator(`${row(a.url)} .c-source`).textContent()).toBe("static");
    expect(await page.locator(`${row(a.url)} .c-why`).textContent()).toContain("consecutive healthy probes");
    expect((await counts(page)).ready).toBe(2);
    expect(await page.locator('#sources-body tr[data-source="static"][data-connected="true"]').count()).toBe(1);
  }, STEP);

  test("an engine going unhealthy changes its row, the chart and the log, without a reload", async () => {
    await page.evaluate(() => ((window as unknown as { noReload: number }).noReload = 42));
    a.setFault({ unhealthy: true });
    await page.waitForSelector(`${row(a.url)}:not([data-status="ready"])`, { timeout: 10_000 });
    await page.waitForFunction(() => document.querySelector('svg.statechart g.state[data-state="ready"] text.count')?.textContent === "1", undefined, { timeout: 10_000 });
    const c = await counts(page);
    expect(c.not_ready! + c.failed!).toBe(1);
    expect(await page.locator(`${row(a.url)} .c-why`).textContent()).toContain("consecutive failures");
    await page.waitForSelector(`#log-list .log-entry.kind-status.to-not_ready a[data-worker]`, { timeout: 5000 });

    // Its own history, from a click on its row.
    await page.locator(row(a.url)).click();
    await page.waitForSelector(`#detail .history li.to-not_ready`, { timeout: 5000 });
    expect(await page.locator("#detail h3").textContent()).toBe(a.url);
    expect(await page.locator("#detail .history").textContent()).toContain("ready → not_ready");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "visualizer.png"), fullPage: true });
    expect(await page.evaluate(() => (window as unknown as { noReload?: number }).noReload)).toBe(42);
  }, STEP);

  test("restored, it comes back to ready on the page", async () => {
    a.clearFaults();
    await page.waitForSelector(`${row(a.url)}[data-status="ready"]`, { timeout: 10_000 });
    await page.waitForFunction(() => document.querySelector('svg.statechart g.state[data-state="ready"] text.count')?.textContent === "2", undefined, { timeout: 10_000 });
    await page.waitForSelector(`#detail .history li.to-ready`, { timeout: 5000 });
    await page.waitForSelector(`#log-list .log-entry.kind-status.to-ready`, { timeout: 5000 });
    expect(await page.evaluate(() => (window as unknown as { noReload?: number }).noReload)).toBe(42);
  }, STEP);

  test("a worker removed through the admin API leaves the table; its history stays readable", async () => {
    const c = await rig.engine();
    const res = await fetch(`${gw.url}/workers`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: c.url }) });
    const { id } = (await res.json()) as { id: string };
    await page.waitForSelector(`${row(c.url)}[data-status="ready"]`, { timeout: 10_000 });
    await page.locator(row(c.url)).click();
    await fetch(`${gw.url}/workers/${id}`, { method: "DELETE" });
    await page.waitForSelector(row(c.url), { state: "hidden", timeout: 10_000 });
    await page.waitForSelector('#detail .pill[data-status="gone"]', { timeout: 5000 });
    await page.waitForSelector(`#log-list .log-entry.kind-removed`, { timeout: 5000 });
  }, STEP);

  test("`bun run visualizer` serves the page elsewhere; with an admin key it needs ?token=", async () => {
    const key = "visualizer-test-key";
    const secured = rig.gatewayWith(["--worker-urls", b.url, "--admin-api-key", key]);
    visualizer = await startVisualizer({ gateway: secured.url, host: "127.0.0.1", port: 0 });
    const p = await browser!.context.newPage();
    try {
      await p.goto(visualizer.url, { timeout: 20_000 });
      await p.waitForSelector('#conn[data-state="unauthorized"]', { timeout: 10_000 });
      await p.goto(`${visualizer.url}/?token=${key}`, { timeout: 20_000 });
      await p.waitForSelector('#conn[data-state="live"]', { timeout: 10_000 });
      await p.waitForSelector(`${row(b.url)}[data-status="ready"]`, { timeout: 10_000 });
      expect(await p.locator("#gateway").textContent()).toBe(secured.url);
    } finally {
      await p.close();
    }
  }, STEP);
});
