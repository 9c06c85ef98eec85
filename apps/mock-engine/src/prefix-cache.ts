import { fullBlocks, type Prompt } from "./tokens.ts";

/**
 * The engine's prefix cache: block hashes chained so a block's hash depends on every block before
 * it (equal hash ⇒ equal prefix), kept in an LRU bounded by the block pool's capacity.
 */
export class PrefixCache {
  /** Insertion order is recency order: a touched hash is re-inserted at the end. */
  private readonly lru = new Map<bigint, true>();

  constructor(
    readonly blockSize: number,
    readonly capacityBlocks: number,
  ) {}

  get size(): number {
    return this.lru.size;
  }

  hashes(p: Prompt): bigint[] {
    let prev = 0n;
    return fullBlocks(p, this.blockSize).map((block) => (prev = Bun.hash.wyhash(block, prev)));
  }

  /**
   * How many leading blocks are cached; touches them. At most `maxBlocks`: the engine always
   * computes the prompt's last token itself, so a fully cached prompt still recomputes its last block.
   */
  lookup(hashes: bigint[], maxBlocks: number): number {
    let n = 0;
    while (n < hashes.length && n < maxBlocks && this.lru.has(hashes[n])) n++;
    for (let i = 0; i < n; i++) this.touch(hashes[i]);
    return n;
  }

  /** Remember every block of a computed prompt, evicting the least recently used beyond capacity. */
  insert(hashes: bigint[]): void {
    for (const h of hashes) this.touch(h);
    while (this.lru.size > this.capacityBlocks) {
      const oldest = this.lru.keys().next().value as bigint;
      this.lru.delete(oldest);
    }
  }

  clear(): void {
    this.lru.clear();
  }

  private touch(h: bigint): void {
    this.lru.delete(h);
    this.lru.set(h, true);
  }
}
