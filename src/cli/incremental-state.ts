/**
 * Incremental lists (--state, --watch): each run lists only the records whose sort date moved past
 * where the run before started, each once.
 *
 * What the client can know: a conversation record does not carry its newest_sort_date; sort dates
 * show only in keyset paging links (a page's records lie between the bound of its own address and
 * its next link's, which is the page's last record's). So the run's start is the service's: the
 * newest sort date it held below our clock before anything was read (its clock, should it be
 * behind ours), and a move since is dated at or after that. A run lists sorted by that date from
 * the last start less a margin (a record written a moment late); the records delivered before come back, and each is a
 * repeat unless it moved: placed before the last start by its page, by the same page read again
 * below that start (one request), or by its own date read (one request, for the few dated past
 * it, whose delivered dates the state keeps). Dates beyond our clock plus the margin are the
 * service's data, not its clock: a record there has not moved. Where nothing can place a record
 * (skip-only paging), it is delivered again: at-least-once, never at-most-once.
 */
import { UsageError } from '../core/errors.js';
import { DAY_MS, OPEN_FROM, OPEN_TO } from '../core/parse.js';
import { isObject } from '../core/exact-json.js';
import type { ResourceSpec } from '../catalogue/index.js';
import { dateRange, splitAddress, withParam } from '../api/links.js';
import type { PageSource } from '../api/paging.js';
import { PAGING_STYLES } from '../catalogue/index.js';

/** Below the run's start: a service clock behind ours, a record written with a date a moment past. */
export const MARGIN_MS = 5 * 60_000;
const FORMAT = 'carectl-state/1';

/** Where an incremental list stands: the query it belongs to, its next bound, and the ids that may come back unmoved. */
export interface ListState {
  /** The base address and the query (resource path, filters), as a refused mismatch names them. */
  base: string;
  query: string;
  /** The sort date followed. */
  field: string;
  /** The next run's lower bound (ms): the last run's start less the margin. */
  watermark: number;
  /** The last run's start (ms): a record dated at or past it moved since that run delivered it. */
  since: number;
  /** Ids delivered whose sort date may lie at or past the watermark's midnight. */
  ids: string[];
  /** The sort dates (ms) delivered of those dated at or past `since`: such a record is a repeat only at that date. */
  dates: Record<string, number>;
  /** The files (-O) runs of this state wrote that were still there as it was saved: never replaced. */
  outputs: OutputMark[];
}

/** A file a run wrote: its path and identity, so that one put in its place (or moved away) is told apart. */
export interface OutputMark {
  path: string;
  dev: number;
  ino: number;
}

/** The sort date an incremental list of `spec` follows; a resource without one is a usage error. */
export function stateField(spec: ResourceSpec, flag: string): string {
  const dates = spec.sortDates;
  if (!dates) throw new UsageError(`${flag}: ${spec.name} lists have no sort date to follow (only conversations list does)`);
  return dates.moves ?? dates.default;
}

/** The query as a state file names it: resource path and its filters in a fixed order. */
export function queryText(path: string, query: ReadonlyArray<readonly [string, string]>): string {
  const params = [...query].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  return `${path}?${new URLSearchParams(params as Array<[string, string]>).toString()}`;
}

/** The service's date-time form (UTC, whole seconds). */
export const serviceTime = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

/**
 * The parameters an incremental run adds to the query: the sort by `field`, and once a state exists,
 * the bound from its watermark (with a far upper bound, as the spec wants a pair). The query's own
 * sort or date bounds would fight them: a usage error.
 */
