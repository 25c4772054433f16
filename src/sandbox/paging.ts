/**
 * The three paging styles of the spec: skip (page_size/skip), users' limit/offset, and the
 * api/1 opaque page_token.
 */
import type { RequestContext } from './context.js';
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
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw new HttpProblem(400, `${name} must be a positive integer, got '${raw}'`);
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
  /** The query the links repeat (default: the request's query). */
  linkQuery?: URLSearchParams;
  /** Conversations: prev_page is always a link, at skip 0 pointing at skip 0 again. */
  endlessPrev?: boolean;
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
    const params = new URLSearchParams(options.linkQuery ?? ctx.query);
    params.set('page_size', String(size));
    params.set('skip', String(at));
    return `${collectionUrl}?${params}`;
  };
  const hasNext = skip + size < items.length;
  const hasPrev = (skip > 0 || options.endlessPrev === true) && (hasNext || options.noLinksOnLastPage !== true);
  return {
    items: items.slice(skip, skip + size),
    paging: {
      next_page: hasNext && !options.withoutLinks ? link(skip + size) : null,
      prev_page: hasPrev && !options.withoutLinks ? link(Math.max(0, skip - size)) : null,
    },
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
    rest.length === 0 && name === endpoint && /^\d+$/.test(position ?? '') &&
    checksum === tokenChecksum(seed, endpoint, start) && Buffer.from(token, 'base64url').toString('base64url') === token;
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
