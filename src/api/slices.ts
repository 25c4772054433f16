/**
 * Date slices: a list ordered by a date it can be bounded by (conversations by their sort date)
 * is the concatenation, in that order, of the same list bounded to consecutive day ranges. Days
 * are the granularity of the date parameters (YYYY-MM-DD, UTC); a slice is half-open,
 * `<field>_gte=FIRST` and `<field>_lt=` the day after LAST, which a service reading a date-only
 * bound as the whole day and one reading it as that day's midnight agree on.
 */
import { PAGING_STYLES, type ResourceSpec } from './catalogue/index.js';
import { DAY_MS } from '../core/parse.js';
import { dateRange, splitAddress } from './links.js';
import type { ListPlan } from './paging.js';

/** The sort date of a list and its direction: the order its slices are written in. */
export interface SliceRule {
  field: string;
  descending: boolean;
  /** The list's sort and page size parameters, for a probe of its far end. */
  sortParam: string;
  sizeParam: string;
}

export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);
export const dayText = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * The bounds that close a side the spec's "supplied as a pair" leaves open: days no record's
 * sort date can pass (never today or tomorrow: sort dates may lie in the future).
 */
export const OPEN_FROM = '1900-01-01';
export const OPEN_TO = '9999-12-31';
const OPEN_FROM_DAY = dayOf(Date.parse(OPEN_FROM));
const OPEN_TO_DAY = dayOf(Date.parse(OPEN_TO));

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
  return { field, descending: sort.startsWith('-'), sortParam: dates.param, sizeParam: PAGING_STYLES.skip.sizeParam };
}

/**
 * The first and last day the address's bounds on the rule's field allow (undefined: open). A cut
 * inside them keeps the user's own bound wherever it is as tight (narrowed), so the slices
 * partition the range under either reading of a date-only bound. The bounds that close a
 * one-sided range (OPEN_FROM, OPEN_TO) count as open: there is no range there to cut at once.
 */
export function daysOf(address: string, rule: SliceRule): { lo?: number; hi?: number } {
  const range = dateRange(splitAddress(address)[1], rule.field);
  const lo = range.lo && dayOf(range.lo.at);
  const hi = range.hi && dayOf(range.hi.at);
  return { ...(lo !== undefined && lo > OPEN_FROM_DAY && { lo }), ...(hi !== undefined && hi < OPEN_TO_DAY - 1 && { hi }) };
}

/**
 * Where a chain of pages has got to, from its next address: the day of the keyset bound on the
 * side it moves (`_gte` with a time when ascending, `_lte` descending), which says that every
 * record before it was read, and `skip` those at that very second. It is a keyset bound only if
 * it is tighter than the chain's own query (`base`) and its skip is less than the records the
 * chain has read (`read`): a snapshot's pinned `_lte` with a skip that counts every record read
 * is no position. Undefined when there is none (a plain skip link).
 */
export function positionOf(address: string, base: string, read: number, rule: SliceRule): number | undefined {
  const params = splitAddress(address)[1];
  const own = dateRange(splitAddress(base)[1], rule.field);
  const range = dateRange(params, rule.field);
  const side = rule.descending ? range.hi : range.lo;
  if (!side?.value.includes('T') || !(Number(params.get(PAGING_STYLES.skip.cursorParam) ?? 0) < read)) return undefined;
  const tighter = rule.descending ? !own.hi || side.at < own.hi.at : !own.lo || side.at > own.lo.at;
  return tighter ? dayOf(side.at) : undefined;
}

/**
 * `address` with its bounds on the rule's field narrowed to the days lo..hi (`_gte=lo`, `_lt=` the
 * day after hi); a side already as tight under every reading keeps its own bound as written. The
 * spec asks for a sort date's bounds as a pair, so a side that a slice leaves open is closed by
 * a bound no record passes (OPEN_FROM, OPEN_TO).
 */
export function narrowed(address: string, rule: SliceRule, lo: number | undefined, hi: number | undefined): string {
  const [path, params] = splitAddress(address);
  const field = rule.field;
  const range = dateRange(params, field);
  const setLo = lo !== undefined && !(range.lo && range.lo.at >= lo * DAY_MS);
  // An `lte:D` the user gave stays as written when the slice ends with D (its own reading holds).
  const setHi = hi !== undefined && !(range.hi && range.hi.at <= (hi + 1) * DAY_MS - 1);
  const result = new URLSearchParams();
  for (const [key, value] of params) {
    const bound = /_(gte|gt|lte|lt)$/.exec(key);
    const side = bound && key === `${field}_${bound[1]}` ? (bound[1]!.startsWith('g') ? 'lo' : 'hi') : undefined;
    if ((side === 'lo' && setLo) || (side === 'hi' && setHi)) continue;
    result.append(key, value);
  }
  const narrowing = setLo || setHi;
  if (setLo) result.append(`${field}_gte`, dayText(lo as number));
  else if (narrowing && !range.lo) result.append(`${field}_gte`, OPEN_FROM);
  if (setHi) result.append(`${field}_lt`, dayText((hi as number) + 1));
  else if (narrowing && !range.hi) result.append(`${field}_lt`, OPEN_TO);
  return `${path}?${result.toString()}`;
}

/**
 * The far end of a sort date's list, asked for with one record of it in the other order: the
 * address, and the day its reply's next link says that record has (the keyset bound), if any.
 */
export function farEndProbe(address: string, rule: SliceRule): string {
  const [path, params] = splitAddress(address);
  params.set(rule.sortParam, rule.descending ? rule.field : `-${rule.field}`);
  return withSize(`${path}?${params.toString()}`, rule, 1);
}

