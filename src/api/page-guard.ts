/**
 * What keeps paging from looping: a service's next_page links are followed, even from an empty
 * page, but never back to a page already read in the run (A→A, A→B→A, …), and never on from a
 * page that repeats the ids of the page before it, nor through endless empty pages. Lists and
 * `carectl api --paginate` use the same guard.
 */
import { idText, stringifyJson } from '../core/exact-json.js';
import { CarectlError } from '../core/errors.js';
import { hash53 } from '../core/hash.js';

/** A list that cannot go on safely: like a network failure, a later run may get past it. */
export class PagingError extends CarectlError {}

/**
 * An address with its query parameters in a canonical order (by name; repeated names keep their
 * order), so `?a=1&b=2` and `?b=2&a=1` are the same page. Relative and absolute addresses alike.
 */
export function normalisedAddress(address: string): string {
  const at = address.indexOf('?');
  if (at < 0) return address;
  const params = new URLSearchParams(address.slice(at + 1));
  params.sort();
  return `${address.slice(0, at)}?${params.toString()}`;
}

/** The ids of a page's records, as one comparable string. */
export function idsOf(records: readonly unknown[]): string {
  return records.map((record) => idText((record as { id?: unknown } | null)?.id) ?? stringifyJson(record)).join('\u0000');
}

export class PageGuard {
  /** A number per page read (its address hashed), not the address: a long export reads many pages. */
  private readonly read = new Set<number>();

  /** Before a page is requested: refuses an address already read in this run. */
  enter(address: string, shown = address): void {
    const key = hash53(normalisedAddress(address));
    if (this.read.has(key)) throw new PagingError(`the service sent a next_page link back to a page already read (${shown})`);
    this.read.add(key);
  }

  /**
   * After a page was read, before it is written: refuses a page that links on with the ids of the
   * page before it in its chain (`previous`), or as the EMPTY_RUN-th empty page in a row (a service
   * may hide rows, but not without end). Answers the chain's state for the next call.
   */
  follow(previous: ChainState | undefined, records: readonly unknown[], address: string, linksOn: boolean): ChainState {
    const ids = idsOf(records);
    const empty = records.length === 0 ? (previous?.empty ?? 0) + 1 : 0;
    if (linksOn && records.length > 0 && previous?.ids === ids)
      throw new PagingError(`the service sent the same records as the page before it (${address}) with a link to more: paging would not end`);
    if (linksOn && empty >= EMPTY_RUN)
      throw new PagingError(`the service sent ${empty} empty pages in a row (the last: ${address}) with a link to more: paging would not end`);
    return { ids, empty };
  }
}

/** What a chain of pages remembers of the pages before: the last one's ids and the empty pages in a row. */
export interface ChainState {
  ids: string;
  empty: number;
}

/** Empty pages in a row that end a list: 2,500 rows not shown at the service's 50 a page. */
export const EMPTY_RUN = 50;
