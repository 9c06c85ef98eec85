import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { GatewayParts, RunningGateway } from "@switchboard/gateway";
import type { BrowserContext, Page } from "playwright-core";
import { ensureChromium, launchChromium } from "./chromium";
import { Rig, waitFor } from "./gateways";

const WORKERS = 1000;
const DOWN = 200;
const ARTIFACTS = join(import.meta.dir, "../../../artifacts");
const chromium = await ensureChromium();
if (!chromium.ok) console.log(`SKIPPED scale browser test: headless Chromium is not available (${chromium.why})`);

const rig = new Rig();
let browser: { context: BrowserContext; close: () => Promise<void> } | undefined;
afterAll(async () => {
  await browser?.close();
  await rig.close();
});

// 1,000 engines would be 1,000 servers: the probe is answered in-process instead, so the gateway,
// its actors, the live stream and the page all run for real at that size.
type ProbeFn = NonNullable<NonNullable<GatewayParts["probes"]>["http"]>;
const down = new Set<string>();
const probe: ProbeFn = async (req) => ({
  healthy: !down.has(req.spec.url),
  detail: down.has(req.spec.url) ? "/health answered 503" : "ok",
  latencyMs: 1,
  models: req.wantModels ? [{ id: "mock-model" }] : undefined,
  identity: req.wantIdentity ? { engineId: `engine-${new URL(req.spec.url).port}`, incarnation: "1" } : undefined,
});

const urls = Array.from({ length: WORKERS }, (_, i) => `http://127.0.0.1:${20000 + i}`);

type Stats = { frames: number; maxFrameMs: number; lastFrameMs: number };
const stats = (page: Page) => page.evaluate(() => (window as unknown as { __visualizer: { stats: Stats } }).__visualizer.stats);
/** All the chart's counts at one instant (reading them one by one races the next frame). */
const counts = (page: Page) =>
  page.evaluate(() => Object.fromEntries(Array.from(document.querySelectorAll<SVGGElement>("svg.statechart g.state")).map((g) => [g.dataset.state, Number(g.querySelector(".count")?.textContent ?? 0)])));

describe.skipIf(!chromium.ok)("1,000 workers on the page", () => {
  let gw: RunningGateway;
  let page: Page;

  beforeAll(async () => {
    gw = rig.gatewayWith(
      ["--worker-urls", ...urls, "--health-check-interval-secs", "1", "--health-check-fast-interval-secs", "0.3", "--health-success-threshold", "1", "--health-failure-threshold", "1"],
      { probes: { http: probe } },
    );
    await waitFor(() => gw.fleet.index.readyCount() === WORKERS, 30_000, "1,000 workers ready");
    browser = await launchChromium();
    page = await browser.context.newPage();
  }, 60_000);

  test("the table is virtualised and every worker can be reached by scrolling", async () => {
    await page.goto(`${gw.url}/ui`, { timeout: 20_000 });
    await page.waitForFunction((n) => document.querySelector('svg.statechart g.state[data-state="ready"] text.count')?.textContent === String(n), WORKERS, { timeout: 20_000 });
    expect(await page.locator("#shown").textContent()).toBe(`${WORKERS} workers`);
    const inDom = await page.locator("#table-viewport .row").count();
    expect(inDom).toBeLessThan(100);
    await page.locator("#table-viewport").evaluate((v) => (v.scrollTop = v.scrollHeight));
    const last = [...urls].sort().at(-1)!;
    await page.waitForSelector(`#table-viewport .row[data-url="${last}"]:not([hidden])`, { timeout: 5000 });
    expect(await page.locator("#table-viewport .row").count()).toBeLessThan(100);
  }, 40_000);

  test("a fifth of the fleet going down shows on the page; the page keeps drawing", async () => {
    await page.locator("#table-viewport").evaluate((v) => (v.scrollTop = 0));
    const before = await stats(page);
    const t0 = Date.now();
    for (const u of urls.slice(0, DOWN)) down.add(u);
    await page.waitForFunction((n) => document.querySelector('svg.statechart g.state[data-state="ready"] text.count')?.textContent === String(n), WORKERS - DOWN, { timeout: 20_000 });
    const seen = Date.now() - t0;
    const c = await counts(page);
    expect(c.not_ready! + c.failed!).toBe(DOWN);
    expect(c.ready! + c.not_ready! + c.failed! + c.pending! + c.draining!).toBe(WORKERS);
    // Filter to the broken ones through the chart, as an operator would.
    await page.locator('svg.statechart g.state[data-state="not_ready"]').click();
    const filtered = await page.locator("#shown").textContent();
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "visualizer-1000.png") });
    const after = await stats(page);
    console.log(`[scale] ${DOWN} of ${WORKERS} down seen on the page after ${seen} ms; ${after.frames - before.frames} frames, longest frame ${after.maxFrameMs.toFixed(1)} ms; filter shows "${filtered}"`);
    expect(after.frames).toBeGreaterThan(before.frames);

    for (const u of urls.slice(0, DOWN)) down.delete(u);
    await page.waitForFunction((n) => document.querySelector('svg.statechart g.state[data-state="ready"] text.count')?.textContent === String(n), WORKERS, { timeout: 20_000 });
  }, 60_000);
});
