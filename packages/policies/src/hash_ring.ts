import { hash32 } from "./hash.ts";

const ownerBits = 2 ** 21;

/**
 * A consistent-hash ring: each owner places `virtualNodes` points at hash(`id#k`); a key belongs
 * to the first point clockwise from hash(key). Points depend only on the owner's id, so adding or
 * removing one owner moves only the keys that land on its points (about 1/N of them), and many
 * points per owner even out the share each one gets.
 */
export class HashRing {
  private constructor(
    private readonly points: Uint32Array,
    private readonly owners: Int32Array,
  ) {}

  /** `ids[i]` owns the keys mapped to `i`. */
  static build(ids: readonly string[], virtualNodes: number): HashRing {
    if (ids.length >= ownerBits) throw new Error(`hash ring: too many owners (${ids.length})`);
    const total = ids.length * virtualNodes;
    // Pack (point, owner) into one double so a typed-array numeric sort orders both at once.
    const packed = new Float64Array(total);
    let p = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      for (let k = 0; k < virtualNodes; k++) packed[p++] = hash32(`${id}#${k}`) * ownerBits + i;
    }
    packed.sort();
    const points = new Uint32Array(total);
    const owners = new Int32Array(total);
    for (let q = 0; q < total; q++) {
      const v = packed[q];
      const owner = v % ownerBits;
      owners[q] = owner;
      points[q] = (v - owner) / ownerBits;
    }
    return new HashRing(points, owners);
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