export function incrementalParams(
  spec: ResourceSpec,
  field: string,
  query: ReadonlyArray<readonly [string, string]>,
  prior: ListState | undefined,
  flag: string,
): Array<[string, string]> {
  const dates = spec.sortDates as NonNullable<ResourceSpec['sortDates']>;
  const clash = query.find(([key]) => key === dates.param || dates.fields.some((f) => key.startsWith(`${f}_`)));
  if (clash) {
    const filter = spec.filters.find((f) => f.param === clash[0] || clash[0].startsWith(`${f.param}_`));
    throw new UsageError(`${flag}: lists by ${field} from where the last run ended; --${filter?.flag ?? clash[0]} cannot be combined with it`);
  }
  const sort: [string, string] = [dates.param, field];
  return prior === undefined ? [sort] : [sort, [`${field}_gte`, serviceTime(prior.watermark)], [`${field}_lt`, OPEN_TO]];
}

/** The state file's text. */
export function stateText(state: ListState): string {
  const { base, query, field, watermark, since, ids, outputs } = state;
  const dates = Object.fromEntries(Object.entries(state.dates).map(([id, at]) => [id, serviceTime(at)]));
  return `${JSON.stringify({ format: FORMAT, base, query, field, watermark: serviceTime(watermark), since: serviceTime(since), ids, dates, outputs }, null, 1)}\n`;
}

/** A file that is not a state file, named (`why`, where more can be said): a usage error. */
export function notAStateFile(shown: string, why?: string): never {
  throw new UsageError(`--state: ${shown} is not a carectl state file${why ? ` (${why})` : ''}; give another FILE or remove it to list everything again`);
}

const isMark = (mark: unknown): boolean => {
  const { path, dev, ino } = (mark ?? {}) as Record<string, unknown>;
  return typeof path === 'string' && Number.isSafeInteger(dev) && Number.isSafeInteger(ino);
};

const timeOf = (text: unknown): number => (typeof text === 'string' ? Date.parse(`${text}Z`) : NaN);

/** The `dates` of a state file (written since carectl kept them: a state without them knows no record dated past its start); undefined if damaged. */
function datesOf(value: unknown = {}): Record<string, number> | undefined {
  if (!isObject(value)) return undefined;
  const dates = Object.fromEntries(Object.entries(value).map(([id, at]) => [id, timeOf(at)]));
  return Object.values(dates).some(Number.isNaN) ? undefined : dates;
}

/** A state file's text read back; anything else is a usage error naming the file. */
export function parseState(text: string, shown: string): ListState {
  const bad = (): never => notAStateFile(shown);
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return bad();
  }
  // `null`, a number, an array: JSON, but no state.
  if (!isObject(value)) return bad();
  const time = (key: string): number => timeOf(value[key]);
  const [watermark, since] = [time('watermark'), time('since')];
  const strings = (key: string): boolean => typeof value[key] === 'string';
  const ids = value.ids;
  if (value.format !== FORMAT || !strings('base') || !strings('query') || !strings('field') || Number.isNaN(watermark) || Number.isNaN(since)) return bad();
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return bad();
  // Written since carectl kept them; a state without them names no file.
  const outputs = value.outputs ?? [];
  if (!Array.isArray(outputs) || !outputs.every(isMark)) return bad();
  const dates = datesOf(value.dates) ?? bad();
  return {
    base: value.base as string,
    query: value.query as string,
    field: value.field as string,
    watermark,
    since,
    ids,
    dates,
    outputs: outputs as OutputMark[],
  };
}

/** A state for another base address or query: a usage error (its watermark means nothing here). */
export function checkSameQuery(state: ListState, base: string, query: string, shown: string): void {
  if (state.base === base && state.query === query) return;
  const what = state.base === base ? `the query ${state.query}` : `${state.base}`;
  throw new UsageError(`--state: ${shown} belongs to ${what}, not to this one (${query}); give another FILE`);
}

const SIZE = PAGING_STYLES.skip.sizeParam;

/** `address` with its date-time lower bound on `field` read as that day (a service may read it so). */
function asDay(address: string, field: string): string {
  const value = splitAddress(address)[1].get(`${field}_gte`);
  return value === null || value.length <= 10 ? address : withParam(address, `${field}_gte`, value.slice(0, 10));
}