/** `address` asking for pages of `size` records. */
export function withSize(address: string, rule: SliceRule, size: number): string {
  const [path, params] = splitAddress(address);
  params.set(rule.sizeParam, String(size));
  return `${path}?${params.toString()}`;
}

export function farEndOf(link: string | null, rule: SliceRule): number | undefined {
  if (link === null) return undefined;
  const range = dateRange(splitAddress(link)[1], rule.field);
  // Descending the list ends at its oldest record: the probe's _gte. Ascending, its newest: the
  // probe's _lte (a snapshot's pinned bound is no earlier than the newest record either).
  const side = rule.descending ? range.lo : range.hi;
  return side?.value.includes('T') ? dayOf(side.at) : undefined;
}

/** A probe's answer: its records' ids and its next link. */
export interface Probed {
  ids: string[];
  next: string | null;
}

export interface DaysHost {
  /** Sends a probe (a page of a record or two); null when it failed. */
  probe(address: string): Promise<Probed | null>;
  /** An answer came that may let a slice be cut. */
  changed(): void;
}

/**
 * What a run knows of its phases' days, in the sort order (a descending list's day d is -d, so
 * that callers read as ascending): each phase's bounds, its far end (asked for once, with one
 * record in the other order), and whether the service keeps to the bound a cut adds.
 */
export class SliceDays {
  private readonly far = new Map<number, number | null | undefined>();
  private readonly near = new Map<number, boolean | undefined>();
  /** Each phase's first page from its start: its ids, all dated no later than its keyset position. */
  private readonly samples = new Map<number, { ids: string[]; position: number }>();
  private readonly sign: number;

  constructor(
    private readonly plan: ListPlan,
    private readonly rule: SliceRule,
    private readonly host: DaysHost,
  ) {
    this.sign = rule.descending ? -1 : 1;
  }

  fromDay = (day: number): number => this.sign * day;
  dayOf = (ordered: number | undefined): number | undefined => (ordered === undefined ? undefined : this.sign * ordered);

  /** `address` narrowed to the ordered days lo..hi (undefined: as it is). */
  narrowed(address: string, lo: number | undefined, hi: number | undefined): string {
    const [from, to] = this.rule.descending ? [this.dayOf(hi), this.dayOf(lo)] : [lo, hi];
    return narrowed(address, this.rule, from, to);
  }

  positionOf(next: string, base: string, read: number): number | undefined {
    return this.dayOf(positionOf(next, base, read, this.rule));
  }

  /** The phase's own first day in the sort order, if its query bounds it. */
  firstDay(phase: number): number | undefined {
    const days = daysOf(this.plan.phases[phase] as string, this.rule);
    return this.dayOf(this.rule.descending ? days.hi : days.lo);
  }

  /**
   * The phase's last day in the sort order: its query's bound, else its far end, asked for once.
   * Ascending, until the answer comes (or when it says nothing), the day the run's dates were
   * resolved at: an estimate for where to cut, never a bound (the last slice stays open).
   */
  lastDay(phase: number): number | undefined {
    const days = daysOf(this.plan.phases[phase] as string, this.rule);
    const own = this.dayOf(this.rule.descending ? days.lo : days.hi);
    if (own !== undefined) return own;
    if (!this.far.has(phase)) this.askFarEnd(phase);
    const far = this.far.get(phase) ?? undefined;
    const asOf = this.plan.asOf === undefined || this.rule.descending ? undefined : dayOf(this.plan.asOf);
    return far === undefined ? asOf : Math.max(far, asOf ?? far);
  }

  private askFarEnd(phase: number): void {
    this.far.set(phase, undefined);
    void this.host.probe(farEndProbe(this.plan.phases[phase] as string, this.rule)).then((probed) => {
      this.far.set(phase, this.dayOf(farEndOf(probed?.next ?? null, this.rule)) ?? null);
      this.host.changed();
    });
  }

  /** A page read from the phase's first address, whose next link stands at `position`. */
  sample(phase: number, records: readonly Record<string, unknown>[], position: number): void {
    if (!this.samples.has(phase)) this.samples.set(phase, { ids: records.map((record) => String(record.id)), position });
  }

  /**
   * Whether the service keeps to the bound a cut adds on the side read first, asked once per
   * phase: records of its start, all dated up to a keyset position, must not come back from the
   * phase bounded past that day. False until the answer, and for good when the bound is ignored
   * or the check cannot tell: the phase is read as one chain, as --parallel 1 would.
   */
  nearKept(phase: number): boolean {
    if (!this.near.has(phase)) {
      this.near.set(phase, undefined);
      this.checkNear(phase).then(
        (kept) => {
          this.near.set(phase, kept);
          this.host.changed();
        },
        () => this.near.set(phase, false),
      );
    }
    return this.near.get(phase) === true;
  }

  private async checkNear(phase: number): Promise<boolean> {
    const address = this.plan.phases[phase] as string;
    let sample = this.samples.get(phase);
    if (!sample) {
      const first = await this.host.probe(withSize(address, this.rule, 2));
      const position = first?.next ? this.positionOf(first.next, address, first.ids.length) : undefined;
      if (!first || position === undefined) return false;
      sample = { ids: first.ids, position };
    }
    const past = await this.host.probe(withSize(this.narrowed(address, sample.position + 1, undefined), this.rule, 2));
    const before = new Set(sample.ids);
    return past !== null && !past.ids.some((id) => before.has(id));
  }
}
