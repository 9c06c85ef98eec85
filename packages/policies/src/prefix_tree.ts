/**
 * An approximate picture of which worker's KV cache holds which prompt prefixes: a radix tree
 * over request text (UTF-16 code units). Each node is an edge of text; it remembers which
 * workers have been sent a request through it and when (last access, ms).
 *
 * Invariants the eviction relies on:
 * - prefix-closed: a worker on a node is on all of its ancestors;
 * - recency is monotone: a worker's time on a node is ≥ its time on every descendant (an insert
 *   stamps the whole path at once, and a split copies stamps to the new parent).
 * So removing a worker's least-recent entries (deepest first on equal times) only ever removes
 * leaves of that worker's subtree, and removing all entries older than a cutoff removes whole
 * subtrees: both keep the tree prefix-closed.
 */
class TreeNode {
  children: Map<number, TreeNode> | null = null;
  /** worker id → last access (ms). */
  workers = new Map<string, number>();

  constructor(
    public edge: string,
    public parent: TreeNode | null,
    /** chars from the root to the end of this edge. */
    public end: number,
  ) {}
}

export interface PrefixMatch {
  /** chars of the text that the returned workers have seen. */
  matched: number;
  /** accepted workers at the deepest node that has any. */
  workers: string[];
}

export class PrefixTree {
  private readonly root = new TreeNode("", null, 0);
  private readonly nodesOf = new Map<string, Set<TreeNode>>();
  private readonly charsOf = new Map<string, number>();
  // Scratch for longestMatch: reused to keep the hot path allocation-light.
  private pathNodes: TreeNode[] = [];
  private pathDepths: number[] = [];
  // Where an incremental sweep (expireSome) stands.
  private sweepOuter: MapIterator<[string, Set<TreeNode>]> | null = null;
  private sweepInner: SetIterator<TreeNode> | null = null;
  private sweepWorker = "";

