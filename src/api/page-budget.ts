/**
 * The page budget of a parallel list: the pages its parts may hold ahead of the single writer,
 * 8 per slot of --parallel (with 4, a run ended on a few long chains). The parts the writer
 * needs next (the first with pages left, one per slot of --parallel) may read while all parts hold at most the
 * budget and one page per slot more; the parts beyond them only while all hold a quarter of it
 * (with half, a 100k export took 12 % longer). So pages read far ahead never keep the next ones
 * from being read, which would leave the writer waiting on one chain of pages alone, the budget
 * full; and for the same reason no chain is longer than half of what its slot may hold.
 */
const SLOT_PAGES = 8;

export class PageBudget {
  /** Pages held ahead of the writer, at most (and one per slot in flight). */
  private readonly pages: number;

  constructor(
    private readonly parallel: number,
    private readonly pageSize: number,
  ) {
    this.pages = SLOT_PAGES * parallel;
  }

  /**
   * Whether a part may ask for a page: `needed` counts the parts with pages left from the
   * writer's up to it, `held` the pages all parts hold or ask for, its own request included.
   */
  allows(needed: number, held: number): boolean {
    return held <= (needed <= this.parallel ? this.pages + this.parallel : this.pages / 4);
  }

  /** The most records a chain of pages should give: half of what its slot may hold. */
  get longestChain(): number {
    return (SLOT_PAGES / 2) * this.pageSize;
  }
}
