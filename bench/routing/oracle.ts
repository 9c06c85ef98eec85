/**
 * The best any router could do with these engines: every request meets, in cache, every block
 * any earlier request computed (caches never evict; only first touches miss). This ignores time
 * (a request arriving while the first one is still in prefill cannot hit in a real engine), so it
 * is an upper bound, not always reachable. Computed with the engine's own tokenizer and blocks.
 */
import { fullBlocks, generatedText, promptTokenCount, renderChat } from "../../apps/mock-engine/src/tokens.ts";
import type { KvSpec } from "./engines.ts";
import { messagesAt, type Session, type Workload } from "./workloads.ts";

export interface Oracle {
  hitRate: number;
  /** Lower bounds with no queueing and no overhead: prefill of the uncached tokens only. */
  ttftMs: number[];
  e2eMs: number[];
}

export function oracle(w: Workload, kv: KvSpec): Oracle {
  const seen = new Set<bigint>();
  const reply = generatedText(w.maxTokens);
  let hits = 0;
  let queries = 0;
  const ttftMs: number[] = [];
  const e2eMs: number[] = [];
  const visit = (s: Session, measured: boolean) => {
    const replies: string[] = [];
    for (let t = 0; t < s.turns.length; t++) {
      const prompt = { text: renderChat(messagesAt(s, t, replies)) };
      const tokens = promptTokenCount(prompt);
      let prev = 0n;
      const hashes = fullBlocks(prompt, kv.blockSize).map((b) => (prev = Bun.hash.wyhash(b, prev)));
      // As the engine does: at most all blocks before the one holding the last prompt token.
      const limit = Math.floor((tokens - 1) / kv.blockSize);
      let cached = 0;
      while (cached < hashes.length && cached < limit && seen.has(hashes[cached])) cached++;
      for (const h of hashes) seen.add(h);
      // The engine keeps the answer's full blocks too (the next turn repeats it).
      prev = 0n;
      for (const b of fullBlocks({ text: prompt.text + reply }, kv.blockSize)) seen.add((prev = Bun.hash.wyhash(b, prev)));
      if (measured) {
        hits += cached * kv.blockSize;
        queries += tokens;
        const prefill = (tokens - cached * kv.blockSize) * kv.prefillMsPerToken;
        ttftMs.push(prefill);
        e2eMs.push(prefill + (w.maxTokens - 1) * kv.decodeMsPerToken);
      }
      replies.push(reply);
    }
  };
  for (const s of w.warmup) visit(s, false);
  for (const s of w.sessions) visit(s, true);
  return { hitRate: queries > 0 ? hits / queries : 0, ttftMs, e2eMs };
}
