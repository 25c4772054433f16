/**
 * An in-process model of the conversation list, written from the spec alone (not from the
 * sandbox, not from the client), with the readings and quirks the spec leaves open as variants:
 * how a date-only bound is read, future / 1970 / bursty sort dates, links of the keyset form or
 * plain skip, bounds ignored, sort dates that move during a run, hidden rows that leave empty
 * pages, and 429s. `expected()` is the oracle: the model's own filter and sort of its data.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DAY = 86_400_000;
/** The model's present: the fake clock the tests run carectl with starts here. */
export const NOW = Date.UTC(2026, 5, 30, 12, 0, 0);

export interface ModelRecord {
  id: string;
  status: string;
  is_priority: boolean;
  oldest: number;
  newest: number;
  /** Counted by skip, never shown: pages that hold only hidden rows come back empty. */
  hidden?: boolean;
}

export interface ModelVariant {
  /** How a date-only bound is read: the whole day (lte D: all of D), or that day's midnight (lte D: up to D 00:00:00). */
  reading: 'whole-day' | 'midnight';
  /** keyset: next_page bounds the sort date by the page's last record; skip: only skip moves. */
  links: 'keyset' | 'skip';
  ignoreBounds?: boolean;
  /** Keeps to the bounds its keyset links seek by (lower ascending, upper descending), ignores the others. */
  ignoreFar?: boolean;
  /** Ignores a date-only bound on the side its keyset links seek by (lower ascending, upper descending); keeps the links' date-time bounds and the far side. */
  ignoreNear?: boolean;
  /** Every `moveEvery`-th request moves one record's newest_sort_date past all others. */
  moveEvery?: number;
  /** More than this many requests at once: 429. */
  inFlightLimit?: number;
  /** Past inFlightLimit, a gateway's answer instead (nginx's limit_conn): 503, an HTML page, no Retry-After. */
  gateway503?: boolean;
  /** Every `quotaEvery`-th request: 429 (a per-minute quota running out). */
  quotaEvery?: number;
  /** Each answer waits this long (ms, real time), so that requests overlap. */
  delayMs?: number | ((params: URLSearchParams) => number);
  /** Reads a date-time bound of a first page (a request without skip) as its day: the midnight reading of a date-only service; links keep their time. */
  timeAsDay?: boolean;
  /** Answers 500 to the requests it holds true for (a run failing part-way). */
  failWhen?: (params: URLSearchParams) => boolean;
  /** Reads every date-time bound as a date-only one on its day (the spec types the filters as ISO dates); with links: 'skip'. */
  boundsAsDates?: boolean;
  /** How keyset links write a date-time (ISO 8601 forms): 2026-01-05T10:00:00, …Z, ….000000+00:00, or with a space. */
  timeForm?: 'T' | 'Z' | 'micro' | 'space';
  /** Sorted descending, records of one date keep their ascending order (the spec orders no ties): the first of the list the other way round is not the last of this one. */
  tiesKept?: boolean;
  /** Rewrites each next_page link it sends (a service writing a date no calendar has). */
  rewriteLink?: (link: string) => string;
}

const STATUSES = ['unread', 'assigned', 'closed'];
const GATEWAY_503 =
  '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>';
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19);
const timeText = (ms: number, form: ModelVariant['timeForm'] = 'T'): string =>
  ({ T: iso(ms), Z: `${iso(ms)}Z`, micro: `${iso(ms)}.000000+00:00`, space: iso(ms).replace('T', ' ') })[form];

/** A small deterministic generator, so a fast-check seed fixes the data too. */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

export type Shape = 'year' | 'future' | '1970' | 'burst' | 'gaps' | 'hours';

/** A sort date of the given shape. */
function dateOf(shape: Shape, random: () => number, burstAt: number): number {
  const second = (ms: number): number => Math.floor(ms / 1000) * 1000;
  switch (shape) {
    case 'year':
      return second(NOW - random() * 365 * DAY);
    case 'future':
      return second(NOW + random() * 365 * DAY);
    case '1970':
      return random() < 0.5 ? 0 : second(random() * 3 * DAY);
    case 'burst':
      return burstAt;
    case 'gaps':
      return second(Date.UTC(2001 + 8 * Math.floor(random() * 4), 0, 1) + random() * 20 * DAY);
    case 'hours':
      return second(NOW - random() * 6 * 3_600_000);
  }
}

export function modelData(count: number, shapes: readonly Shape[], seed: number, hiddenShare = 0): ModelRecord[] {
  const random = prng(seed);
  const burstAt = Math.floor((NOW - random() * 30 * DAY) / 1000) * 1000;
  const records: ModelRecord[] = [];
  for (let i = 0; i < count; i++) {
    const shape = shapes[Math.floor(random() * shapes.length)] ?? 'year';
    const oldest = dateOf(shape, random, burstAt);
    const newest = Math.max(oldest, random() < 0.5 ? oldest : dateOf(shape, random, burstAt));
    records.push({
      id: String(500000 + i),
      status: STATUSES[Math.floor(random() * 3)] as string,
      is_priority: random() < 0.4,
      oldest,
      newest,
      ...(random() < hiddenShare && { hidden: true }),
    });
  }
  return records;
}

