import { loadScore } from "./load.ts";
import type { Candidate } from "./types.ts";

/**
 * One O(n) pass over the candidates' loads, kept in reusable buffers (one per policy, so no
 * allocation per request), and a least-loaded pick whose ties go to a uniformly random one of
 * the tied candidates rather than always the first.
 */
export class LoadScan {
  scores = new Float64Array(16);
  min = 0;
  max = 0;
  private ties = new Int32Array(16);

  measure(cands: readonly Candidate[], now: number, staleAfterMs: number): void {
    const n = cands.length;
    if (this.scores.length < n) this.scores = new Float64Array(n * 2);
    const s = this.scores;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = loadScore(cands[i], now, staleAfterMs);
      s[i] = v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    this.min = min;
    this.max = max;
  }

  /**
   * Index of the least loaded of the first `n` measured candidates. `tieKey`, when given, breaks
   * load ties first (lower wins); what is still tied is drawn at random.
   */
  least(n: number, random: () => number, tieKey?: (i: number) => number): number {
    if (this.ties.length < n) this.ties = new Int32Array(n * 2);
    const s = this.scores;
    const t = this.ties;
    let count = 0;
    let best = Infinity;
    for (let i = 0; i < n; i++) {
      const v = s[i];
      if (v < best) {
        best = v;
        count = 0;
      }
      if (v === best) t[count++] = i;
    }
    if (count > 1 && tieKey !== undefined) {
      let bestKey = Infinity;
      let kept = 0;
      for (let k = 0; k < count; k++) {
        const i = t[k];
        const key = tieKey(i);
        if (key < bestKey) {
          bestKey = key;
          kept = 0;
        }
        if (key === bestKey) t[kept++] = i;
      }
      count = kept;
    }
    return count === 1 ? t[0] : t[Math.floor(random() * count)];
  }
}
