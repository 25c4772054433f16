/**
 * Date slices: a list ordered by a date it can be bounded by is the concatenation of the same list
 * bounded to consecutive days (UTC, the date parameters' granularity). A slice is half-open,
 * `_gte=FIRST&_lt=` the day after LAST, which services reading a date-only bound as the whole day
 * and as its midnight agree on.
 */
import { PAGING_STYLES, type ResourceSpec } from '../catalogue/index.js';
import { DAY_MS, OPEN_FROM, OPEN_TO } from '../core/parse.js';
import { dateRange, splitAddress, withParam, type DateRange } from './links.js';
import type { ListPlan } from './paging.js';

/** The sort date of a list, its direction (the order its slices are written in), and the sort parameter for a probe. */
export type SliceRule = { field: string; descending: boolean; sortParam: string };

/** The calendar day of a time in ms: a "day" is one of those (days since 1970, UTC) unless named an ordered day (see SliceDays). */
export const dayOfMs = (ms: number): number => Math.floor(ms / DAY_MS);
const dayText = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

const OPEN_FROM_DAY = dayOfMs(Date.parse(OPEN_FROM));
const OPEN_TO_DAY = dayOfMs(Date.parse(OPEN_TO));

/**
 * How a list of `spec` with `query` can be sliced: by its default sort date, ascending or
 * descending, unless the query bounds another date field (the two cannot be combined). Another
 * sort date (newest_sort_date) moves with each new message: a conversation could move from a
 * slice not read yet into one already read, so such a list is read as one chain.
 */
export function sliceRule(spec: ResourceSpec, query: ReadonlyArray<readonly [string, string]>): SliceRule | undefined {
  const dates = spec.sortDates;
  if (!dates || spec.paging !== 'skip') return undefined;
  const sorts = query.filter(([key]) => key === dates.param).map(([, value]) => value);
  const sort = sorts[0] ?? dates.default;
  if (sorts.length > 1 || sort.includes(',')) return undefined;
  const field = sort.replace(/^-/, '');
  if (field !== dates.default) return undefined;
  if (query.some(([key]) => dates.fields.some((other) => other !== field && key.startsWith(`${other}_`)))) return undefined;
  return { field, descending: sort.startsWith('-'), sortParam: dates.param };
}

/** A far-end probe's page size: its one record's day is in its next link. */
const FAR_PROBE_SIZE = '1';

/**
 * A run's phases' days, as ordered days: in the sort order (a descending list's day d is -d, so callers read as ascending). Their
 * bounds, keyset positions, the far-end probe and its answer, addresses narrowed to days. Holds no state of the run (plan.ts does).
 */
export class SliceDays {
  private readonly sign: number;

  constructor(
    private readonly plan: ListPlan,
    private readonly rule: SliceRule,
  ) {
    this.sign = rule.descending ? -1 : 1;
  }

  /** A calendar day as an ordered day, and back. */
  toOrdered = (day: number): number => this.sign * day;
  toCalendar = (ordered: number | undefined): number | undefined => (ordered === undefined ? undefined : this.sign * ordered);

  /**
   * `address` narrowed to the days lo..hi (undefined: as it is). A side as tight already keeps the
   * user's bound as written (an `lte:D` holds its own reading); an open side is closed by a bound
   * no record passes, as the spec wants a pair.
   */
  narrowed(address: string, lo: number | undefined, hi: number | undefined): string {
    const [from, to] = this.rule.descending ? [this.toCalendar(hi), this.toCalendar(lo)] : [lo, hi];
    const [path, params] = splitAddress(address);
    const field = this.rule.field;
    const range = dateRange(params, field);
    const setLo = from !== undefined && !(range.lo && range.lo.at >= from * DAY_MS);
    const setHi = to !== undefined && !(range.hi && range.hi.at <= (to + 1) * DAY_MS - 1);
    const replaced = new Set([...(setLo ? ['gte', 'gt'] : []), ...(setHi ? ['lte', 'lt'] : [])].map((op) => `${field}_${op}`));
    const result = new URLSearchParams([...params].filter(([key]) => !replaced.has(key)));
    if (setLo || (setHi && !range.lo)) result.append(`${field}_gte`, setLo ? dayText(from as number) : OPEN_FROM);
    if (setHi || (setLo && !range.hi)) result.append(`${field}_lt`, setHi ? dayText((to as number) + 1) : OPEN_TO);
    return `${path}?${result.toString()}`;
  }

  /**
   * Where a chain has got to: the day of its next link's keyset bound (`_gte` with a time
   * ascending, `_lte` descending), if tighter than its query's and its skip less than the records
   * read: a snapshot's pinned bound, whose skip counts every record, is no position.
   */
  positionOf(next: string, base: string, read: number): number | undefined {
    const own = this.side(base, 'near');
    const side = this.side(next, 'near');
    if (!side?.timed || !(Number(splitAddress(next)[1].get(PAGING_STYLES.skip.cursorParam) ?? 0) < read)) return undefined;
    return own && this.sign * side.at <= this.sign * own.at ? undefined : this.toOrdered(dayOfMs(side.at));
  }

  /** The date bound of `address` on the side a list reads first (near) or last (far). */
  private side(address: string, which: 'near' | 'far'): DateRange['lo'] {
    const range = dateRange(splitAddress(address)[1], this.rule.field);
    return (which === 'near') === this.rule.descending ? range.hi : range.lo;
  }

  /** The phase's own last day, if its query bounds it (the bound closing a one-sided range counts as none). */
  farBound(phase: number): number | undefined {
    const side = this.side(this.plan.phases[phase] as string, 'far');
    const day = side && dayOfMs(side.at);
    return day === undefined || day <= OPEN_FROM_DAY || day >= OPEN_TO_DAY - 1 ? undefined : this.toOrdered(day);
  }

  /** The far-end probe's address: the phase's first record in the other order. */
  farProbe(phase: number): string {
    const address = withParam(this.plan.phases[phase] as string, this.rule.sortParam, this.rule.descending ? this.rule.field : `-${this.rule.field}`);
    return withParam(address, PAGING_STYLES.skip.sizeParam, FAR_PROBE_SIZE);
  }

  /** The phase's last day as far as cuts go (the last slice stays open): its own far bound, else `far` the far end (ascending, the day the dates were resolved at at least). */
  lastDay(phase: number, far: number | undefined): number | undefined {
    const own = this.farBound(phase);
    if (own !== undefined) return own;
    const asOf = this.plan.asOf === undefined || this.rule.descending ? undefined : dayOfMs(this.plan.asOf);
    return far === undefined ? asOf : Math.max(far, asOf ?? far);
  }

  /** The far end a probe's next link tells (its keyset bound's day), if it tells one. */
  farEndOf(next: string | null): number | undefined {
    const side = next ? this.side(next, 'far') : undefined;
    return side?.timed ? this.toOrdered(dayOfMs(side.at)) : undefined;
  }
}