/** A parameter's date and whether it was date-only. */
function parseDate(value: string): { ms: number; dateOnly: boolean } | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(?:\.0+)?(?:Z|\+00:00)?)?$/.exec(value);
  if (!m) return undefined;
  return { ms: Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)), dateOnly: m[4] === undefined };
}

/** The bounds on `field` in `params`, as this model reads them: both ends inclusive, ms. */
export function readBounds(params: URLSearchParams, field: string, reading: ModelVariant['reading'], timeAsDay = false): { lo: number; hi: number } {
  let lo = -Infinity;
  let hi = Infinity;
  for (const op of ['gte', 'gt', 'lte', 'lt']) {
    for (const value of params.getAll(`${field}_${op}`)) {
      const read = parseDate(value);
      if (!read) throw new Error(`bad date ${value}`);
      const date = timeAsDay ? { ms: Math.floor(read.ms / DAY) * DAY, dateOnly: true } : read;
      const span = date.dateOnly && reading === 'whole-day' ? DAY : 1000;
      // Midnight reading: a date-only value is the instant D 00:00:00, compared as such.
      const whole = date.dateOnly && reading === 'whole-day';
      if (op === 'gte') lo = Math.max(lo, date.ms);
      if (op === 'gt') lo = Math.max(lo, whole ? date.ms + span : date.ms + 1);
      if (op === 'lte') hi = Math.min(hi, whole ? date.ms + span - 1 : date.ms);
      if (op === 'lt') hi = Math.min(hi, date.ms - 1);
    }
  }
  return { lo, hi };
}

export interface ModelQuery {
  status?: string;
  is_priority?: boolean;
  /** The sort, as the `sort` parameter (default oldest_sort_date). */
  sort?: string;
  /** Date bounds as parameters (`oldest_sort_date_gte` → value). */
  bounds?: Array<[string, string]>;
}

/** The environment of a carectl run against `model`, with no config folder. */
export const modelEnv = (model: ModelServer): Record<string, string> => ({
  CARECTL_BASE_URL: model.baseUrl,
  CARECTL_USER: 'bot',
  CARECTL_PASSWORD: 'model-secret',
  XDG_CONFIG_HOME: '/nonexistent/x',
});

export class ModelServer {
  readonly data: ModelRecord[];
  requests: string[] = [];
  private server: Server | undefined;
  private inFlight = 0;
  private moved = 0;
  private count = 0;
  baseUrl = '';

  constructor(
    data: ModelRecord[],
    readonly variant: ModelVariant,
  ) {
    this.variant = { ...variant };
    this.data = data.map((record) => ({ ...record }));
  }

  /** The records a query lists, in order, as this model filters and sorts (hidden rows included). */
  private list(params: URLSearchParams, withKeyset: boolean): ModelRecord[] {
    const sort = params.get('sort') ?? 'oldest_sort_date';
    const descending = sort.startsWith('-');
    const field = sort.replace(/^-/, '');
    const key = (r: ModelRecord): number => (field === 'newest_sort_date' ? r.newest : r.oldest);
    const status = params.get('status');
    const priority = params.get('is_priority');
    const bounds = new URLSearchParams(params);
    if (this.variant.ignoreNear) {
      for (const name of ['oldest_sort_date', 'newest_sort_date'])
        for (const op of descending ? ['lte', 'lt'] : ['gte', 'gt']) {
          const kept = bounds.getAll(`${name}_${op}`).filter((value) => /\d[T ]\d/.test(value));
          bounds.delete(`${name}_${op}`);
          for (const value of kept) bounds.append(`${name}_${op}`, value);
        }
    }
    if (this.variant.timeAsDay && !params.has('skip')) {
      for (const [key, value] of [...bounds]) if (/_(gte|gt|lte|lt)$/.test(key)) bounds.set(key, value.slice(0, 10));
    }
    const old = this.variant.ignoreBounds ? undefined : readBounds(bounds, 'oldest_sort_date', this.variant.reading, this.variant.boundsAsDates);
    const recent = this.variant.ignoreBounds ? undefined : readBounds(bounds, 'newest_sort_date', this.variant.reading, this.variant.boundsAsDates);
    void withKeyset;
    if (this.variant.ignoreFar) for (const range of [old, recent]) if (range) range[descending ? 'lo' : 'hi'] = descending ? -Infinity : Infinity;
    return this.data
      .filter((r) => (status === null || r.status === status) && (priority === null || String(r.is_priority) === priority))
      .filter((r) => !old || (r.oldest >= old.lo && r.oldest <= old.hi))
      .filter((r) => !recent || (r.newest >= recent.lo && r.newest <= recent.hi))
      .sort((a, b) =>
        descending ? key(b) - key(a) || (this.variant.tiesKept ? 1 : -1) * a.id.localeCompare(b.id) : key(a) - key(b) || a.id.localeCompare(b.id),
      );
  }

