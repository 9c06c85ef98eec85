import { fnv1a, hash32, hash32WithNumber } from "./hash.ts";

const ownerBits = 2 ** 21;

/**
 * A consistent-hash ring: each owner places `virtualNodes` points at hash(`id#k`); a key belongs
 * to the first point clockwise from hash(key). Points depend only on the owner's id, so adding or
 * removing one owner moves only the keys that land on its points (about 1/N of them), and many
 * points per owner even out the share each one gets.
 */
export class HashRing {
  private constructor(
    /** Owner ids; `owners` holds indexes into this. */
    readonly ids: readonly string[],
    private readonly virtualNodes: number,
    private readonly points: Uint32Array,
    private readonly owners: Int32Array,
  ) {}

  /**
   * `ids[i]` owns the keys mapped to `i`. Given the ring of a previous set (same virtualNodes),
   * the points of owners still present are reused and only new owners are hashed and sorted,
   * then merged in: O(points) instead of hashing and sorting everything again.
   */
  static build(ids: readonly string[], virtualNodes: number, previous?: HashRing): HashRing {
    if (ids.length >= ownerBits) throw new Error(`hash ring: too many owners (${ids.length})`);
    if (previous === undefined || previous.virtualNodes !== virtualNodes) {
      const [points, owners] = placeAll(ids, ids.map((_, i) => i), virtualNodes);
      return new HashRing(ids, virtualNodes, points, owners);
    }
    const index = new Map<string, number>();
    for (let i = 0; i < ids.length; i++) index.set(ids[i], i);
    // Old owner index → new index (−1: gone).
    const remap = new Int32Array(previous.ids.length);
    const known = new Set<string>();
    for (let j = 0; j < previous.ids.length; j++) {
      remap[j] = index.get(previous.ids[j]) ?? -1;
      known.add(previous.ids[j]);
    }
    const added: number[] = [];
    for (let i = 0; i < ids.length; i++) if (!known.has(ids[i])) added.push(i);
    const [addPoints, addOwners] = placeAll(ids, added, virtualNodes);
    const total = ids.length * virtualNodes;
    const points = new Uint32Array(total);
    const owners = new Int32Array(total);
    const oldPoints = previous.points;
    const oldOwners = previous.owners;
    let a = 0; // next added point
    let q = 0;
    for (let p = 0; p < oldPoints.length; p++) {
      const owner = remap[oldOwners[p]];
      if (owner < 0) continue;
      const pt = oldPoints[p];
      while (a < addPoints.length && addPoints[a] < pt) {
        points[q] = addPoints[a];
        owners[q++] = addOwners[a++];
      }
      points[q] = pt;
      owners[q++] = owner;
    }
    while (a < addPoints.length) {
      points[q] = addPoints[a];
      owners[q++] = addOwners[a++];
    }
    return new HashRing(ids, virtualNodes, points, owners);
  }

  /** The owner index for a key hash. */
  ownerOf(keyHash: number): number {
    const pts = this.points;
    let lo = 0;
    let hi = pts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pts[mid] < keyHash) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === pts.length ? 0 : lo];
  }

  ownerOfKey(key: string): number {
    return this.ownerOf(hash32(key));
  }
}

/** The sorted points of `which` owners (indexes into `ids`). */
function placeAll(ids: readonly string[], which: readonly number[], virtualNodes: number): [Uint32Array, Int32Array] {
  const total = which.length * virtualNodes;
  // Pack (point, owner) into one double so a typed-array numeric sort orders both at once.
  const packed = new Float64Array(total);
  let p = 0;
  for (const i of which) {
    const base = fnv1a(`${ids[i]}#`);
    for (let k = 0; k < virtualNodes; k++) packed[p++] = hash32WithNumber(base, k) * ownerBits + i;
  }
  packed.sort();
  const points = new Uint32Array(total);
  const owners = new Int32Array(total);
  for (let q = 0; q < total; q++) {
    const v = packed[q];
    const point = Math.floor(v / ownerBits);
    points[q] = point;
    owners[q] = v - point * ownerBits;
  }
  return [points, owners];
}
