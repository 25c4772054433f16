/**
 * Following `paging.next_page` (never prev_page: it never ends), and the shapes of a list's plan and
 * of a place in it. A list may run in phases: the two is_priority queries of a conversation union, or
 * the id chunks of an authors list.
 */
import type { Throttle } from '../http/transport.js';
import { PagingError } from './page-guard.js';
import type { SliceRule } from './slices.js';
import { linkChanges, type LinkRules } from './links.js';
import { PAGING_STYLES } from './catalogue/index.js';

/** Where a list goes after a page: the next address, or null; `refusal` when the link cannot be followed. */
export interface NextStep {
  next: string | null;
  refusal?: PagingError;
}

/**
 * The address of the page after `current` of the query `base`, given the reply's next_page link.
 * The link is followed only when it keeps the query (links.ts): otherwise its pages could be another list.
 */
export function nextStep(rules: LinkRules, base: string, current: string, link: string | null, count: number): NextStep {
  if (link === null || rules.style === 'none') return { next: null };
  // The spec's offset links drop the query's filters: they only say that more follow.
  if (rules.style === 'offset') return { next: advanceOffset(current, count) };
  const changes = linkChanges(base, link, rules);
  if (changes.length === 0) return { next: link };
  // An unknown parameter is refused too, not dropped nor followed: the client cannot tell a
  // harmless one (utm_src) from one that widens the list or carries the service's own cursor.
  const refusal = new PagingError(
    `the service sent a next_page link that ${changes.join(', ')} (${link}): its pages could be another list, so the list stops here (carectl follows only links that keep the query, moving the cursor or tightening a date bound; if every link of this service does this, report it to its operators)`,
  );
  return { next: null, refusal };
}

/** `address` with its offset moved on by `count`, the other parameters kept in order. */
function advanceOffset(address: string, count: number): string {
  const offset = PAGING_STYLES.offset.cursorParam;
  const [path, query = ''] = address.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set(offset, String(Number(params.get(offset) ?? 0) + count));
  return `${path}?${params.toString()}`;
}

export interface PageSource {
  /** Fetches the page at `url` of the list asked for by `base`: records and where to go next. */
  fetch(url: string, base: string, throttle?: Throttle): Promise<{ records: Record<string, unknown>[] } & NextStep>;
}

/**
 * `paging.next_page` of a reply, or null when there is none. Malformed paging (not an object, a
 * next_page that is not a link) is an error: the list cannot tell whether more follow.
 */
export function nextPageLink(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body) || !('paging' in body)) return null;
  const paging = (body as { paging?: unknown }).paging;
  if (paging === null || paging === undefined) return null;
  if (typeof paging !== 'object' || Array.isArray(paging))
    throw new PagingError(`the service sent a paging that is not an object (${JSON.stringify(paging).slice(0, 80)}): the list cannot tell whether more follow`);
  const next = (paging as { next_page?: unknown }).next_page;
  if (next === undefined || next === null || next === '') return null;
  if (typeof next !== 'string')
    throw new PagingError(`the service sent a next_page that is not a link (${JSON.stringify(next).slice(0, 80)}): the list cannot tell whether more follow`);
  return next;
}

/** Where a list continues: phase, page address and how many records of that page are done. */
export interface Cursor {
  phase: number;
  url: string;
  skip: number;
  /** The last day (days since 1970) of the date slice the page belongs to, when the phase was sliced. */
  end?: number;
  /** Ids of the records before it on its page, written already: named in place of a count (see list-run.ts byIds). */
  done?: string[];
}

/** A list as a sequence of first-page addresses; the plan's fingerprint ties resume tokens to it. */
export interface ListPlan {
  phases: string[];
  /** When relative dates (`today`, `7d`) were resolved: a token carries it, so a resume after midnight asks for the same dates. */
  asOf?: number;
  /** What a resumed run must repeat for its plan to match, for the refusal's message. */
  sameCommand?: string;
  /** The phases overlap (a conversation's priority may change between them): an id an earlier phase wrote is left out. */
  union?: boolean;
  /** The phases can be cut into date slices of this sort date, written in its order. */
  slicing?: SliceRule;
}

export function startOf(plan: ListPlan): Cursor {
  return { phase: 0, url: plan.phases[0] ?? '', skip: 0 };
}
