import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's chromium; never a browser downloaded by playwright. */
export const CHROMIUM = "/usr/bin/chromium";
const INSTALL_BOUND_MS = 8 * 60_000;

async function run(cmd: string[], timeoutMs: number): Promise<{ ok: boolean; tail: string }> {
  try {
    const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    const timer = setTimeout(() => p.kill(), timeoutMs);
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    clearTimeout(timer);
    return { ok: code === 0, tail: `${out}\n${err}`.trim().split("\n").slice(-3).join(" | ") };
  } catch (e) {
    return { ok: false, tail: String(e) };
  }
}

/**
 * Chromium for the browser tests: there already, or installed with apt-get (bounded). When it
 * cannot be had, says why, so the test can skip loudly instead of failing on a missing binary.
 */
export async function ensureChromium(): Promise<{ ok: true } | { ok: false; why: string }> {
  if (existsSync(CHROMIUM)) return { ok: true };
  if (process.env.SWITCHBOARD_NO_APT === "1") return { ok: false, why: `${CHROMIUM} is missing and SWITCHBOARD_NO_APT=1` };
  if (!Bun.which("apt-get")) return { ok: false, why: `${CHROMIUM} is missing and there is no apt-get here` };
  console.log(`[browser test] ${CHROMIUM} missing: running apt-get update && apt-get install -y chromium (bounded ${INSTALL_BOUND_MS / 60_000} min)`);
  const deadline = Date.now() + INSTALL_BOUND_MS;
  const update = await run(["apt-get", "update"], INSTALL_BOUND_MS);
  if (!update.ok) return { ok: false, why: `apt-get update failed: ${update.tail}` };
  const install = await run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"], Math.max(1000, deadline - Date.now()));
  if (!install.ok || !existsSync(CHROMIUM)) return { ok: false, why: `apt-get install chromium failed: ${install.tail}` };
  return { ok: true };
}

/** A headless Chromium with a fresh profile; `close` removes the profile too. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "switchboard-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60_000,
    viewport: { width: 1500, height: 940 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
