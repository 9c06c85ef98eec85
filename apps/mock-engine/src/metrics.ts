/**
 * `GET /metrics` in Prometheus text as vLLM's (Python) client writes it: `model_name`/`engine`
 * labels, floats like `1.0`, large values in Go's exponent form, and `_created` series for counters.
 */
import type { EngineContext } from "./context.ts";

/** prometheus_client's float formatting (Python repr, with an exponent for large values). */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  const s = Number.isInteger(n) && Math.abs(n) < 1e16 ? `${n}.0` : String(n);
  const dot = s.indexOf(".");
  if (n > 0 && dot > 6 && !s.includes("e")) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, "");
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

type Labels = Record<string, string | number>;

function labelText(l: Labels): string {
  const parts = Object.keys(l)
    .sort()
    .map((k) => `${k}="${String(l[k]).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

class Exposition {
  private out = "";
  family(name: string, type: "gauge" | "counter", help: string, samples: [Labels, number][], created?: number): void {
    this.out += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
    for (const [l, v] of samples) this.out += `${name}${labelText(l)} ${goFloat(v)}\n`;
    if (type === "counter" && created !== undefined) {
      const base = name.replace(/_total$/, "");
      for (const [l] of samples) this.out += `${base}_created${labelText(l)} ${goFloat(created)}\n`;
    }
  }
  text(): string {
    return this.out;
  }
}

export function renderMetrics(ctx: EngineContext): string {
  const st = ctx.state;
  const c = st.counters;
  const kv = st.kv;
  const blockSize = kv?.blockSize ?? 16;
  const blocks = kv?.capacityBlocks ?? 2048;
  const usage = kv ? Math.min(1, kv.usedBlocks / kv.capacityBlocks) : 0;
  const model = st.models[0] ?? "";
  const e = new Exposition();
  const created = st.startedAt;

  if (st.flavor === "sglang") {
    const l = { model_name: model };
    e.family("sglang:num_running_reqs", "gauge", "The number of running requests.", [[l, c.running]]);
    e.family("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", [[l, c.waiting]]);
    e.family("sglang:token_usage", "gauge", "The token usage.", [[l, usage]]);
    e.family("sglang:cache_hit_rate", "gauge", "The prefix cache hit rate.", [[l, c.prefixQueries ? c.prefixHits / c.prefixQueries : 0]]);
    e.family("sglang:cache_config_info", "gauge", "Cache configuration.", [[{ page_size: blockSize, num_pages: blocks }, 1]]);
    e.family("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", [[l, c.promptTokens]], created);
    e.family("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", [[l, c.generationTokens]], created);
  } else {
    const l = { engine: "0", model_name: model };
    e.family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", [[l, c.running]]);
    e.family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", [[l, c.waiting]]);
    e.family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", [[l, usage]]);
    e.family("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", [[l, c.prefixQueries]], created);
    e.family("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", [[l, c.prefixHits]], created);
    e.family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", [[l, c.promptTokens]], created);
    e.family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", [[l, c.generationTokens]], created);
    e.family("vllm:request_success_total", "counter", "Count of successfully processed requests.", [[{ ...l, finished_reason: "length" }, c.served]], created);
    e.family("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", [
      [{ block_size: blockSize, cache_dtype: "auto", enable_prefix_caching: kv ? "True" : "False", engine: "0", gpu_memory_utilization: "0.9", num_cpu_blocks: "None", num_gpu_blocks: blocks }, 1],
    ]);
    if (st.loras.length) {
      const load = [...ctx.inc.loraLoad];
      const running = load.filter(([, n]) => n.running > 0).map(([id]) => id).join(",");
      const waiting = load.filter(([, n]) => n.waiting > 0).map(([id]) => id).join(",");
      e.family("vllm:lora_requests_info", "gauge", "Running stats on lora requests.", [
        [{ max_lora: st.loras.length, running_lora_adapters: running, waiting_lora_adapters: waiting }, Date.now() / 1000],
      ]);
    }
  }
  e.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", [[{}, st.startedAt]]);
  e.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", [[{}, process.memoryUsage.rss()]]);
  return e.text();
}
