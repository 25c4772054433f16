/**
 * Incremental lists (--state, --watch): each run lists only the records whose sort date moved past
 * where the run before started, each once.
 *
 * What the client can know: a conversation record does not carry its newest_sort_date, so the
 * watermark is not a record's date but the time the run started: our clock, or, where earlier, the
 * second after the newest sort date the service held as the run began (its own clock, should ours
 * run ahead), less a margin for a record written a moment late. A run lists sorted by that date,
 * bounded below by the watermark; the service may read that date-time bound as its day (midnight),
 * so records delivered before can come back unmoved. The state keeps their ids; a returned id is
 * a repeat unless it moved since: its sort date is at or past the start of the run that
 * delivered it. Sort dates show only in keyset paging links (a page's records lie between the
 * bound of its own address and its next link's); where a page straddles that start, the page is
 * read again one record a request, each record's next link giving its own date. Where no link
 * says (skip-only paging), such a record is delivered again: at-least-once, never at-most-once.
 */
import { UsageError } from '../core/errors.js';
import { DAY_MS } from '../core/parse.js';
import type { ResourceSpec } from './catalogue/index.js';
import { dateRange, splitAddress, withParam } from './links.js';
import type { PageSource } from './paging.js';
import { OPEN_TO } from './slices.js';
import { PAGING_STYLES } from './catalogue/index.js';

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
  return `${JSON.stringify({ format: FORMAT, base, query, field, watermark: serviceTime(watermark), since: serviceTime(since), ids, outputs }, null, 1)}\n`;
}

/** A file that is not a state file, named (`why`, where more can be said): a usage error. */
export function notAStateFile(shown: string, why?: string): never {
  throw new UsageError(`--state: ${shown} is not a carectl state file${why ? ` (${why})` : ''}; give another FILE or remove it to list everything again`);
}

const isMark = (mark: unknown): boolean => {
  const { path, dev, ino } = (mark ?? {}) as Record<string, unknown>;
  return typeof path === 'string' && Number.isSafeInteger(dev) && Number.isSafeInteger(ino);
};

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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad();
  const time = (key: string): number => (typeof value[key] === 'string' ? Date.parse(`${value[key] as string}Z`) : NaN);
  const [watermark, since] = [time('watermark'), time('since')];
  const strings = (key: string): boolean => typeof value[key] === 'string';
  const ids = value.ids;
  if (value.format !== FORMAT || !strings('base') || !strings('query') || !strings('field') || Number.isNaN(watermark) || Number.isNaN(since)) return bad();
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return bad();
  // Written since carectl kept them; a state without them names no file.
  const outputs = value.outputs ?? [];
  if (!Array.isArray(outputs) || !outputs.every(isMark)) return bad();
  return { base: value.base as string, query: value.query as string, field: value.field as string, watermark, since, ids, outputs: outputs as OutputMark[] };
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

/**
 * One incremental run: wraps the list's page source, leaving out the records the state says were
 * delivered and have not moved since, and learns the ids the next state keeps.
 */
export class IncrementalRun {
  private readonly known: Set<string>;
  /** Each id passed (delivered, or left out as a repeat), with the latest its sort date can be (undefined: not known). */
  private readonly passed = new Map<string, number | undefined>();
  /** The newest sort date the run's queries held before any was read (the latest of them). */
  private seenNewest: number | undefined;
  /** The probes of every query, sent before the first page of any. */
  private started: Promise<void> | undefined;