  /** Records that `worker` was sent `text` at `now`. O(text length). */
  insert(text: string, worker: string, now: number): void {
    let node = this.root;
    let i = 0;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      let child = node.children?.get(code);
      if (child === undefined) {
        const leaf = new TreeNode(own(text, i, text.length), node, text.length);
        (node.children ??= new Map()).set(code, leaf);
        this.touch(leaf, worker, now);
        return;
      }
      const common = commonLength(child.edge, text, i);
      if (common < child.edge.length) child = this.split(child, common);
      this.touch(child, worker, now);
      i += common;
      node = child;
    }
  }

  /**
   * The deepest point along `text` that an accepted worker has seen. `accept` sees each worker
   * met on the way back up from the deepest node, with its last access; the walk stops at the
   * first node where any is accepted. Cost: text length, plus the workers of the nodes looked at.
   */
  longestMatch(text: string, accept: (worker: string, lastSeen: number) => boolean): PrefixMatch {
    const nodes = this.pathNodes;
    const depths = this.pathDepths;
    nodes.length = 0;
    depths.length = 0;
    let node = this.root;
    let i = 0;
    while (i < text.length) {
      const child = node.children?.get(text.charCodeAt(i));
      if (child === undefined) break;
      const common = commonLength(child.edge, text, i);
      // A partial edge still counts: the child's workers saw the text up to the divergence.
      nodes.push(child);
      depths.push(i + common);
      if (common < child.edge.length) break;
      i += common;
      node = child;
    }
    for (let k = nodes.length - 1; k >= 0; k--) {
      const workers: string[] = [];
      for (const [w, seen] of nodes[k].workers) if (accept(w, seen)) workers.push(w);
      if (workers.length > 0) {
        const matched = depths[k];
        nodes.length = 0;
        return { matched, workers };
      }
    }
    nodes.length = 0;
    return { matched: 0, workers: [] };
  }

  /** chars of text held for `worker` (its share of the tree). */
  chars(worker: string): number {
    return this.charsOf.get(worker) ?? 0;
  }

  /** Drops `worker`'s least recently used prefixes until it holds at most `targetChars`. */
  evictLeastRecent(worker: string, targetChars: number): void {
    const set = this.nodesOf.get(worker);
    if (set === undefined || this.chars(worker) <= targetChars) return;
    const nodes = [...set];
    // Oldest first; on equal times deepest first, so children always go before their parent.
    nodes.sort((a, b) => a.workers.get(worker)! - b.workers.get(worker)! || b.end - a.end);
    for (const node of nodes) {
      if (this.chars(worker) <= targetChars) break;
      this.remove(node, worker);
    }
  }

  /** Drops every entry last used before `cutoff`. O(entries). */
  expire(cutoff: number): void {
    this.sweepOuter = null;
    this.sweepInner = null;
    while (!this.expireSome(cutoff, Infinity));
  }

  /**
   * One bounded step of a sweep that drops entries last used before `cutoff`: looks at up to
   * `budget` entries, resuming where the previous step stopped. Returns true when a full pass
   * is done (the next call starts a new one). Spreads the O(entries) cost over many requests.
   */
  expireSome(cutoff: number, budget: number): boolean {
    // Map and Set iterators tolerate deletion during iteration; entries added meanwhile are
    // either visited or left for the next pass, both fine.
    this.sweepOuter ??= this.nodesOf.entries();
    let seen = 0;
    for (;;) {
      if (this.sweepInner === null) {
        const next = this.sweepOuter.next();
        if (next.done) {
          this.sweepOuter = null;
          return true;
        }
        this.sweepWorker = next.value[0];
        this.sweepInner = next.value[1].values();
      }
      for (;;) {
        if (seen >= budget) return false;
        const next = this.sweepInner.next();
        if (next.done) break;
        const node = next.value;
        const at = node.workers.get(this.sweepWorker);
        seen += at !== undefined && at < cutoff ? this.removeBranch(node, this.sweepWorker) : 1;
      }
      this.sweepInner = null;
    }
  }

  /** Drops everything `worker` had (it left, or its engine restarted and lost its cache). */
  forget(worker: string): void {
    const set = this.nodesOf.get(worker);
    if (set === undefined) return;
    for (const node of set) this.remove(node, worker);
  }

  /** Workers with anything in the tree. */
  workers(): string[] {
    return [...this.nodesOf.keys()];
  }

  /** Nodes reachable from the root (for tests and metrics; O(nodes)). */
  nodeCount(): number {
    let count = 0;
    const stack: TreeNode[] = [this.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.children) for (const c of n.children.values()) stack.push(c), count++;
    }
    return count;
  }

  /**
   * Broken invariants, if any (for tests): prefix-closed, monotone recency, per-worker char
   * counts and node sets in step with the nodes. O(tree).
   */
  verify(): string[] {
    const problems: string[] = [];
    const chars = new Map<string, number>();
    const nodes = new Map<string, number>();
    const stack: TreeNode[] = [this.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (!n.children) continue;
      for (const [code, c] of n.children) {
        stack.push(c);
        if (c.parent !== n) problems.push(`parent link broken at "${c.edge.slice(0, 20)}"`);
        if (c.edge.length === 0 || c.edge.charCodeAt(0) !== code) problems.push("child keyed by the wrong char");
        if (c.end !== n.end + c.edge.length) problems.push(`end ${c.end} ≠ ${n.end} + ${c.edge.length}`);
        if (c.workers.size === 0) problems.push("empty node left in the tree");
        for (const [w, seen] of c.workers) {
          if (n !== this.root) {
            const up = n.workers.get(w);
            if (up === undefined) problems.push(`${w} on a node but not its parent`);
            else if (up < seen) problems.push(`${w} seen later below than above`);
          }
          chars.set(w, (chars.get(w) ?? 0) + c.edge.length);
          nodes.set(w, (nodes.get(w) ?? 0) + 1);
          if (!this.nodesOf.get(w)?.has(c)) problems.push(`${w} node set misses a node`);
        }
      }
    }
    for (const w of new Set([...chars.keys(), ...this.charsOf.keys()])) {
      if (chars.get(w) !== this.charsOf.get(w)) problems.push(`${w} chars ${this.charsOf.get(w)} ≠ ${chars.get(w)}`);
      if (nodes.get(w) !== this.nodesOf.get(w)?.size) problems.push(`${w} node set size ≠ ${nodes.get(w)}`);
    }
    return problems;
  }

  private touch(node: TreeNode, worker: string, now: number): void {
    const seen = node.workers.get(worker);
    if (seen === undefined) {
      node.workers.set(worker, now);
      let set = this.nodesOf.get(worker);
      if (set === undefined) this.nodesOf.set(worker, (set = new Set()));
      set.add(node);
      this.charsOf.set(worker, this.chars(worker) + node.edge.length);
    } else if (now > seen) {
      node.workers.set(worker, now);
    }
  }

  /** Cuts `node`'s edge after `at` chars; returns the new upper half, which inherits all workers. */
  private split(node: TreeNode, at: number): TreeNode {
    const parent = node.parent!;
    const upper = new TreeNode(own(node.edge, 0, at), parent, node.end - node.edge.length + at);
    upper.workers = new Map(node.workers);
    for (const w of node.workers.keys()) this.nodesOf.get(w)!.add(upper);
    node.edge = own(node.edge, at, node.edge.length);
    node.parent = upper;
    upper.children = new Map([[node.edge.charCodeAt(0), node]]);
    parent.children!.set(upper.edge.charCodeAt(0), upper);
    return upper;
  }

  /**
   * Removes `worker` from `node` and every descendant it is on, deepest first, so the tree stays
   * prefix-closed even halfway through a sweep. (By monotone recency they are all as old.)
   * Returns how many entries went.
   */
  private removeBranch(node: TreeNode, worker: string): number {
    const branch: TreeNode[] = [node];
    for (let k = 0; k < branch.length; k++) {
      const children = branch[k].children;
      if (children) for (const c of children.values()) if (c.workers.has(worker)) branch.push(c);
    }
    for (let k = branch.length - 1; k >= 0; k--) this.remove(branch[k], worker);
    return branch.length;
  }

  private remove(node: TreeNode, worker: string): void {
    if (!node.workers.delete(worker)) return;
    const set = this.nodesOf.get(worker)!;
    set.delete(node);
    const left = this.chars(worker) - node.edge.length;
    if (set.size === 0) {
      this.nodesOf.delete(worker);
      this.charsOf.delete(worker);
    } else {
      this.charsOf.set(worker, left);
    }
    // Prefix-closed: an empty node has empty descendants, so it can leave the tree whole.
    if (node.workers.size === 0 && node.parent !== null) {
      const siblings = node.parent.children!;
      const code = node.edge.charCodeAt(0);
      if (siblings.get(code) === node) siblings.delete(code);
      node.parent = null;
    }
  }
}

function commonLength(edge: string, text: string, offset: number): number {
  const max = Math.min(edge.length, text.length - offset);
  let k = 0;
  while (k < max && edge.charCodeAt(k) === text.charCodeAt(offset + k)) k++;
  return k;
}

/**
 * `s.slice(start, end)` as a string of its own. JavaScriptCore substrings share the string they
 * were cut from, so a short edge would pin the whole request text and the per-worker char budget
 * would understate memory many times over; padding forces a fresh copy.
 */
function own(s: string, start: number, end: number): string {
  if (start === 0 && end === s.length) return s;
  const cut = s.slice(start, end);
  return cut.padEnd(cut.length + 1).slice(0, -1);
}
