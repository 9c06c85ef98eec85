/** CLI: `bun apps/mock-engine/src/main.ts --port 8001 --model m1 --kv-cache …` — prints the URL, runs until killed. */
import { Command, InvalidArgumentError, Option } from "commander";
import { startMockEngine } from "./engine.ts";
import type { LoraAdapter, MockEngineOptions } from "./options.ts";

const num = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a non-negative number");
  return n;
};
const collect = (v: string, prev: string[] = []) => [...prev, v];
const lora = (v: string, prev: LoraAdapter[] = []) => {
  const [id, parent] = v.split("=");
  if (!id || !parent) throw new InvalidArgumentError("expected id=parent");
  return [...prev, { id, parent }];
};

const program = new Command()
  .name("mock-engine")
  .description("A fake vLLM / SGLang engine for tests, demos and benchmarks")
  .option("--port <n>", "HTTP port (0 = ephemeral)", num, 8001)
  .option("--host <host>", "address to bind", "127.0.0.1")
  .option("--model <id>", "a served model (repeatable)", collect)
  .option("--lora <id=parent>", "a LoRA adapter on a base model (repeatable)", lora)
  .option("--engine-id <id>", "KV engine id (default: random uuid)")
  .option("--token-delay-ms <ms>", "delay per generated token", num, 0)
  .option("--default-max-tokens <n>", "tokens when the request names no max_tokens", num, 16)
  .option("--max-model-len <n>", "context length", num, 4096)
  .option("--start-delay-ms <ms>", "answer 503 for this long after start", num, 0)
  .addOption(new Option("--role <role>", "PD role").choices(["prefill", "decode", "both"]).default("both"))
  .addOption(new Option("--kv-connector <name>", "KV connector").choices(["MooncakeConnector", "NixlConnector", ""]).default(""))
  .option("--bootstrap-port <n>", "run a Mooncake bootstrap server on this port (0 = ephemeral)", num)
  .option("--data-parallel-size <n>", "data-parallel ranks", num, 1)
  .addOption(new Option("--flavor <name>", "metric names to imitate").choices(["vllm", "sglang"]).default("vllm"))
  .option("--kv-cache", "simulate a paged KV cache with prefix caching")
  .option("--block-size <n>", "KV block size in tokens", num)
  .option("--capacity-blocks <n>", "KV blocks in the pool", num)
  .option("--prefill-ms-per-token <ms>", "prefill cost per uncached token", num)
  .option("--decode-ms-per-token <ms>", "decode cost per token", num)
  .option("--max-concurrency <n>", "running requests before queueing", num)
  .option("--record-limit <n>", "inference requests kept for /_mock/received", num, 10_000);

program.parse();
const o = program.opts();

const options: MockEngineOptions = {
  port: o.port,
  host: o.host,
  models: o.model,
  loras: o.lora,
  engineId: o.engineId,
  tokenDelayMs: o.tokenDelayMs,
  defaultMaxTokens: o.defaultMaxTokens,
  maxModelLen: o.maxModelLen,
  startDelayMs: o.startDelayMs,
  role: o.role,
  kvConnector: o.kvConnector,
  bootstrapPort: o.bootstrapPort,
  dataParallelSize: o.dataParallelSize,
  flavor: o.flavor,
  recordLimit: o.recordLimit,
  kvCache: o.kvCache
    ? { blockSize: o.blockSize, capacityBlocks: o.capacityBlocks, prefillMsPerToken: o.prefillMsPerToken, decodeMsPerToken: o.decodeMsPerToken, maxConcurrency: o.maxConcurrency }
    : undefined,
};

const engine = await startMockEngine(options);
console.log(`mock-engine ${engine.url} engine_id=${engine.state.engineId} models=${engine.state.models.join(",")}` + (engine.bootstrapUrl ? ` bootstrap=${engine.bootstrapUrl}` : ""));

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    void engine.stop().then(() => process.exit(0));
  });
}
