/** Load from wrk: POST bodies from a Lua script, results as one JSON line printed by the script's `done`. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "./tools.ts";

export interface WrkResult {
  requests: number;
  seconds: number;
  /** Connect, read, write and timeout errors, plus non-2xx answers. */
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

/** Chat bodies with distinct prompts, so prefix-aware policies see more than one prefix. */
export function chatBodies(model: string, n = 16): string[] {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ model, messages: [{ role: "user", content: `Request ${i}: say hello in one short sentence.` }], max_tokens: 8 }),
  );
}

function luaString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** Writes the Lua script: requests pre-formatted once, cycled per call (cheap on wrk's side). */
export function writeScript(dir: string, name: string, path: string, bodies: string[]): string {
  const file = join(dir, `${name}.lua`);
  writeFileSync(
    file,
    `local bodies = { ${bodies.map(luaString).join(", ")} }
local reqs = {}
local i = 0
init = function(args)
  for k, b in ipairs(bodies) do
    reqs[k] = wrk.format("POST", ${luaString(path)}, { ["Content-Type"] = "application/json" }, b)
  end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format('BENCH {"requests":%d,"duration_us":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
    s.requests, s.duration, e.connect + e.read + e.write + e.timeout + e.status, latency:percentile(50), latency:percentile(99)))
end
`,
  );
  return file;
}

/** Runs wrk for `seconds` against `url` with `connections`; bounded by a kill a few seconds after. */
export async function runWrk(wrk: Tool, url: string, script: string, seconds: number, connections = 32): Promise<WrkResult> {
  const cmd = [wrk.path, "-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "5s", "-s", script, url];
  const p = Bun.spawn(cmd, { env: { ...process.env, ...wrk.env }, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), (seconds + 10) * 1000);
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  const line = /BENCH (\{.*\})/.exec(out)?.[1];
  if (!line) throw new Error(`wrk gave no result for ${url}:\n${out}\n${err}`);
  const r = JSON.parse(line) as { requests: number; duration_us: number; errors: number; p50: number; p99: number };
  return { requests: r.requests, seconds: r.duration_us / 1e6, errors: r.errors, p50Ms: r.p50 / 1000, p99Ms: r.p99 / 1000 };
}
