/**
 * A fast 32-bit string hash: FNV-1a over UTF-16 code units, then a murmur-style finaliser so
 * that near-identical inputs ("w1#1", "w1#2") land far apart on the ring. Not cryptographic.
 */
export function hash32(s: string): number {
  return mix32(fnv1a(s));
}

const fnvOffset = 0x811c9dc5;
const fnvPrime = 0x01000193;

/** The raw FNV-1a state after `s`, continuing from `h` (to hash a string in pieces). */
export function fnv1a(s: string, h = fnvOffset): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, fnvPrime);
  }
  return h >>> 0;
}

/** hash32(`${prefix}${n}`) given fnv1a(prefix), without building the string. n ≥ 0, integer. */
export function hash32WithNumber(prefixState: number, n: number): number {
  let h = prefixState;
  let div = 1;
  while (div * 10 <= n) div *= 10;
  for (; div >= 1; div /= 10) {
    h ^= 48 + (Math.floor(n / div) % 10);
    h = Math.imul(h, fnvPrime);
  }
  return mix32(h);
}

/** Avalanche the bits of a 32-bit value (every input bit affects every output bit). */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 8 hex digits, for compact stand-ins of large values (images, tool schemas). */
export function hashHex(s: string): string {
  return hash32(s).toString(16).padStart(8, "0");
}
