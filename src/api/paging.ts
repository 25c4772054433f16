/**
 * A list's plan, its first-page addresses (phases: a conversation union's two is_priority queries, an
 * authors list's id chunks), and following `paging.next_page` (never prev_page: it never ends).
 */
import type { QueryParams, Throttle } from '../http/transport.js';
import { isObject } from '../core/exact-json.js';
import { PagingError } from './page-guard.js';
import { sliceRule, type SliceRule } from './slices.js';
import { linkChanges, splitAddress, withParam, withQueryBack, type LinkRules } from './links.js';
import { PAGING_STYLES, type ResourceSpec, type Version } from '../catalogue/index.js';

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
  /** What a next_page link may change: a resume token's address is held to the same. */
  rules?: LinkRules;
  /** The service's base address: a token printed against one is refused against another. */
  origin?: string;
  /** Parameters whose values are names resolved per run (--channel NAME): a token is checked without them before they are. */
  named?: readonly string[];
  /** What carectl filters itself, never sent (content's --created bounds): a token fits only the same. */
  local?: string;
}

/** A page of a list as its consumer takes it. */
export interface TakenPage {
  url: string;
  records: Record<string, unknown>[];
  next: string | null;
  /** Records from its start that the run this one continues wrote (beyond its length: the next page's). */
  writtenBefore: number;
  /** The next link was refused: a run continuing the list reads this page again. */
  nextRefused?: boolean;
}

type PlanOptions = { pageSize: number; limit?: number | undefined; asOf?: number };

/** A list's phases: one, a union where the service requires a filter the query lacks (conversations), or id chunks (authors). */
export function listPlan(spec: ResourceSpec, version: Version, query: QueryParams, options: PlanOptions, ids?: string[]): ListPlan {
  const path = `${version}/${spec.path}`;
  const sizeParam = PAGING_STYLES[spec.paging].sizeParam;
  // Pages no larger than --limit needs; a resumed run sets its own (see decodeResumeToken).
  const pageSize = Math.min(options.pageSize, options.limit ?? Infinity);
  const base: Array<readonly [string, string]> = sizeParam ? [...query, [sizeParam, String(pageSize)]] : [...query];
  const rules: LinkRules = { style: spec.paging, ...(spec.sortDates && { sort: spec.sortDates }) };
  const address = (params: QueryParams): string => `${path}?${new URLSearchParams(params as Array<[string, string]>).toString()}`;
  if (spec.listByIds && ids) {
    // Chunks are phases, so not sized by --limit: a --limit run's token must fit the run continuing it.
    const chunk = Math.min(spec.listByIds.max, options.pageSize);
    const chunks: string[] = [];
    for (let i = 0; i < ids.length; i += chunk) chunks.push(address([[spec.listByIds.param, ids.slice(i, i + chunk).join(',')], ...base]));
    return { phases: chunks, sameCommand: 'the same ids, filters and --page-size', asOf: options.asOf, rules };
  }
  const common = { slicing: sliceRule(spec, query), asOf: options.asOf, rules };
  const required = spec.requireOneOf;
  if (!required || query.some(([key]) => required.params.includes(key))) return { phases: [address(base)], ...common };
  return { phases: required.union.values.map((value) => address([[required.union.param, value], ...base])), union: true, ...common };
}

/** Where a list continues: phase, page address and the records of that page written before it (`writtenBefore`). */
export interface Cursor {
  phase: number;
  url: string;
  writtenBefore: number;
  /** The calendar day the page's date slice ends with, when the phase was sliced. */
  sliceLastDay?: number;
  /** Ids of the records before it on its page, written already: named in place of a count (see list-run.ts byIds). */
  namedIds?: string[];
}

/** Where a list goes after a page: the next address, or null; `refusal` when the link cannot be followed. */
type NextStep = { next: string | null; refusal?: PagingError };

export interface PageSource {
  /** Fetches the page at `url` of the list asked for by `base`: records and where to go next. */
  fetch(url: string, base: string, throttle?: Throttle): Promise<{ records: Record<string, unknown>[] } & NextStep>;
}

/** The page after `url` of the query `base`: the reply's link, only where it keeps the query (its pages could be another list). */
export function nextStep(rules: LinkRules, base: string, url: string, link: string | null, count: number): NextStep {
  if (link === null || rules.style === 'none') return { next: null };
  if (rules.style === 'offset') {
    // The spec's offset links drop the query's filters: they only say that more follow.
    const offset = PAGING_STYLES.offset.cursorParam;
    return { next: withParam(url, offset, String(Number(splitAddress(url)[1].get(offset) ?? 0) + count)) };
  }
  const restored = withQueryBack(base, link, rules.style);
  const changes = linkChanges(base, restored, rules);
  if (changes.length === 0) return { next: restored };
  // Unknown parameters too: the client cannot tell a harmless one (utm_src) from one that widens the list or is the service's cursor.
  const refusal = new PagingError(
    `the service sent a next_page link that ${changes.join(', ')} (${link}): its pages could be another list, so the list stops here (carectl follows only links that keep the query, moving the cursor or tightening a date bound; if every link of this service does this, report it to its operators)`,
  );
  return { next: null, refusal };
}

const malformed = (what: string, value: unknown): PagingError =>
  new PagingError(`the service sent ${what} (${JSON.stringify(value).slice(0, 80)}): the list cannot tell whether more follow`);

/** `paging.next_page` of a reply, or null when there is none; malformed paging is an error. */
export function nextPageLink(body: unknown): string | null {
  const paging = isObject(body) ? body.paging : undefined;
  if (paging === null || paging === undefined) return null;
  if (!isObject(paging)) throw malformed('a paging that is not an object', paging);
  const next = paging.next_page;
  if (next === undefined || next === null || next === '') return null;
  if (typeof next !== 'string') throw malformed('a next_page that is not a link', next);
  return next;
}