  constructor(
    private readonly field: string,
    /** The sort parameter (the catalogue's), for the probe in the other order. */
    private readonly sortParam: string,
    private readonly prior: ListState | undefined,
    /** When this run started (ms, our clock): the next run's `since`, unless the service's says earlier. */
    readonly startedAt: number,
  ) {
    this.known = new Set(prior?.ids);
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
   * The list's newest record and its sort date (the service's clock): the first of the list the
   * other way round, whose next link bounds by it; without the run's bounds, so that a next link
   * exists when the run's list holds one record. Undefined where no link says.
   */
  private async newest(inner: PageSource, query: string): Promise<{ id: string; at: number } | undefined> {
    const [path, params] = splitAddress(query);
    for (const key of [...params.keys()]) if (key.startsWith(`${this.field}_`)) params.delete(key);
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
        const base = asDay(query, this.field);
        const page = await inner.fetch(url, base, throttle);
        const lo = url === query ? undefined : this.position(url, query);
        const hi = this.position(page.next, query);
        const ids = page.records.map((record) => String(record.id));
        const exact = await this.exactWhereNeeded(inner, url, query, ids, lo, hi);
        const records = page.records.filter((_, i) => this.keep(ids[i] as string, exact.get(ids[i] as string) ?? hi, lo));
        return { ...page, records };
      },
    };
  }

  /**
   * Before the first page of any query: the newest sort date of each, a time the service's clock
   * had passed before anything was read. A record dated past the latest of them is new or moved
   * since this run began, whichever clock is ahead (ours could be minutes ahead of the service's,
   * and a move in those minutes dated before our start). Not the least of them: a union's
   * is_priority=true query may hold nothing from the last days, and the other query's newest
   * records would count as moved in every run. All probed first: a query probed only after
   * another was read could name a record dated past what that read saw.
   */
  private async markStart(inner: PageSource, firstPages: readonly string[]): Promise<void> {
    for (const first of firstPages) {
      const newest = await this.newest(inner, first);
      if (newest) this.seenNewest = Math.max(this.seenNewest ?? -Infinity, newest.at);
    }
  }

  /** Whether a record goes out: not a repeat of one delivered before that has not moved since. */
  private keep(id: string, hi: number | undefined, lo: number | undefined): boolean {
    const repeat =
      this.known.has(id) && !(lo !== undefined && lo >= (this.prior as ListState).since) && hi !== undefined && hi < (this.prior as ListState).since;
    this.passed.set(id, hi);
    return !repeat;
  }

  /**
   * The exact sort dates of a page's records when some delivered id on it cannot be placed either
   * side of the last run's start: the page again, one record a request up to the last of them.
   */
  private async exactWhereNeeded(
    inner: PageSource,
    url: string,
    query: string,
    ids: readonly string[],
    lo: number | undefined,
    hi: number | undefined,
  ): Promise<Map<string, number | undefined>> {
    const exact = new Map<string, number | undefined>();
    const since = this.prior?.since;
    if (since === undefined || (lo !== undefined && lo >= since) || (hi !== undefined && hi < since)) return exact;
    let last = -1;
    ids.forEach((id, i) => this.known.has(id) && (last = i));
    const single = withParam(query, SIZE, '1');
    for (let i = 0, at: string | null = withParam(url, SIZE, '1'); i <= last && at !== null; i++) {
      const one = await inner.fetch(at, asDay(single, this.field));
      const id = one.records[0] === undefined ? undefined : String(one.records[0].id);
      // The list's last record has no next link: it is the newest, dated by the probe for that.
      const newest = id !== undefined && one.next === null ? await this.newest(inner, query) : undefined;
      const position = newest ? (newest.id === id ? newest.at : undefined) : this.position(one.next, single);
      // Skip-only links say nothing: the records stay unplaced (delivered again, at-least-once).
      if (id === undefined || position === undefined) break;
      exact.set(id, position);
      at = one.next;
    }
    return exact;
  }

  /** The state after this run completed: the bound from its start, and the ids that may come back unmoved. */
  next(base: string, query: string): ListState {
    // Whole seconds, as the service writes its dates and the state file keeps them: our start, or
    // the second after the newest record seen as the run began, if earlier (the service's clock behind ours).
    const since = Math.min(Math.floor(this.startedAt / 1000) * 1000, (this.seenNewest ?? Infinity) + 1000);
    const watermark = since - MARGIN_MS;
    const midnight = Math.floor(watermark / DAY_MS) * DAY_MS;
    const ids = [...this.passed].filter(([, hi]) => hi === undefined || hi >= midnight).map(([id]) => id);
    return { base, query, field: this.field, watermark, since, ids, outputs: this.prior?.outputs ?? [] };
  }
}
