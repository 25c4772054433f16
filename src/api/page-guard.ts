/**
 * What keeps paging from looping (lists and `carectl api --paginate`): links are followed, even from an empty page, but never
 * back to a page read in the run (A→A, A→B→A, …), nor on from a page repeating the ids of the one before, nor through endless empty pages.
 */
import { idText, stringifyJson } from '../core/exact-json.js';
import { CarectlError } from '../core/errors.js';
import { hash53 } from '../core/hash.js';
import { splitAddress } from './links.js';

/** A list that cannot go on safely: like a network failure, a later run may get past it. */
export class PagingError extends CarectlError {
  /** `continuesAt`: the origin the message tells the user to continue against (a link to another address), its token's. */
  constructor(
    message: string,
    readonly continuesAt?: string,
  ) {
    super(message);
  }
}

/** Empty pages in a row that end a list: 2,500 hidden rows at the service's 50 a page (a service may hide rows, not without end). */
const EMPTY_RUN = 50;

/** What a chain of pages remembers of the pages before: the last one's ids and the empty pages in a row. */
export type ChainState = { ids: string; empty: number };

export class PageGuard {
  /** A number per page read (its address hashed), not the address: a long export reads many pages. */
  private readonly read = new Set<number>();

  /** Before a page is requested: refuses an address already read in this run, its parameters in any order. */
  enter(address: string): void {
    const refusal = this.tryEnter(address);
    if (refusal) throw refusal;
  }

  /** enter() without the throw: records the address (undefined), or returns the refusal of one read already. */
  tryEnter(address: string): PagingError | undefined {
    const [path, params] = splitAddress(address);
    params.sort();
    const key = hash53(`${path}?${params.toString()}`);
    if (this.read.has(key)) return new PagingError(`the service sent a next_page link back to a page already read (${address})`);
    this.read.add(key);
    return undefined;
  }

  /** After a page was read, before it is written: refuses one linking on with its chain's last page's ids, or as the EMPTY_RUN-th empty. */
  follow(previous: ChainState | undefined, records: readonly unknown[], address: string, linksOn: boolean): ChainState {
    const ids = records.map((record) => idText((record as { id?: unknown } | null)?.id) ?? stringifyJson(record)).join('\u0000');
    const empty = records.length === 0 ? (previous?.empty ?? 0) + 1 : 0;
    if (linksOn && records.length > 0 && previous?.ids === ids)
      throw new PagingError(`the service sent the same records as the page before it (${address}) with a link to more: paging would not end`);
    if (linksOn && empty >= EMPTY_RUN)
      throw new PagingError(`the service sent ${empty} empty pages in a row (the last: ${address}) with a link to more: paging would not end`);
    return { ids, empty };
  }
}
