import { sleep, type EngineContext } from "./context.ts";
import type { Incarnation } from "./incarnation.ts";
import { checkRemotePrefill } from "./kv-pull.ts";
import type { Plan } from "./openai/request.ts";
import type { RecordedRequest } from "./recorder.ts";
import { generatedText } from "./tokens.ts";

/**
 * Generating one request on the slow path (anything with time in it): wait for a slot, prefill
 * the uncached part of the prompt, then decode token by token, stopping when `signal` fires.
 * `emit(i)` is called for each token as it is produced. Returns how many tokens were produced.
 */
export async function generate(
  ctx: EngineContext,
  inc: Incarnation,
  plan: Plan,
  rec: RecordedRequest,
  signal: AbortSignal,
  emit: (i: number) => void,
): Promise<number> {
  const c = inc.counters;
  const remoteKv = await remotePrefill(ctx, inc, plan, rec, signal);
  if (signal.aborted) return 0;

  const lora = loraLoad(ctx, inc, plan.meta.model);
  if (lora) lora.waiting++;
  const admitted = inc.scheduler ? await inc.scheduler.acquire(signal) : (c.running++, true);
  if (lora) {
    lora.waiting--;
    if (admitted) lora.running++;
  }
  if (!admitted) return 0;
  let heldBlocks = 0;
  let produced = 0;
  try {
    const kv = inc.kv;
    const cache = inc.cache;
    const k = ctx.opts.kvCache;
    if (cache && kv && k) {
      const hashes = cache.hashes(plan.prompt);
      let cachedTokens = 0;
      if (!remoteKv) {
        // The last prompt token is always computed, so a fully cached prompt recomputes its last block.
        const cachedBlocks = cache.lookup(hashes, Math.floor((plan.promptTokens - 1) / k.blockSize));
        cachedTokens = cachedBlocks * k.blockSize;
        c.prefixQueries += plan.promptTokens;
        c.prefixHits += cachedTokens;
        const prefillMs = (plan.promptTokens - cachedTokens) * k.prefillMsPerToken;
        if (prefillMs > 0) await sleep(prefillMs, signal);
        if (signal.aborted) return 0;
      }
      rec.cachedTokens = cachedTokens;
      cache.insert(hashes);
      kv.cachedBlocks = cache.size;
      heldBlocks = Math.ceil(plan.promptTokens / k.blockSize);
      kv.usedBlocks += heldBlocks;
    }
    const perToken = k ? k.decodeMsPerToken : ctx.opts.tokenDelayMs;
    for (let i = 0; i < plan.maxTokens; i++) {
      // With a KV cache the prefill step yields the first token; without one every token costs the delay.
      if (perToken > 0 && (i > 0 || !k)) await sleep(perToken, signal);
      if (signal.aborted) break;
      emit(i);
      produced++;
      c.generationTokens += plan.meta.n;
      if (k && inc.kv && plan.promptTokens + i + 1 > heldBlocks * k.blockSize) {
        heldBlocks++;
        inc.kv.usedBlocks++;
      }
    }
    // As vLLM does, full blocks of generated tokens stay cached too: the next turn of a chat,
    // which repeats this answer after the prompt, finds them.
    if (inc.cache && k && produced > 0 && plan.prompt.text !== undefined) {
      inc.cache.insert(inc.cache.hashes({ text: plan.prompt.text + generatedText(produced) }));
      if (inc.kv) inc.kv.cachedBlocks = inc.cache.size;
    }
    return produced;
  } finally {
    if (inc.kv) inc.kv.usedBlocks -= heldBlocks;
    if (inc.scheduler) inc.scheduler.release();
    else c.running--;
    if (lora) lora.running--;
  }
}

function loraLoad(ctx: EngineContext, inc: Incarnation, model: string) {
  if (!ctx.state.loras.some((l) => l.id === model)) return undefined;
  let load = inc.loraLoad.get(model);
  if (!load) inc.loraLoad.set(model, (load = { running: 0, waiting: 0 }));
  return load;
}

/** Decode side of PD: does this request bring its KV from a prefill engine (so prefill is skipped)? */
async function remotePrefill(ctx: EngineContext, inc: Incarnation, plan: Plan, rec: RecordedRequest, signal: AbortSignal): Promise<boolean> {
  const kvIn = plan.kvIn;
  if (!kvIn || kvIn.do_remote_prefill !== true) return false;
  const connector = ctx.state.kvConnector;
  if (connector === "NixlConnector") return typeof kvIn.remote_engine_id === "string";
  if (connector !== "MooncakeConnector" || typeof kvIn.remote_bootstrap_addr !== "string") return false;
  const outcome = await checkRemotePrefill(kvIn.remote_bootstrap_addr, kvIn.remote_engine_id, signal);
  rec.kvPull = outcome;
  if (outcome.ok) inc.counters.kvPullsOk++;
  else inc.counters.kvPullsFailed++;
  return outcome.ok;
}

/** Does this plan need the slow path (anything that takes time or can be cancelled)? */
export function needsSlowPath(ctx: EngineContext, plan: Plan): boolean {
  return (
    ctx.opts.kvCache !== null ||
    ctx.opts.tokenDelayMs > 0 ||
    (plan.kvIn?.do_remote_prefill === true && ctx.state.kvConnector === "MooncakeConnector")
  );
}
