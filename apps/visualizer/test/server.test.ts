import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startVisualizer, type RunningVisualizer } from "../src";

const running: RunningVisualizer[] = [];
const procs: Bun.Subprocess[] = [];
afterAll(() => {
  for (const v of running) v.stop();
  for (const p of procs) p.kill();
});

describe("the standalone visualizer server", () => {
  test("serves the page pointed at the gateway, and its assets", async () => {
    const v = await startVisualizer({ gateway: "http://127.0.0.1:30000/", port: 0 });
    running.push(v);
    const html = await (await fetch(`${v.url}/`, { signal: AbortSignal.timeout(5000) })).text();
    expect(html).toContain('<meta name="switchboard-gateway" content="http://127.0.0.1:30000">');
    expect(html).toContain('src="/app.js"');
    const js = await fetch(`${v.url}/app.js`, { signal: AbortSignal.timeout(5000) });
    expect(js.headers.get("content-type")).toStartWith("text/javascript");
    expect(await js.text()).toContain("/live");
    expect((await fetch(`${v.url}/app.css`)).status).toBe(200);
    expect(await (await fetch(`${v.url}/health`)).json()).toEqual({ status: "ok", gateway: "http://127.0.0.1:30000" });
    expect((await fetch(`${v.url}/nope`)).status).toBe(404);
  });

  test("`bun run visualizer` starts from the command line and refuses a bad gateway URL", async () => {
    const main = join(import.meta.dir, "../src/main.ts");
    const bad = Bun.spawn([process.execPath, main, "--gateway", "not a url"], { stdout: "pipe", stderr: "pipe" });
    procs.push(bad);
    expect(await bad.exited).not.toBe(0);
    expect(await new Response(bad.stderr).text()).toContain("is not an http(s) URL");

    const p = Bun.spawn([process.execPath, main, "--gateway", "http://127.0.0.1:30000", "--port", "0"], { stdout: "pipe", stderr: "inherit" });
    procs.push(p);
    const reader = p.stdout.getReader();
    const deadline = AbortSignal.timeout(20_000);
    let out = "";
    while (!/on (http:\/\/\S+)/.test(out)) {
      const chunk = await Promise.race([reader.read(), new Promise<never>((_, rej) => deadline.addEventListener("abort", () => rej(new Error(`no start line: ${out}`))))]);
      if (chunk.done) throw new Error(`exited early: ${out}`);
      out += new TextDecoder().decode(chunk.value);
    }
    const url = /on (http:\/\/\S+)/.exec(out)![1]!;
    expect((await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
    p.kill("SIGTERM");
    expect(await p.exited).toBe(0);
  });
});
