/** Seeded text for workloads: the same seed gives the same text, so runs and the oracle agree. */

import { seededRandom as rng } from "../../packages/testkit/src/random";
export { rng };

const syllables = ["ka", "lo", "mi", "ner", "tu", "sa", "vor", "en", "di", "pra", "que", "zel", "om", "ri", "fa", "gu"];

/** About `tokens` tokens of word-like text (the mock engine counts ~4 characters a token). */
export function prose(seed: number, tokens: number): string {
  const r = rng(seed);
  const want = tokens * 4;
  let out = "";
  while (out.length < want) {
    const n = 1 + Math.floor(r() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += syllables[Math.floor(r() * syllables.length)];
    out += r() < 0.08 ? `${w}. ` : `${w} `;
  }
  return out.slice(0, want);
}

/** An integer in [lo, hi]. */
export function between(r: () => number, lo: number, hi: number): number {
  return lo + Math.floor(r() * (hi - lo + 1));
}

/** Zipf-like pick of 0..n-1 with exponent s (0 = uniform). */
export function zipfPicker(n: number, s: number): (r: () => number) => number {
  const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cdf: number[] = [];
  let acc = 0;
  for (const w of weights) cdf.push((acc += w / total));
  return (r) => {
    const x = r();
    const i = cdf.findIndex((c) => x < c);
    return i < 0 ? n - 1 : i;
  };
}
