import { parseSamples, sumOf } from "./prometheus";

/** What a router reads from an engine's /metrics: load, and the process start time (its incarnation). */
export interface EngineMetrics {
  running?: number;
  waiting?: number;
  kvUsage?: number;
  processStartTime?: number;
  prefixCacheHits?: number;
  prefixCacheQueries?: number;
}

const NAMES = new Set([
  "vllm:num_requests_running",
  "vllm:num_requests_waiting",
  "vllm:kv_cache_usage_perc",
  "vllm:gpu_cache_usage_perc",
  "vllm:prefix_cache_hits_total",
  "vllm:prefix_cache_queries_total",
  "sglang:num_running_reqs",
  "sglang:num_queue_reqs",
  "sglang:token_usage",
  "process_start_time_seconds",
]);

export function parseEngineMetrics(text: string): EngineMetrics {
  const s = parseSamples(text, NAMES);
  return {
    running: sumOf(s, "vllm:num_requests_running", "sglang:num_running_reqs"),
    waiting: sumOf(s, "vllm:num_requests_waiting", "sglang:num_queue_reqs"),
    // vLLM v1 name first; v0 and SGLang as fallbacks.
    kvUsage: sumOf(s, "vllm:kv_cache_usage_perc") ?? sumOf(s, "vllm:gpu_cache_usage_perc") ?? sumOf(s, "sglang:token_usage"),
    processStartTime: s.find((x) => x.name === "process_start_time_seconds")?.value,
    prefixCacheHits: sumOf(s, "vllm:prefix_cache_hits_total"),
    prefixCacheQueries: sumOf(s, "vllm:prefix_cache_queries_total"),
  };
}
