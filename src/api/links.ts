/**
 * A next_page link against the query it continues. A link may move the paging cursor (skip, offset, page_token, the page
 * size) and tighten a date bound (a snapshot's upper bound, or the keyset form's `<sort date>_gte=<last record's date>`,
 * `_lte` when descending); anything else it drops, changes or adds is a change of the list asked for, never followed.
 */
import { DAY_MS } from '../core/parse.js';
import { PAGING_STYLES, type PagingStyle } from '../catalogue/index.js';

const BOUND = /^(.+)_(gte|gt|lte|lt)$/;
// A date, or a date-time in the ISO 8601 forms services write (`T` or a space; fractions; a zone).
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date bound's value as ms (UTC) and its granularity, or undefined when it is not a date. */
function parseDate(text: string): { ms: number; span: number } | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hours, minutes, seconds, fraction, zone] = m;
  const offset = zone && zone !== 'Z' ? (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2))) * 60_000 : 0;
  const parts = [year, month, day, hours ?? 0, minutes ?? 0, seconds ?? 0].map(Number) as [number, number, number, number, number, number];
  const whole = Date.UTC(parts[0], parts[1] - 1, ...parts.slice(2));
  // Date.UTC carries a 13th month or a 99th minute into the next: a date no calendar has is no bound.
  const back = new Date(whole);
  const read = [back.getUTCFullYear(), back.getUTCMonth() + 1, back.getUTCDate(), back.getUTCHours(), back.getUTCMinutes(), back.getUTCSeconds()];
  if (read.some((value, i) => value !== parts[i])) return undefined;
  const ms = whole + Math.floor(Number(fraction ?? 0) * 1000) - offset;
  return { ms, span: hours === undefined ? DAY_MS : fraction ? 1 : 1000 };
}

/** Whether a parameter's value is a date-time (a keyset position), not a day. */
export const isDateTime = (text: string): boolean => (parseDate(text)?.span ?? DAY_MS) < DAY_MS;

/** A side is its first or last moment (ms); `timed`: given as a date-time, not a day. `invalid`: a bound that is not a date. */
export interface DateRange {
  lo?: { at: number; timed: boolean };
  hi?: { at: number; timed: boolean };
  invalid?: string;
}

/** The bounds of `field` in `params` as one range (a date-only lte covers its whole day). */
export function dateRange(params: URLSearchParams, field: string): DateRange {
  const range: DateRange = {};
  for (const [key, value] of params) {
    const [, bounded, op] = BOUND.exec(key) ?? [];
    if (bounded !== field) continue;
    const date = parseDate(value);
    if (!date) range.invalid = key;
    else if (op === 'gte' || op === 'gt') {
      const at = op === 'gte' ? date.ms : date.ms + date.span;
      if (!range.lo || at > range.lo.at) range.lo = { at, timed: date.span < DAY_MS };
    } else {
      const at = op === 'lte' ? date.ms + date.span - 1 : date.ms - 1;
      if (!range.hi || at < range.hi.at) range.hi = { at, timed: date.span < DAY_MS };
    }
  }
  return range;
}

/** An address's path and its query, the query a copy the caller may change. */
export const splitAddress = (address: string): [string, URLSearchParams] => {
  let split = splits.get(address);
  if (split === undefined) {
    const at = address.indexOf('?');
    split = at < 0 ? [address, new URLSearchParams()] : [address.slice(0, at), new URLSearchParams(address.slice(at + 1))];
    if (splits.size >= SPLITS_KEPT) splits.clear();
    splits.set(address, split);
  }
  return [split[0], new URLSearchParams(split[1])];
};

/**
 * The addresses split last: each page's link and its query are split by every check that reads
 * them (~8 times a page); a copy costs a tenth of a parse (issue 47: ~12 ms of a 20k export).
 */
const splits = new Map<string, [string, URLSearchParams]>();
const SPLITS_KEPT = 64;

/** `address` with one parameter set (a probe's page size or sort, a cursor). */
export function withParam(address: string, key: string, value: string): string {
  const [path, params] = splitAddress(address);
  params.set(key, value);
  return `${path}?${params.toString()}`;
}

export interface LinkRules {
  style: PagingStyle;
  /** The sort parameter, and the sort a link may add to a query that has none: the service's default. */
  sort?: { param: string; default: string };
}

/** Whether `inner` lies within `outer` (a missing side is open). */
const within = (inner: DateRange, outer: DateRange): boolean =>
  (!outer.lo || (inner.lo?.at ?? -Infinity) >= outer.lo.at) && (!outer.hi || (inner.hi?.at ?? Infinity) <= outer.hi.at);

/** What a link changes in the query `base` beyond the cursor and tighter date bounds; [] when nothing. */
export function linkChanges(base: string, link: string, rules: LinkRules): string[] {
  const [basePath, baseParams] = splitAddress(base);
  const [linkPath, linkParams] = splitAddress(link);
  const changes: string[] = [];
  if (linkPath !== basePath) changes.push(`goes to another path (${linkPath})`);
  const { cursorParam, sizeParam } = PAGING_STYLES[rules.style];
  // The fields with a date bound in either (`is_priority_gt=x` is an ordinary filter, not a bound).
  const dates = new Set([...baseParams, ...linkParams].flatMap(([key, value]) => (parseDate(value) ? (BOUND.exec(key)?.slice(1, 2) ?? []) : [])));
  for (const key of new Set([...baseParams.keys(), ...linkParams.keys()])) {
    if (key === cursorParam || key === sizeParam || dates.has(BOUND.exec(key)?.[1] ?? '')) continue;
    const wanted = baseParams.getAll(key);
    const given = linkParams.getAll(key);
    if (key === rules.sort?.param && wanted.length === 0 && given.length === 1 && given[0] === rules.sort.default) continue;
    if (JSON.stringify(wanted.sort()) === JSON.stringify(given.sort())) continue;
    changes.push(given.length === 0 ? `drops ${key} from the query` : wanted.length === 0 ? `adds ${key} to the query` : `changes ${key} in the query`);
  }
  for (const field of dates) {
    const want = dateRange(baseParams, field);
    const got = dateRange(linkParams, field);
    if (got.invalid) changes.push(`changes ${got.invalid} in the query`);
    else if (!within(got, want)) changes.push(`widens the query's ${field} range`);
  }
  return changes;
}

/**
 * `link` with each parameter of `base` it lost given back: `fields`, `include` or a page size shape
 * records and never choose them, and a filter lost would widen the list. The link's own cursor wins.
 */
export function withQueryBack(base: string, link: string, style: PagingStyle): string {
  const baseParams = splitAddress(base)[1];
  const [path, params] = splitAddress(link);
  const { cursorParam, sizeParam } = PAGING_STYLES[style];
  // An opaque page_token may hold its page size: the link's own, never one added.
  const cursor = new Set<string | null>([cursorParam, style === 'token' ? sizeParam : null]);
  const lost = [...baseParams].filter(([key]) => !cursor.has(key) && !params.has(key));
  if (lost.length === 0) return link;
  for (const [key, value] of lost) params.append(key, value);
  return `${path}?${params.toString()}`;
}
