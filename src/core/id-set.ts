/**
 * A set of record ids that holds a 1M-record export in a few MB: an id that is a decimal number below 2^32 (most services'
 * ids) takes 4 bytes of an open-addressing table, any other id a Set's entry. A Set of every id cost ~30 bytes an id, and
 * a heap that grows with it, which the collector lets grow further.
 */
export class IdSet {
  /** Ids as numbers, 0 for an empty slot (no such id: a leading 0 keeps an id a text), linear probing. */
  private table = new Uint32Array(1 << 10);
  private count = 0;
  private readonly texts = new Set<string>();

  has(id: string): boolean {
    const n = asNumber(id);
    return n === undefined ? this.texts.has(id) : this.table[this.slotOf(n)] === n;
  }

  add(id: string): void {
    const n = asNumber(id);
    if (n === undefined) return void this.texts.add(id);
    const slot = this.slotOf(n);
    if (this.table[slot] === n) return;
    this.table[slot] = n;
    // Kept under 3/4 full: probes stay short.
    if (++this.count * 4 > this.table.length * 3) this.grow();
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

/** An id that is a decimal number from 1 to 2^32 − 1, written as such (no sign, no leading 0), as that number. */
function asNumber(id: string): number | undefined {
  if (id.length > 10 || !/^[1-9]\d*$/.test(id)) return undefined;
  const n = Number(id);
  return n <= 0xffffffff ? n : undefined;
}