/** A page as read: its address, its query's, its records' ids, and the sort dates its records lie between (where links say). */
interface Page {
  url: string;
  query: string;
  ids: string[];
  next: string | null;
  lo: number | undefined;
  hi: number | undefined;
  /** What `below` found for each bound asked. */
  cuts: Map<number, number | undefined>;
}

/**
 * One incremental run: wraps the list's page source, leaving out the records the state says were
 * delivered and have not moved since, and learns what the next state keeps of them.
 */
export class IncrementalRun {
  private readonly known: Set<string>;
  /** The ids passed (delivered, or left out as a repeat) that may lie past the next watermark's midnight: what the next state keeps. */
  private readonly passed = new Set<string>();
  /** The exact sort dates learnt of records passed, dated at or past this run's start. */
  private readonly dated = new Map<string, number>();
  /** This run's start on the service's clock, set before the first page: see markStart. */
  private since = 0;
  /** Past this (our clock plus the margin), a sort date is the service's data, not its clock: a record there has not moved. */
  private readonly future: number;
  /** The probes of every query, sent before the first page of any. */
  private started: Promise<void> | undefined;
  /** Whether the service keeps to an upper bound of the sort date: asked once, where a reading needs it. */
  private keepsUpper: Promise<boolean> | undefined;
  /** Whether links place a record (keyset); false once one read could not (skip-only): no more such reads. */
  private linksPlace = true;

  constructor(
    private readonly field: string,
    /** The sort parameter (the catalogue's), for the probe in the other order. */
    private readonly sortParam: string,
    private readonly prior: ListState | undefined,
    /** When this run started (ms, our clock). */
    readonly startedAt: number,
  ) {
    this.known = new Set(prior?.ids);
    this.future = startedAt + MARGIN_MS;
  }

  /**
   * The date-time keyset bound `address` carries past its query's own: a position in the sort order
   * (the lower bound ascending, the upper one of a descending probe), to the second.
   */
  private position(address: string | null, query: string, side: 'lo' | 'hi' = 'lo'): number | undefined {
    if (address === null) return undefined;
    const own = dateRange(splitAddress(query)[1], this.field)[side];
    const bound = dateRange(splitAddress(address)[1], this.field)[side];
    return bound?.timed && bound.at !== own?.at ? Math.floor(bound.at / 1000) * 1000 : undefined;
  }

  /**
   * The newest record of `query`'s list and its sort date: the first of the list the other way
   * round, whose next link bounds by it; without the run's bounds (so that a next link exists when
   * the run's list holds one record), below `before` where given. Undefined where no link says.
   */
  private async newest(inner: PageSource, query: string, before?: number): Promise<{ id: string; at: number } | undefined> {
    const [path, params] = splitAddress(query);
    for (const key of [...params.keys()]) if (key.startsWith(`${this.field}_`)) params.delete(key);
    if (before !== undefined) {
      params.set(`${this.field}_gte`, OPEN_FROM);
      params.set(`${this.field}_lt`, serviceTime(before));
    }
    params.set(this.sortParam, `-${this.field}`);
    params.set(SIZE, '1');
    const probe = `${path}?${params.toString()}`;
    const one = await inner.fetch(probe, probe);
    const at = this.position(one.next, probe, 'hi');
    return one.records[0] === undefined || at === undefined ? undefined : { id: String(one.records[0].id), at };
  }

  /** The list's page source, wrapped; `firstPages`: the first-page addresses of its phases (a union's two). */
  source(inner: PageSource, firstPages: readonly string[]): PageSource {
    return {
      fetch: async (url, query, throttle) => {
        await (this.started ??= this.markStart(inner, firstPages));
        // Links are checked against the bound as a service reading it as its day would page: from that midnight.
        const reply = await inner.fetch(url, asDay(query, this.field), throttle);
        const ids = reply.records.map((record) => String(record.id));
        const page: Page = {
          url,
          query,
          ids,
          next: reply.next,
          lo: url === query ? undefined : this.position(url, query),
          hi: this.position(reply.next, query),
          cuts: new Map(),
        };
        const exact = new Map<number, number | undefined>();
        const kept = await this.judge(inner, page, exact);
        await this.learn(inner, page, exact);
        return { ...reply, records: reply.records.filter((_, i) => kept[i]) };
      },
    };
  }

