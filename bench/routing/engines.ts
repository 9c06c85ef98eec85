/** The fleet of KV-cache-simulating mock engines: separate processes (default) or in this one. */
import { parseSamples } from "../../packages/engines/src/http/prometheus.ts";
import { startMockEngine, type MockEngine } from "../../apps/mock-engine/src/index.ts";

export interface KvSpec {
  blockSize: number;
  capacityBlocks: number;
  prefillMsPerToken: number;
  decodeMsPerToken: number;
  maxConcurrency: number;
}

export interface EngineCounters {
  hits: number;
  queries: number;
  served: number;
}

export interface EngineFleet {
  urls: string[];
  /** Empties every engine's prefix cache (counters keep counting: runs use differences). */
  flush(): Promise<void>;
  counters(): Promise<EngineCounters[]>;
  stop(): Promise<void>;
}

const MODEL = "bench-model";
export const benchModel = MODEL;
const root = new URL("../../", import.meta.url).pathname;

export async function startEngines(count: number, kv: KvSpec, mode: "procs" | "inproc"): Promise<EngineFleet> {
  return mode === "inproc" ? inProcess(count, kv) : processes(count, kv);
}

async function inProcess(count: number, kv: KvSpec): Promise<EngineFleet> {
  const engines: MockEngine[] = await Promise.all(
    Array.from({ length: count }, () => startMockEngine({ models: [MODEL], kvCache: kv, maxModelLen: 65_536, recordLimit: 0 })),
  );
  return fleetOf(
    engines.map((e) => e.url),
    async () => void (await Promise.all(engines.map((e) => e.stop()))),
  );
}

async function processes(count: number, kv: KvSpec): Promise<EngineFleet> {
  const args = [
    "--port", "0", "--model", MODEL, "--kv-cache", "--max-model-len", "65536", "--record-limit", "0",
    "--block-size", String(kv.blockSize), "--capacity-blocks", String(kv.capacityBlocks),
    "--prefill-ms-per-token", String(kv.prefillMsPerToken), "--decode-ms-per-token", String(kv.decodeMsPerToken),
    "--max-concurrency", String(kv.maxConcurrency),
  ];
  const procs = Array.from({ length: count }, () =>
    Bun.spawn([process.execPath, `${root}apps/mock-engine/src/main.ts`, ...args], { stdout: "pipe", stderr: "inherit", cwd: root }),
  );
  const stopAll = async () => {
    for (const p of procs) p.kill("SIGTERM");
    await Promise.race([Promise.all(procs.map((p) => p.exited)), Bun.sleep(3_000)]);
    for (const p of procs) if (p.exitCode === null) p.kill("SIGKILL");
  };
  try {
    const urls = await Promise.all(procs.map((p) => firstMatch(p.stdout, /mock-engine (http:\/\/\S+)/, 15_000)));
    return fleetOf(urls, stopAll);
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function fleetOf(urls: string[], stop: () => Promise<void>): EngineFleet {
  return {
    urls,
    stop,
    async flush() {
      await Promise.all(urls.map(async (u) => expectOk(await fetch(`${u}/reset_prefix_cache`, { method: "POST", signal: AbortSignal.timeout(5_000) }))));
    },
    async counters() {
      return Promise.all(urls.map(async (u) => readCounters(await (await fetch(`${u}/metrics`, { signal: AbortSignal.timeout(5_000) })).text())));
    },
  };
}

const NAMES = new Set(["vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total", "vllm:request_success_total"]);

function readCounters(text: string): EngineCounters {
  const s = parseSamples(text, NAMES);
  const sum = (name: string) => s.filter((x) => x.name === name).reduce((a, x) => a + x.value, 0);
  return { hits: sum("vllm:prefix_cache_hits_total"), queries: sum("vllm:prefix_cache_queries_total"), served: sum("vllm:request_success_total") };
}

async function expectOk(res: Response): Promise<void> {
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}`);
}

/** Reads a process's output until a line matches (group 1), then keeps draining it in the background. */
export async function firstMatch(stream: ReadableStream<Uint8Array>, re: RegExp, timeoutMs: number): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const timeout = Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null);
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk === null) break;
    if (chunk.done) throw new Error(`process output ended before ${re}: ${buf.slice(-500)}`);
    buf += decoder.decode(chunk.value, { stream: true });
    const m = re.exec(buf);
    if (m) {
      void drain(reader);
      return m[1];
    }
  }
  throw new Error(`no ${re} within ${timeoutMs} ms: ${buf.slice(-500)}`);
}

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    while (!(await reader.read()).done);
  } catch {
    // the process is gone
  }
}
