/**
 * The workloads, as sessions of chat turns. Each request carries the whole conversation so far
 * (system prompt, earlier user turns and the assistant's replies), as chat clients do, so a
 * session's later turns share a growing prefix with its earlier ones.
 */
import { between, prose, rng, zipfPicker } from "./text.ts";

export interface Session {
  /** Sent as the OpenAI `user` field: consistent_hash keys on it. */
  user: string;
  system?: string;
  /** One request per user message. */
  turns: string[];
  /** Pause before each turn after the first, ms. */
  thinkMs: number[];
}

export interface Workload {
  name: string;
  title: string;
  /** Replayed one by one before the measured part (e.g. to make a prefix known). Not measured. */
  warmup: Session[];
  sessions: Session[];
  /** Sessions in progress at once (closed loop: one ends, the next starts). */
  concurrency: number;
  /** Session i starts no earlier than i × this (users arrive over time, not all at t = 0). */
  arrivalGapMs: number;
  maxTokens: number;
  /** Which targets apply: prefix-heavy (TTFT vs round_robin, hit rate vs oracle), hot spot (load spread), none. */
  kind: "prefix" | "hotspot" | "neutral";
}

/** `scale` < 1 shrinks session counts for a quick run; sizes per request stay realistic. */
export function workloads(scale = 1): Workload[] {
  const n = (x: number) => Math.max(4, Math.round(x * scale));
  return [chat(n(48)), docs(n(160)), burst(n(480)), uniform(n(320))];
}

/** Multi-turn chat: 4 system prompts shared across sessions, 8 turns each, history growing. */
function chat(sessions: number): Workload {
  const r = rng(11);
  const turns = 10;
  const systems = Array.from({ length: 4 }, (_, i) => `You are assistant #${i}. ${prose(100 + i, 600)}`);
  return {
    name: "chat",
    title: `multi-turn chat: ${sessions} sessions × ${turns} turns, 4 shared 600-token system prompts, 30–150-token user turns, 128-token replies`,
    warmup: [],
    sessions: Array.from({ length: sessions }, (_, s) => ({
      user: `chat-user-${s}`,
      system: systems[s % systems.length],
      turns: Array.from({ length: turns }, (_, t) => `[s${s} t${t}] ${prose(1_000 + s * 100 + t, between(r, 30, 150))}`),
      thinkMs: Array.from({ length: turns }, () => between(r, 50, 250)),
    })),
    concurrency: 24,
    arrivalGapMs: 50,
    maxTokens: 128,
    kind: "prefix",
  };
}

/** Many users asking about long documents: 24 docs × 2,000 tokens, mildly skewed popularity. */
function docs(users: number): Workload {
  const r = rng(22);
  const documents = Array.from({ length: 24 }, (_, d) => `Document ${d}:\n${prose(200 + d, 2_000)}`);
  const pick = zipfPicker(documents.length, 0.6);
  return {
    name: "docs",
    title: `shared documents: ${users} users × 2 questions over 24 docs of 2,000 tokens (Zipf 0.6)`,
    warmup: [],
    sessions: Array.from({ length: users }, (_, u) => {
      const doc = documents[pick(r)];
      return {
        user: `doc-user-${u}`,
        system: "Answer from the document.",
        turns: [0, 1].map((q) => (q === 0 ? `${doc}\n\n` : "") + `Question ${u}.${q}: ${prose(5_000 + u * 10 + q, between(r, 20, 60))}`),
        thinkMs: [0, between(r, 100, 400)],
      };
    }),
    concurrency: 32,
    arrivalGapMs: 20,
    maxTokens: 16,
    kind: "prefix",
  };
}

/**
 * The hot-spot trap: one 2,000-token prefix (say, a long tool-use preamble) is seen once, then
 * a burst of requests all starting with it arrives at once. A purely cache-affine router sends
 * the whole burst to the one engine that has it cached.
 */
function burst(requests: number): Workload {
  const r = rng(33);
  const preamble = `Tools and rules:\n${prose(300, 2_000)}`;
  const one = (i: number): Session => ({
    user: `burst-user-${i}`,
    system: preamble,
    turns: [`Task ${i}: ${prose(7_000 + i, between(r, 20, 60))}`],
    thinkMs: [0],
  });
  return {
    name: "burst",
    title: `hot-spot burst: 1 warm-up, then ${requests} requests sharing one 2,000-token prefix, 64 at once`,
    warmup: [one(-1)],
    sessions: Array.from({ length: requests }, (_, i) => one(i)),
    concurrency: 64,
    arrivalGapMs: 0,
    maxTokens: 16,
    kind: "hotspot",
  };
}

/** Unrelated prompts of 200–2,000 tokens: nothing to reuse; affinity must not hurt. */
function uniform(requests: number): Workload {
  const r = rng(44);
  return {
    name: "uniform",
    title: `uniform random: ${requests} unrelated prompts of 200–2,000 tokens`,
    warmup: [],
    sessions: Array.from({ length: requests }, (_, i) => ({
      user: `rand-user-${i}`,
      turns: [`#${i} ${prose(9_000 + i, between(r, 200, 2_000))}`],
      thinkMs: [0],
    })),
    concurrency: 32,
    arrivalGapMs: 0,
    maxTokens: 16,
    kind: "neutral",
  };
}

/** The messages of a session's turn `t`, given the replies to its earlier turns. */
export function messagesAt(s: Session, t: number, replies: readonly string[]): { role: string; content: string }[] {
  const m: { role: string; content: string }[] = [];
  if (s.system !== undefined) m.push({ role: "system", content: s.system });
  for (let i = 0; i <= t; i++) {
    m.push({ role: "user", content: s.turns[i] });
    if (i < t) m.push({ role: "assistant", content: replies[i] });
  }
  return m;
}
