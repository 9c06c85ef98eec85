/**
 * Decision time per policy at 10, 1,000 and 5,000 candidates.
 * Run: bun packages/policies/bench/decision.ts
 *
 * The candidate array is one snapshot reused across picks (as the fleet index hands it out
 * between membership changes) whose in-flight counts move every pick, as the gateway's would.
 * Requests share 32 system prompts (~1.5k chars) with a per-user tail (~300 chars) and carry a
 * session key from 10,000 users. Warm-up runs first (it includes ring builds and tree growth).
 */
import { seededRandom as rng } from "@switchboard/testkit";
import { ConsistentHashPolicy, createPolicy, policyNames, type Candidate, type RouteRequest } from "../src/index.ts";

const sizes = [10, 1_000, 5_000];
const now = Date.now();


function words(r: () => number, n: number): string {
  const vocab = ["the", "engine", "cache", "prefix", "token", "router", "model", "batch", "queue", "page"];
  let s = "";
  for (let i = 0; i < n; i++) s += `${vocab[Math.floor(r() * vocab.length)]} `;
  return s;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function fleet(n: number, r: () => number): Mutable<Candidate>[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `worker-${i}`,
    url: `http://10.0.${i >> 8}.${i & 255}:8000`,
    priority: 0,
    labels: {},
    inFlight: Math.floor(r() * 20),
    engineLoad: i % 2 ? { running: Math.floor(r() * 30), waiting: 0, kvUsage: 0.3, at: now } : undefined,
    incarnation: "boot-1",
  }));
}

function requests(r: () => number): RouteRequest[] {
  const systems = Array.from({ length: 32 }, (_, k) => `<|system|>You are agent ${k}. ${words(r, 250)}\n`);
  return Array.from({ length: 512 }, (_, i) => ({
    model: "m",
    text: `${systems[Math.floor(r() * systems.length)]}<|user|>${words(r, 50)}\n`,
    sessionKey: `user-${Math.floor(r() * 10_000)}`,
  }));
}

interface Row {
  policy: string;
  n: number;
  mean: number;
  p50: number;
  p99: number;
}

function measure(name: (typeof policyNames)[number], n: number): Row {
  const r = rng(n);
  const cands = fleet(n, r);
  const reqs = requests(r);
  const policy = createPolicy(name, { random: r });
  const ops = n >= 5_000 ? 4_000 : 10_000;
  const samples = new Float64Array(ops);
  const step = (i: number) => {
    const c = policy.pick(cands, reqs[i % reqs.length]) as Mutable<Candidate>;
    c.inFlight++;
    const done = cands[Math.floor(r() * n)];
    if (done.inFlight > 0) done.inFlight--;
  };
  for (let i = 0; i < 2_000; i++) step(i);
  let total = 0;
  for (let i = 0; i < ops; i++) {
    const t0 = Bun.nanoseconds();
    step(i);
    const dt = Bun.nanoseconds() - t0;
    samples[i] = dt;
    total += dt;
  }
  samples.sort();
  return { policy: name, n, mean: total / ops, p50: samples[Math.floor(ops / 2)], p99: samples[Math.floor(ops * 0.99)] };
}

const fmt = (ns: number) => (ns >= 10_000 ? `${(ns / 1000).toFixed(0)} µs` : ns >= 1_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`);

const rows: Row[] = [];
for (const name of policyNames) for (const n of sizes) rows.push(measure(name, n));

console.log(`decision time per pick (Bun ${Bun.version}; includes the caller's in-flight bookkeeping)\n`);
console.log(`| policy          | candidates | mean      | p50       | p99       |`);
console.log(`|-----------------|-----------:|----------:|----------:|----------:|`);
for (const row of rows) {
  console.log(
    `| ${row.policy.padEnd(15)} | ${String(row.n).padStart(10)} | ${fmt(row.mean).padStart(9)} | ${fmt(row.p50).padStart(9)} | ${fmt(row.p99).padStart(9)} |`,
  );
}

// One-off costs, paid on the first pick after the candidate set changes (median of 5).
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fullBuilds: number[] = [];
const updates: number[] = [];
for (let round = 0; round < 5; round++) {
  const big = fleet(5_000, rng(round));
  const ch = createPolicy("consistent_hash") as ConsistentHashPolicy;
  let t0 = Bun.nanoseconds();
  ch.pick(big, { model: "m", sessionKey: "k" });
  fullBuilds.push(Bun.nanoseconds() - t0);
  const changed = [...big.slice(1), { ...big[0], id: "worker-new" }];
  t0 = Bun.nanoseconds();
  ch.pick(changed, { model: "m", sessionKey: "k" });
  updates.push(Bun.nanoseconds() - t0);
}
const ms = (ns: number) => `${(ns / 1e6).toFixed(1)} ms`;
console.log(
  `\nconsistent_hash ring at 5,000 workers × 160 virtual nodes: first build ${ms(median(fullBuilds))}; ` +
    `after one worker left and one joined ${ms(median(updates))}`,
);
