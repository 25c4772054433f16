/**
 * Date slices: a list ordered by a date it can be bounded by is the concatenation of the same list
 * bounded to consecutive days (UTC, the date parameters' granularity). A slice is half-open,
 * `_gte=FIRST&_lt=` the day after LAST, which services reading a date-only bound as the whole day
 * and as its midnight agree on.
 */
import { PAGING_STYLES, type ResourceSpec } from '../catalogue/index.js';
import { DAY_MS } from '../core/parse.js';
import { dateRange, splitAddress, withParam, type DateRange } from './links.js';
import type { ListPlan } from './paging.js';

/** The sort date of a list, its direction (the order its slices are written in), and the sort parameter for a probe. */
export type SliceRule = { field: string; descending: boolean; sortParam: string };

/** The calendar day of a time in ms: a "day" is one of those (days since 1970, UTC) unless named an ordered day (see SliceDays). */
export const dayOfMs = (ms: number): number => Math.floor(ms / DAY_MS);
export const dayText = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * The bounds that close a side the spec's "supplied as a pair" leaves open: days no record's
 * sort date can pass (never today or tomorrow: sort dates may lie in the future).
 */
export const OPEN_FROM = '1900-01-01';
export const OPEN_TO = '9999-12-31';
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

const SIZE = PAGING_STYLES.skip.sizeParam;

/** A far-end probe's page size: its one record's day is in its next link. */
const FAR_PROBE_SIZE = '1';
/** A near-bound probe's page size: two records tell a service ignoring a bound (see nearAnswer). */
const NEAR_PROBE_SIZE = '2';

/** The days at a phase's end read as a slice of their own from its start (WorkQueue.readRecent): about a month. */
const RECENT_DAYS = 30;

/** A probe's answer (a page of a record or two): its records' ids and its next link; null when it failed. */
export type Probed = { ids: string[]; next: string | null } | null;

/** The run's side: it sends probes, and hears that an answer may let a slice be cut. */
export type DaysHost = { probe(address: string): Promise<Probed>; changed(): void };

/**
 * What a run knows of its phases' days, as ordered days: in the sort order (a descending list's day d is -d, so callers read as
 * ascending). Bounds, far ends, and whether the service keeps to a cut's bound.
 */
export class SliceDays {
  private readonly far = new Map<number, number | null | undefined>();
  private readonly near = new Map<number, boolean | undefined>();
  /** Each phase's first page from its start: its ids, all dated no later than its keyset position. */
  private readonly samples = new Map<number, { ids: string[]; position: number }>();
  /** Phases whose first page a probe is asking for. */
  private readonly sampling = new Set<number>();
  private readonly sign: number;

