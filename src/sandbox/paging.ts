/**
 * The paging styles of the spec: skip (page_size/skip), the conversations' keyset form (a sort
 * date bound plus skip), users' limit/offset, and the api/1 opaque page_token.
 */
import type { RequestContext } from './context.js';
import { formatDateTime } from './dates.js';
import { HttpProblem } from './http.js';
import { hash32 } from './random.js';

export interface Paging {
  next_page: string | null;
  prev_page?: string | null;
}

export interface Page<T> {
  items: T[];
  paging: Paging;
}

/** A positive page size; larger values are silently capped (spec rule 4). */
function readSize(query: URLSearchParams, name: string, fallback: number, cap: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw)))
    throw new HttpProblem(400, `${name} must be a positive integer, got '${raw}'`);
  return Math.min(Number(raw), cap);
}

function readOffset(query: URLSearchParams, name: string): number {
  const raw = query.get(name);
  if (raw === null) return 0;
  // Past 2^53 a number no longer prints as its digits (1e+23): a link could not repeat it.
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new HttpProblem(400, `${name} must be a non-negative integer, got '${raw}'`);
  return Number(raw);
}

export interface SkipOptions {
  /** Several sort fields: the page is served but both links are null (spec rule 3). */
  withoutLinks?: boolean;
  /** Queues: the last page has neither link, prev_page included. */
  noLinksOnLastPage?: boolean;
}

/** page_size (default 25, capped at 50) and skip; links repeat the query. */
export function skipPage<T>(ctx: RequestContext, items: readonly T[], collectionUrl: string, options: SkipOptions = {}): Page<T> {
  const size = readSize(ctx.query, 'page_size', 25, 50);
  const skip = readOffset(ctx.query, 'skip');
  const link = (at: number): string => {
    const params = new URLSearchParams(ctx.query);
    params.set('page_size', String(size));
    params.set('skip', String(at));
    return `${collectionUrl}?${params}`;
  };
  const hasNext = skip + size < items.length;
  const hasPrev = skip > 0 && (hasNext || options.noLinksOnLastPage !== true);
  return {
    items: items.slice(skip, skip + size),
    paging: {
      next_page: hasNext && !options.withoutLinks ? link(skip + size) : null,
      prev_page: hasPrev && !options.withoutLinks ? link(Math.max(0, skip - size)) : null,
    },
  };
}

export interface Keyset<T> {
  /** The sort field's parameter name: the link's bound is `<field>_gte` ascending, `<field>_lte` descending. */
  field: string;
  descending: boolean;
  /** Text of the sort parameter the links carry. */
  sortText: string;
  /** A record's sort date (ms, whole seconds); the items are in sort order by it. */
  dateOf(item: T): number;
  /**
   * The request's bound on the keyset side (ascending: the lowest date, from _gte/_gt;
   * descending: the highest, from _lte/_lt): the page starts at the first record within it,
   * plus skip. Undefined when the request has none.
   */
  seek: number | undefined;
}

/** The first index whose item satisfies `holds`, which is false up to some index and true from there. */
export function firstIndex<T>(items: readonly T[], holds: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (holds(items[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Conversations, as the real service pages them: next_page bounds the sort date by the page's
 * last record (`<field>_gte=<date>` ascending, `<field>_lte=<date>` descending, the date as
 * YYYY-MM-DDTHH:MM:SS) and skips the records at exactly that date already returned. The bound
 * replaces the request's own bounds on that side; everything else in the query is repeated,
 * with sort and page_size. prev_page repeats the request with skip lowered by page_size, so it
 * never ends (a quirk of the service): at skip 0 it points at the same page.
 */
export function keysetPage<T>(ctx: RequestContext, items: readonly T[], collectionUrl: string, keyset: Keyset<T>): Page<T> {
  const size = readSize(ctx.query, 'page_size', 25, 50);
  const skip = readOffset(ctx.query, 'skip');
  const { field, descending, dateOf, seek } = keyset;
  const within = (date: number): ((item: T) => boolean) => (descending ? (item) => dateOf(item) <= date : (item) => dateOf(item) >= date);
  const start = (seek === undefined ? 0 : firstIndex(items, within(seek))) + skip;
  const end = start + size;
  const link = (edit: (params: URLSearchParams) => void): string => {
    const params = new URLSearchParams(ctx.query);
    edit(params);
    params.set('sort', keyset.sortText);
    params.set('page_size', String(size));
    return `${collectionUrl}?${params}`;
  };
  let next: string | null = null;
  if (end < items.length) {
    const date = dateOf(items[end - 1]!);
    const returned = end - firstIndex(items, within(date));
    const [bound, other] = descending ? ['lte', 'lt'] : ['gte', 'gt'];
    next = link((params) => {
      params.delete(`${field}_${other}`);
      params.set(`${field}_${bound}`, formatDateTime(date));
      params.set('skip', String(returned));
    });
  }
  return {
    items: items.slice(start, end),
    paging: { next_page: next, prev_page: link((params) => params.set('skip', String(Math.max(0, skip - size)))) },
  };
}

/** Users: limit (default 25, capped at 100) and offset; links carry only limit, offset and fields. */
export function offsetPage<T>(ctx: RequestContext, items: readonly T[], collectionUrl: string): Page<T> {
  const limit = readSize(ctx.query, 'limit', 25, 100);
  const offset = readOffset(ctx.query, 'offset');
  const fields = ctx.query.getAll('fields');
  const link = (at: number): string => {
    const params = new URLSearchParams({ limit: String(limit), offset: String(at) });
    for (const value of fields) params.append('fields', value);
    return `${collectionUrl}?${params}`;
  };
  return {
    items: items.slice(offset, offset + limit),
    paging: {
      next_page: offset + limit < items.length ? link(offset + limit) : null,
      prev_page: offset > 0 ? link(Math.max(0, offset - limit)) : null,
    },
  };
}

function tokenChecksum(seed: number, endpoint: string, position: number): string {
  return hash32('page-token', seed, endpoint, position).toString(36);
}

/** The token of api/1 paging: start position and endpoint, with a checksum against tampering. */
export function encodePageToken(seed: number, endpoint: string, position: number): string {
  return Buffer.from(`${endpoint}:${position}:${tokenChecksum(seed, endpoint, position)}`).toString('base64url');
}

function decodePageToken(seed: number, endpoint: string, token: string): number {
  const [name, position, checksum, ...rest] = Buffer.from(token, 'base64url').toString('utf8').split(':');
  const start = Number(position);
  const valid =
    rest.length === 0 &&
    name === endpoint &&
    /^\d+$/.test(position ?? '') &&
    checksum === tokenChecksum(seed, endpoint, start) &&
    Buffer.from(token, 'base64url').toString('base64url') === token;
  if (!valid) throw new HttpProblem(400, 'Invalid page_token: use the next_page link as given');
  return start;
}

/** api/1: page_size (default 10, capped at 50) and an opaque page_token; only next_page. */
export function tokenPage<T>(ctx: RequestContext, items: readonly T[], endpoint: string): Page<T> {
  const seed = ctx.runtime.data.seed;
  const size = readSize(ctx.query, 'page_size', 10, 50);
  const token = ctx.query.get('page_token');
  const start = token === null ? 0 : decodePageToken(seed, endpoint, token);
  const next = start + size;
  const params = new URLSearchParams({ page_size: String(size), page_token: encodePageToken(seed, endpoint, next) });
  return {
    items: items.slice(start, next),
    paging: { next_page: next < items.length ? `${ctx.runtime.api1BaseUrl}/api/1/${endpoint}?${params}` : null },
  };
}
