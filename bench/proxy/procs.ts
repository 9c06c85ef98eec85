/** Child processes of the benchmark, and what /proc says about them. */
import { openSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const root = new URL("../../", import.meta.url).pathname;
const bun = process.execPath;
const CLK_TCK = 100; // Linux USER_HZ on every mainstream build

export interface Child {
  pid: number;
  proc: Subprocess;
  stop(): Promise<void>;
}

/** A child with its output in a log file (never a pipe nobody drains). Stopped by pid: SIGTERM, then SIGKILL. */
export function spawnChild(name: string, cmd: string[], logDir: string, env: Record<string, string> = {}): Child {
  const log = openSync(join(logDir, `${name}.log`), "w");
  const proc = Bun.spawn(cmd, { cwd: root, stdout: log, stderr: log, stdin: "ignore", env: { ...process.env, ...env } });
  return {
    pid: proc.pid,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(3000).then(() => false)]);
      if (!done) {
        proc.kill("SIGKILL");
        await Promise.race([proc.exited, Bun.sleep(2000)]);
      }
    },
  };
}

export function bunScript(script: string, args: string[]): string[] {
  return [bun, join(root, script), ...args];
}

/** A loopback port nobody listens on right now. */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Polls `url` until it answers `ok(status, body)`; throws after `timeoutMs`. */
export async function waitHttp(url: string, timeoutMs: number, ok: (status: number, body: string) => boolean = (s) => s < 500, child?: Child): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < until) {
    if (child && child.proc.exitCode !== null) throw new Error(`${url}: process exited with ${child.proc.exitCode}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await r.text();
      if (ok(r.status, body)) return;
      last = `${r.status} ${body.slice(0, 200)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await Bun.sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${url}: ${last}`);
}

/** CPU seconds used by a process and all its threads (and, for nginx, its workers). */
export function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // gone
    }
  }
  return ticks / CLK_TCK;
}

/** Resident memory in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Direct children of a process (nginx master → workers). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      // raced with exit
    }
  }
  return out;
}

export function cpuModel(): string {
  try {
    return /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}