  /**
   * Before the first page of any query: the newest sort date of each, below our clock (past it may
   * lie dates the service was given rather than its clock's: a start there would take a move dated
   * by its clock for a repeat). A move from now on is dated after the latest of them, whichever
   * clock is ahead; not the least of them: a union's is_priority=true query may hold nothing from
   * the last days. All probed first: a query probed only after another was read could name a record
   * dated past what that read saw.
   */
  private async markStart(inner: PageSource, firstPages: readonly string[]): Promise<void> {
    let newest: number | undefined;
    for (const first of firstPages) {
      const found = await this.newest(inner, first, this.startedAt);
      if (found) newest = Math.max(newest ?? -Infinity, found.at);
    }
    // Whole seconds, as the service writes its dates: the second after the newest, or our start where the list was empty.
    // Never before the last run's start (moves since are dated past both): the newest may have moved into the second the probe leaves out.
    const found = newest === undefined ? Math.floor(this.startedAt / 1000) * 1000 : newest + 1000;
    this.since = Math.max(found, this.prior?.since ?? -Infinity);
  }

  /**
   * Which of the page's records go out: all but repeats of records delivered before that have not
   * moved: placed before the last start (by the page, the page cut at it, or its own date), where
   * only the service's data lies, or, for one delivered dated past the last start, still at that date.
   */
  private async judge(inner: PageSource, page: Page, exact: Map<number, number | undefined>): Promise<boolean[]> {
    const kept = page.ids.map(() => true);
    const prior = this.prior;
    if (prior === undefined) return kept;
    const { since, dates } = prior;
    const open: number[] = [];
    page.ids.forEach((id, i) => {
      if (!this.known.has(id)) return;
      if (page.lo !== undefined && page.lo > this.future) {
        kept[i] = false;
        if (dates[id] !== undefined) exact.set(i, dates[id]);
      } else if (page.hi !== undefined && page.hi < since) kept[i] = false;
      else open.push(i);
    });
    if (open.length === 0) return kept;
    const below = (await this.below(inner, page, since)) ?? 0;
    // The page is sorted: past a record dated in the service's data, so is every later one.
    let from = -Infinity;
    for (const i of open) {
      const delivered = dates[page.ids[i] as string];
      if (i < below) kept[i] = false;
      else if (from > this.future) {
        kept[i] = false;
        if (delivered !== undefined) exact.set(i, delivered);
      } else {
        // Moved, unless dated before the last start after all (a cut read lower), in the service's data, or delivered at this date.
        const at = await this.dateOf(inner, page, i, exact);
        from = Math.max(from, at ?? -Infinity);
        kept[i] = at === undefined || !(at < since || at > this.future || at === delivered);
      }
    }
    return kept;
  }

  /**
   * What the next state keeps of the page's records: the latest each can be dated, and the exact
   * date of each dated at or past this run's start (a repeat next time only at that date).
   */
  private async learn(inner: PageSource, page: Page, exact: Map<number, number | undefined>): Promise<void> {
    const { ids } = page;
    // Only what may come back: a first run of a long list keeps the ids of its last day, not of all it wrote.
    const keepFrom = Math.floor((this.since - MARGIN_MS) / DAY_MS) * DAY_MS;
    ids.forEach((id, i) => {
      const latest = exact.get(i) ?? page.hi;
      if (latest === undefined || latest >= keepFrom) this.passed.add(id);
    });
    if (ids.length === 0 || (page.hi !== undefined && page.hi < this.since)) return;
    // Where the page cannot be cut at the start (bounds ignored), each record's date is read (those judged are known already).
    const below = page.lo !== undefined && page.lo >= this.since ? 0 : ((await this.below(inner, page, this.since)) ?? 0);
    for (let i = below; i < ids.length; i++) {
      const at = await this.dateOf(inner, page, i, exact);
      if (at !== undefined && at >= this.since) this.dated.set(ids[i] as string, at);
    }
  }