  /** The oracle: the ids a query lists (hidden rows left out unless asked for), in this model's order. */
  expected(query: ModelQuery, withHidden = false): string[] {
    const params = new URLSearchParams();
    if (query.status) params.set('status', query.status);
    if (query.is_priority !== undefined) params.set('is_priority', String(query.is_priority));
    if (query.sort) params.set('sort', query.sort);
    for (const [key, value] of query.bounds ?? []) params.append(key, value);
    const saved = { ...this.variant };
    Object.assign(this.variant, { ignoreBounds: false, ignoreFar: false, ignoreNear: false, timeAsDay: false, boundsAsDates: false });
    try {
      return this.list(params, false)
        .filter((r) => withHidden || !r.hidden)
        .map((r) => r.id);
    } finally {
      Object.assign(this.variant, saved);
    }
  }

  /** Sets the status of the records `ids` to closing: a client closing what it printed (they leave an unread list). */
  closeIds(ids: readonly string[]): void {
    const closing = new Set(ids);
    for (const record of this.data) if (closing.has(record.id)) record.status = 'closing';
  }

  /** Records whose sort date moved during the run. */
  get movedIds(): Set<string> {
    return new Set(this.data.filter((r) => r.newest > NOW + DAY * 400).map((r) => r.id));
  }

  private answer(path: string, params: URLSearchParams): { status: number; body: unknown; headers?: Record<string, string> } {
    if (!/^\/v1\.[123]\/conversations$/.test(path)) return { status: 404, body: { status: 'error', message: 'not found' } };
    if (!params.has('status') && !params.has('is_priority')) return { status: 400, body: { status: 'error', message: 'status or is_priority required' } };
    const size = Math.min(Number(params.get('page_size') ?? 25), 50);
    const skip = Number(params.get('skip') ?? 0);
    const sort = params.get('sort') ?? 'oldest_sort_date';
    const field = sort.replace(/^-/, '');
    const descending = sort.startsWith('-');
    const list = this.list(params, true);
    const page = list.slice(skip, skip + size);
    let next: string | null = null;
    if (skip + size < list.length && !sort.includes(',')) {
      const link = new URLSearchParams(params);
      if (this.variant.links === 'keyset' && !this.variant.ignoreBounds && page.length > 0) {
        const keyOf = (r: ModelRecord): number => (field === 'newest_sort_date' ? r.newest : r.oldest);
        const last = keyOf(page[page.length - 1] as ModelRecord);
        const atLast = list.slice(0, skip + size).filter((r) => keyOf(r) === last).length;
        for (const op of descending ? ['lte', 'lt'] : ['gte', 'gt']) link.delete(`${field}_${op}`);
        link.set(`${field}_${descending ? 'lte' : 'gte'}`, timeText(last, this.variant.timeForm));
        link.set('skip', String(atLast));
      } else {
        link.set('skip', String(skip + size));
      }
      link.set('sort', sort);
      link.set('page_size', String(size));
      next = `${this.baseUrl}${path}?${link.toString()}`;
      if (this.variant.rewriteLink) next = this.variant.rewriteLink(next);
    }
    const shown = page
      .filter((r) => !r.hidden)
      .map((r) => ({ id: r.id, url: `${this.baseUrl}/v1.3/conversations/${r.id}`, status: r.status, is_priority: r.is_priority }));
    return { status: 200, body: { conversations: shown, paging: { next_page: next, prev_page: null } } };
  }

  private move(): void {
    const every = this.variant.moveEvery;
    if (!every || this.count % every !== 0 || this.data.length === 0) return;
    const record = this.data[(this.count * 7919) % this.data.length] as ModelRecord;
    // A new message: newest_sort_date jumps past every other record's.
    record.newest = NOW + DAY * 400 + ++this.moved * 1000;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume();
      this.inFlight++;
      this.count++;
      this.requests.push(req.url ?? '');
      const send = (): void => {
        const url = new URL(req.url ?? '/', 'http://model');
        const quota = this.variant.quotaEvery !== undefined && this.count % this.variant.quotaEvery === 0;
        const crowded = this.variant.inFlightLimit !== undefined && this.inFlight > this.variant.inFlightLimit;
        let reply: { status: number; body: unknown; headers?: Record<string, string> };
        if (crowded && this.variant.gateway503) reply = { status: 503, body: GATEWAY_503, headers: { 'content-type': 'text/html' } };
        else if (quota || crowded) reply = { status: 429, body: { status: 'error', message: 'slow down' }, headers: { 'retry-after': '1' } };
        else if (this.variant.failWhen?.(url.searchParams)) reply = { status: 500, body: { status: 'error', message: 'down' } };
        else {
          this.move();
          reply = this.answer(url.pathname, url.searchParams);
        }
        this.inFlight--;
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      };
      const { delayMs } = this.variant;
      const delay = typeof delayMs === 'function' ? delayMs(new URL(req.url ?? '/', 'http://model').searchParams) : delayMs;
      if (delay) setTimeout(send, delay);
      else setImmediate(send);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}
