/**
 * A set of record ids that holds a 1M-record export in a few MB: an id that is a decimal number below 2^32 (most services'
 * ids) takes 4 bytes of an open-addressing table, any other id a Set's entry. A Set of every id cost ~30 bytes an id, and
 * a heap that grows with it, which the collector lets grow further. Where a service numbers its records in order, ids
 * crowd into few ranges of 2^16: once one holds DENSE ids, it takes a bitmap, a bit an id (a 1M export then holds ~1 MB).
 */
export class IdSet {
  /** Ids as numbers, 0 for an empty slot (no such id: a leading 0 keeps an id a text), linear probing. */
  private table = new Uint32Array(1 << 10);
  private count = 0;
  private readonly texts = new Set<string>();
  /** The ids in the table of each range of 2^16 (by its upper 16 bits), up to DENSE; made at the first numeric id. */
  private perRange: Uint16Array | undefined;
  /** The ranges past DENSE: a bit for each of their 2^16 ids (8 KiB, 2 bytes an id at DENSE, against 5-8 in the table). */
  private readonly bitmaps = new Map<number, Uint32Array>();

  has(id: string): boolean {
    const n = asNumber(id);
    if (n === undefined) return this.texts.has(id);
    const bits = this.bitmaps.get(n >>> 16);
    return (bits !== undefined && (bits[(n & 0xffff) >>> 5]! & (1 << (n & 31))) !== 0) || this.table[this.slotOf(n)] === n;
  }

  add(id: string): void {
    const n = asNumber(id);
    if (n === undefined) return void this.texts.add(id);
    const range = n >>> 16;
    const bits = this.bitmaps.get(range);
    // Its range's first DENSE ids stay in the table: has() looks in both.
    if (bits !== undefined) return void (bits[(n & 0xffff) >>> 5]! |= 1 << (n & 31));
    const slot = this.slotOf(n);
    if (this.table[slot] === n) return;
    this.table[slot] = n;
    // Kept under 3/4 full: probes stay short.
    if (++this.count * 4 > this.table.length * 3) this.grow();
    this.perRange ??= new Uint16Array(1 << 16);
    if (++this.perRange[range]! === DENSE) this.bitmaps.set(range, new Uint32Array(1 << 11));
  }

  /** The slot holding `n`, or the empty one where it would go. */
  private slotOf(n: number): number {
    const { table } = this;
    const mask = table.length - 1;
    let slot = (Math.imul(n, 0x9e3779b1) >>> 0) & mask;
    while (table[slot] !== 0 && table[slot] !== n) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    for (const n of old) if (n !== 0) this.table[this.slotOf(n)] = n;
  }
}

/** Ids of one range of 2^16 past which the range takes a bitmap: there a bit an id costs less than the table's 5-8 bytes. */
const DENSE = 4096;

/** An id that is a decimal number from 1 to 2^32 − 1, written as such (no sign, no leading 0), as that number. */
function asNumber(id: string): number | undefined {
  if (id.length > 10 || !/^[1-9]\d*$/.test(id)) return undefined;
  const n = Number(id);
  return n <= 0xffffffff ? n : undefined;
}
