import { afterAll, expect, test } from "bun:test";
import { get, post } from "./helpers.ts";

const main = new URL("../src/main.ts", import.meta.url).pathname;
let proc: ReturnType<typeof Bun.spawn> | undefined;
afterAll(() => proc?.kill());

/** Reads the child's stdout until a line matches, within a deadline. */
async function readLine(stream: ReadableStream<Uint8Array>, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const reader = stream.getReader();
  const deadline = setTimeout(() => reader.cancel(), timeoutMs);
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`no line matching ${pattern} in: ${text}`);
      text += new TextDecoder().decode(value);
      const m = text.match(pattern);
      if (m) return m;
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
  }
}

test("the CLI starts an engine with its flags and prints its URL", async () => {
  proc = Bun.spawn(
    [process.execPath, main, "--port", "0", "--model", "m1", "--model", "m2", "--engine-id", "cli-engine", "--role", "prefill", "--kv-connector", "MooncakeConnector", "--bootstrap-port", "0", "--kv-cache"],
    { stdout: "pipe", stderr: "inherit" },
  );
  const m = await readLine(proc.stdout as ReadableStream<Uint8Array>, /(http:\/\/127\.0\.0\.1:\d+) .*bootstrap=(http:\/\/127\.0\.0\.1:\d+)/, 10_000);
  const [, url, bootstrap] = m;
  expect((await get(`${url}/health`)).status).toBe(200);
  const models = (await (await get(`${url}/v1/models`)).json()) as { data: { id: string }[] };
  expect(models.data.map((d) => d.id)).toEqual(["m1", "m2"]);
  expect(((await (await get(`${bootstrap}/query`)).json()) as any)["0"].engine_id).toBe("cli-engine");
  expect((await post(`${url}/v1/completions`, { model: "m2", prompt: "x", max_tokens: 2 })).status).toBe(200);
  const metrics = await (await get(`${url}/metrics`)).text();
  expect(metrics).toContain('enable_prefix_caching="True"');
  proc.kill();
  expect(await Promise.race([proc.exited, Bun.sleep(5_000).then(() => "still running")])).not.toBe("still running");
});
