/**
 * nginx and wrk for the benchmark: taken from PATH when present, else fetched as Debian packages
 * (`apt-get download`) and unpacked with `dpkg -x` into a cache directory. Nothing is installed
 * system-wide and no service is started.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

export interface Tool {
  path: string;
  env: Record<string, string>;
  version: string;
}

export interface Tools {
  nginx: Tool;
  wrk: Tool;
}

const PACKAGES = { nginx: ["nginx"], wrk: ["wrk", "libluajit-5.1-2"] } as const;

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 120_000) {
  const p = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { out, err, code };
}

function onPath(name: string): string | null {
  return Bun.which(name, { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` });
}

/** Downloads and unpacks the packages once; later runs reuse the cache. */
async function unpack(cache: string, pkgs: readonly string[]): Promise<void> {
  const debs = join(cache, "debs");
  mkdirSync(debs, { recursive: true });
  const have = readdirSync(debs);
  const missing = pkgs.filter((p) => !have.some((f) => f.startsWith(`${p}_`)));
  if (missing.length) {
    const r = await run(["apt-get", "download", ...missing], debs);
    if (r.code !== 0) throw new Error(`apt-get download ${missing.join(" ")} failed (try apt-get update first):\n${r.err}`);
  }
  for (const f of readdirSync(debs)) {
    if (!pkgs.some((p) => f.startsWith(`${p}_`))) continue;
    const r = await run(["dpkg", "-x", join(debs, f), join(cache, "root")], cache);
    if (r.code !== 0) throw new Error(`dpkg -x ${f} failed:\n${r.err}`);
  }
}

async function resolve(name: "nginx" | "wrk", cache: string): Promise<Tool> {
  const system = onPath(name);
  const local = join(cache, "root", name === "nginx" ? "usr/sbin/nginx" : "usr/bin/wrk");
  const env = { LD_LIBRARY_PATH: join(cache, "root/usr/lib/x86_64-linux-gnu") };
  let path = system;
  if (!path) {
    if (!existsSync(local)) await unpack(cache, PACKAGES[name]);
    path = local;
  }
  const v = await run([path, "-v"], cache, system ? {} : env, 10_000);
  const text = `${v.out}\n${v.err}`;
  const version = /nginx\/(\S+)/.exec(text)?.[1] ?? /wrk (\S+)/.exec(text)?.[1] ?? "unknown";
  return { path, env: system ? {} : env, version };
}

export async function ensureTools(cache: string): Promise<Tools> {
  mkdirSync(cache, { recursive: true });
  return { nginx: await resolve("nginx", cache), wrk: await resolve("wrk", cache) };
}