  /**
   * How many of the page's first records are dated before `bound`, at least (a service may read it
   * as its day): the page again, bounded above by it (one request). Undefined where the answer cannot
   * tell: not the page's beginning, or the whole page from a service that may ignore the bound.
   */
  private async below(inner: PageSource, page: Page, bound: number): Promise<number | undefined> {
    if (!page.cuts.has(bound)) page.cuts.set(bound, await this.cut(inner, page, bound));
    return page.cuts.get(bound);
  }

  private async cut(inner: PageSource, page: Page, bound: number): Promise<number | undefined> {
    const upper = (address: string): string => withParam(withParam(address, `${this.field}_lt`, serviceTime(bound)), SIZE, String(page.ids.length));
    const reply = await inner.fetch(upper(page.url), upper(asDay(page.query, this.field)));
    const got = reply.records.map((record) => String(record.id));
    if (got.length > page.ids.length || got.some((id, i) => id !== page.ids[i])) return undefined;
    if (got.length < page.ids.length) return got.length;
    // All of them: the last one is dated past the bound, or the service may ignore it.
    if (page.hi !== undefined && page.hi >= bound) return undefined;
    return (await (this.keepsUpper ??= this.checkUpper(inner, page.query))) ? got.length : undefined;
  }

  /** Whether the service keeps to an upper bound: the query below a date no record has, which must come back empty. */
  private async checkUpper(inner: PageSource, query: string): Promise<boolean> {
    const none = withParam(
      withParam(withParam(query, `${this.field}_gte`, OPEN_FROM), `${this.field}_lt`, serviceTime(Date.parse(OPEN_FROM) + DAY_MS)),
      SIZE,
      '1',
    );
    return (await inner.fetch(none, none)).records.length === 0;
  }

  /**
   * The sort date of the page's record `i`: the page again up to it, whose next link bounds by it
   * (one request); the list's last record, dated by the probe the other way round (the newest
   * record's date bounds it above; read after the page, as dates only move on).
   */
  private async dateOf(inner: PageSource, page: Page, i: number, exact: Map<number, number | undefined>): Promise<number | undefined> {
    if (exact.has(i)) return exact.get(i);
    const id = page.ids[i] as string;
    let at: number | undefined;
    if (i === page.ids.length - 1 && page.hi !== undefined) at = page.hi;
    else if (!this.linksPlace) at = undefined;
    else if (i === page.ids.length - 1 && page.next === null) {
      // Dated between its page's bound and the newest record's: exactly, where the two are one date (a tie the service orders the other way round).
      const newest = await this.newest(inner, page.query);
      at = newest !== undefined && (newest.id === id || newest.at === page.lo) ? newest.at : undefined;
    } else {
      const upTo = (address: string): string => withParam(address, SIZE, String(i + 1));
      const reply = await inner.fetch(upTo(page.url), upTo(asDay(page.query, this.field)));
      const ok = reply.records.length === i + 1 && String(reply.records[i]?.id) === id;
      at = ok ? this.position(reply.next, page.query) : undefined;
      // Skip-only links say nothing of any record: no more reads that cannot tell.
      if (ok && at === undefined && reply.next !== null) this.linksPlace = false;
    }
    exact.set(i, at);
    return at;
  }

  /** The state after this run completed: the bound from its start, and what may come back unmoved. */
  next(base: string, query: string): ListState {
    const since = this.since;
    const watermark = since - MARGIN_MS;
    const ids = [...this.passed];
    return { base, query, field: this.field, watermark, since, ids, dates: Object.fromEntries(this.dated), outputs: this.prior?.outputs ?? [] };
  }
}