  constructor(
    private readonly plan: ListPlan,
    private readonly rule: SliceRule,
    private readonly host: DaysHost,
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

  /** The phase's own bound on a side (near: its first day), if its query has one (the bounds closing a one-sided range count as none). */
  bound(phase: number, which: 'near' | 'far'): number | undefined {
    const side = this.side(this.plan.phases[phase] as string, which);
    const day = side && dayOfMs(side.at);
    return day === undefined || day <= OPEN_FROM_DAY || day >= OPEN_TO_DAY - 1 ? undefined : this.toOrdered(day);
  }

  /** The phase's last day as far as cuts go (the last slice stays open): see docs/ARCHITECTURE.md, "The list engine", 5. */
  lastDay(phase: number): number | undefined {
    const own = this.bound(phase, 'far');
    if (own !== undefined) return own;
    const asOf = this.asOfDay();
    const far = this.far.get(phase) ?? undefined;
    return far === undefined ? asOf : Math.max(far, asOf ?? far);
  }

  /** Ascending, the day the dates were resolved at: no probe is needed to estimate up to it. */
  private asOfDay(): number | undefined {
    return this.plan.asOf === undefined || this.rule.descending ? undefined : dayOfMs(this.plan.asOf);
  }

  /** Whether to probe for the far end: no bound of its own, not asked yet and, ascending, a `long` chain `reached` past asOfDay (a short list sends no probe). */
  farEndWanted(phase: number, reached: number, long: boolean): boolean {
    const asOf = this.asOfDay();
    return this.bound(phase, 'far') === undefined && !this.far.has(phase) && (asOf === undefined || (reached > asOf && long));
  }

  /** Probes for the far end once: one record in the other order, whose next link's keyset bound is that record's day. */
  probeFarEnd(phase: number): void {
    if (this.far.has(phase)) return;
    this.far.set(phase, undefined);
    void this.host.probe(this.farProbe(phase)).then((probed) => {
      this.far.set(phase, (probed && this.farEndOf(probed.next)) ?? null);
      this.host.changed();
    });
  }

  /** The far-end probe's address: the phase's first record in the other order. */
  farProbe(phase: number): string {
    const address = withParam(this.plan.phases[phase] as string, this.rule.sortParam, this.rule.descending ? this.rule.field : `-${this.rule.field}`);
    return withParam(address, SIZE, FAR_PROBE_SIZE);
  }

  /** The far end a probe's next link tells (its keyset bound's day), if it tells one. */
  farEndOf(next: string | null): number | undefined {
    const side = next ? this.side(next, 'far') : undefined;
    return side?.timed ? this.toOrdered(dayOfMs(side.at)) : undefined;
  }

  /** The phase's first page, its next link at `position`; true when the near-bound probe may go out at once (a round trip sooner). */
  sample(phase: number, records: readonly Record<string, unknown>[], position: number): boolean {
    if (this.samples.has(phase)) return false;
    this.samples.set(phase, { ids: records.map((record) => String(record.id)), position });
    return !this.rule.descending && this.plan.asOf !== undefined;
  }

  /** The first day of the phase's recent days, RECENT_DAYS up to its last day as far as cuts go; undefined while that is unknown or they would be all its days. */
  recentFrom(phase: number): number | undefined {
    const last = this.lastDay(phase);
    const near = this.bound(phase, 'near');
    if (last === undefined || (near !== undefined && last - near < 2 * RECENT_DAYS)) return undefined;
    return last - RECENT_DAYS + 1;
  }

  /**
   * What the recent slice's first page (its days from `from` on) tells of the bound a cut adds, against the phase's first page:
   * a service that ignores it gives the list's first records again. Where that page ends before the recent days, any of its
   * records coming back tells; where it reaches into them, only its first two. Undefined where it cannot tell (either page
   * shows too few records, or the list begins within the recent days). What it tells holds for every phase: they are one
   * service's answers to one kind of bound.
   */
  recentKept(phase: number, from: number, records: readonly Record<string, unknown>[]): boolean | undefined {
    const sample = this.samples.get(phase);
    if (!sample || sample.ids.length < 2 || records.length === 0) return undefined;
    const ends = sample.position < from;
    const back = new Set(ends ? sample.ids : sample.ids.slice(0, 2));
    const kept = !records.some((record) => back.has(String(record.id)));
    if (!kept && !ends) return undefined;
    this.plan.phases.forEach((_, other) => this.near.has(other) || this.near.set(other, kept));
    return kept;
  }

  /**
   * Whether the service keeps to the bound a cut adds on the side read first: the phase's first
   * records must not come back bounded past their day. False until answered, and for good when it
   * cannot tell: the phase is read as one chain, as --parallel 1 would.
   */
  nearKept(phase: number): boolean {
    return this.near.get(phase) === true;
  }

  /**
   * Sends the near-bound probe that answers nearKept, once per phase. Without the phase's first page (a resumed run), a
   * probe for it goes first; the pump that its answer brings sends the other.
   */
  probeNear(phase: number): void {
    if (this.near.has(phase)) return;
    const sample = this.samples.get(phase);
    if (sample === undefined) return this.probeSample(phase);
    this.near.set(phase, undefined);
    this.nearAnswer(phase, sample).then(
      (kept) => {
        this.near.set(phase, kept);
        this.host.changed();
      },
      () => this.near.set(phase, false),
    );
  }

  private probeSample(phase: number): void {
    if (this.sampling.has(phase)) return;
    this.sampling.add(phase);
    const address = this.plan.phases[phase] as string;
    this.host
      .probe(withParam(address, SIZE, NEAR_PROBE_SIZE))
      .then((first) => {
        const position = first?.next ? this.positionOf(first.next, address, first.ids.length) : undefined;
        if (!first || position === undefined) this.near.set(phase, false);
        else if (!this.samples.has(phase)) this.samples.set(phase, { ids: first.ids, position });
      })
      .catch(() => this.near.set(phase, false))
      .finally(() => this.host.changed());
  }

  private async nearAnswer(phase: number, sample: { ids: string[]; position: number }): Promise<boolean> {
    const address = this.plan.phases[phase] as string;
    // A service ignoring the bound gives the first two rows again; hidden rows would hide that, so
    // it tells only with two in the sample and one shown past the position.
    if (sample.ids.length < 2) return false;
    const past = await this.host.probe(withParam(this.narrowed(address, sample.position + 1, undefined), SIZE, NEAR_PROBE_SIZE));
    const before = new Set(sample.ids);
    return past !== null && past.ids.length > 0 && !past.ids.some((id) => before.has(id));
  }
}
