/** Replays a workload's sessions through a gateway, `concurrency` sessions at a time. */
import { benchModel } from "./engines.ts";
import { streamChat, type Outcome } from "./client.ts";
import { messagesAt, type Session, type Workload } from "./workloads.ts";

export interface Replay {
  outcomes: Outcome[];
  wallMs: number;
}

const requestTimeoutMs = 10_000; // far above any healthy request here; bounds a stalled stream

async function runSession(url: string, s: Session, maxTokens: number, out: Outcome[]): Promise<void> {
  const replies: string[] = [];
  for (let t = 0; t < s.turns.length; t++) {
    if (t > 0 && s.thinkMs[t] > 0) await Bun.sleep(s.thinkMs[t]);
    const o = await streamChat(url, { model: benchModel, messages: messagesAt(s, t, replies), max_tokens: maxTokens, user: s.user }, requestTimeoutMs);
    out.push(o);
    if (!o.ok) return; // the rest of a conversation makes no sense without this reply
    replies.push(o.content);
  }
}

export async function replaySessions(url: string, sessions: readonly Session[], concurrency: number, maxTokens: number, arrivalGapMs = 0): Promise<Replay> {
  const outcomes: Outcome[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < sessions.length) {
      const i = next++;
      const wait = started + i * arrivalGapMs - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      await runSession(url, sessions[i], maxTokens, outcomes);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, sessions.length) }, lane));
  return { outcomes, wallMs: performance.now() - started };
}

export async function replayWarmup(url: string, w: Workload): Promise<void> {
  const r = await replaySessions(url, w.warmup, 1, w.maxTokens);
  const bad = r.outcomes.find((o) => !o.ok);
  if (bad) throw new Error(`warm-up request failed: ${bad.status} ${bad.error}`);
}
