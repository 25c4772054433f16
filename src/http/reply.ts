/**
 * Reading an API reply: bounded in size, parsed as JSON no deeper than carectl can print, and
 * the service's error body turned into the message a user reads.
 */
import type { Readable } from 'node:stream';
import { utf8BomLength } from '../core/bytes.js';
import { parseJson } from '../core/exact-json.js';
import { ReplyEncodingError } from './encoding.js';
import { redact, stripUserinfo } from './redact.js';

/** The largest API reply read (a page of 50 conversations with content is a few MB at most). */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** Deeper JSON is refused: printing it would overflow the stack, and no record of the API is near. */
export const MAX_JSON_DEPTH = 1000;

/** The reply's body went past the cap; reading stopped there. */
export class ReplyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the reply is larger than the ${formatLimit(limit)} carectl reads`);
  }
}

/**
 * The body as text, read up to `limit` bytes: a body announced or found to be larger is
 * abandoned (the connection is destroyed, not drained) with a ReplyTooLargeError.
 */
export async function readBounded(
  body: Readable,
  limit: number,
  contentLength: string | string[] | undefined,
  contentType?: string | string[],
): Promise<string> {
  const announced = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isSafeInteger(announced) && announced > limit) {
    body.destroy();
    throw new ReplyTooLargeError(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > limit) {
      body.destroy();
      throw new ReplyTooLargeError(limit);
    }
    chunks.push(bytes);
  }
  return decodeText(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), contentType);
}

/**
 * The body as text in the character set its Content-Type declares (UTF-8 when none: JSON's
 * own); one carectl cannot decode is refused by name rather than read as UTF-8 into U+FFFD.
 */
export function decodeText(bytes: Buffer, contentType: string | string[] | undefined): string {
  const type = Array.isArray(contentType) ? contentType[0] : contentType;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(type ?? '')?.[1]?.toLowerCase();
  // A byte order mark is left out, as TextDecoder does (RFC 8259 §8.1 lets a reader ignore it).
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return bytes.toString('utf8', utf8BomLength(bytes));
  let decoder: { decode(bytes: Uint8Array): string };
  try {
    decoder = new TextDecoder(charset);
  } catch {
    throw new ReplyEncodingError(`the reply is in the ${charset} character set, which carectl cannot read`, true);
  }
  return decoder.decode(bytes);
}

/**
 * The most JSON values (counted by their commas and opening brackets) read in one reply: a page
 * of 50 conversations with their content holds tens of thousands; 64 MiB of `[]` would be 22
 * million arrays, minutes of garbage collection at 1.7 GB, deaf to Ctrl-C and SIGTERM while
 * JSON.parse runs. At this bound parsing takes well under a second.
 */
export const MAX_JSON_VALUES = 1_000_000;

/** Whether the text holds more than `limit` commas and opening brackets (stops counting there). */
function moreValuesThan(text: string, limit: number): boolean {
  // Each value counted is a character: a text no longer than the limit holds no more.
  if (text.length <= limit) return false;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c === 44 || c === 91 || c === 123) && ++count > limit) return true;
  }
  return false;
}

/** Why a 2xx reply cannot be used; undefined when it parsed. */
export type ParsedReply = { ok: true; value: unknown } | { ok: false; reason: string };

/** An empty body is null; anything else must be JSON no deeper than MAX_JSON_DEPTH. */
export function parseReply(text: string, contentType: string | string[] | undefined): ParsedReply {
  if (text === '') return { ok: true, value: null };
  if (moreValuesThan(text, MAX_JSON_VALUES))
    return {
      ok: false,
      reason: `the service sent a reply of more than ${MAX_JSON_VALUES.toLocaleString('en-US')} JSON values, more than carectl reads in one reply`,
    };
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    // Only the exact parse, run on a text JSON.parse took, recurses: it ran out of stack.
    if (err instanceof RangeError) return { ok: false, reason: `the service sent JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
    const type = Array.isArray(contentType) ? contentType[0] : contentType;
    const shown = type ? ` (${type.split(';')[0]!.trim()})` : '';
    // A front's own page (maintenance, a login) in place of the reply: its title says whose.
    const title = pageTitle(text);
    if (title !== undefined) return { ok: false, reason: `the service sent a web page ("${title}"), not JSON${shown}` };
    return { ok: false, reason: `the service sent a reply that is not JSON${shown}` };
  }
  if (deeperThan(value, MAX_JSON_DEPTH)) return { ok: false, reason: `the service sent JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
  return { ok: true, value };
}

/** Whether the value nests more than `limit` arrays or objects (a bounded recursion). */
function deeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (item !== null && typeof item === 'object' && deeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== null && typeof item === 'object' && deeperThan(item, limit - 1)) return true;
  }
  return false;
}

/**
 * The spec's error body is {status: "error", message}; the real service may add `error_code` and
 * `param`, shown after the status when present. Anything else falls back to the status.
 */
export function errorMessage(status: number, text: string, from: ErrorSource = {}): string {
  const clean = from.clean ?? ((part: string) => part);
  const body = errorBody(text);
  const details = [
    scalar(body?.error_code) && `error_code: ${clean(scalar(body?.error_code)!)}`,
    scalar(body?.param) && `param: ${clean(scalar(body?.param)!)}`,
  ].filter(Boolean);
  const message = typeof body?.message === 'string' && body.message !== '' ? clean(body.message) : undefined;
  if (message !== undefined) return `${message} (${[`HTTP ${status}`, ...details].join(', ')})`;
  const page = body === undefined ? pageMessage(status, text, from) : undefined;
  if (page !== undefined) return page;
  return `the service answered HTTP ${status}${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
}

type ErrorBody = { message?: unknown; error_code?: unknown; param?: unknown };

/** An error reply's JSON object, or undefined when it is not one (not JSON: the plain status). */
function errorBody(text: string): ErrorBody | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as ErrorBody;
  } catch {
    // not JSON: the plain status
  }
  return undefined;
}

/**
 * Not the service's JSON: a proxy's or a gateway's own page, named with its title; undefined when
 * nothing says who answered.
 */
function pageMessage(status: number, text: string, from: ErrorSource): string | undefined {
  const title = pageTitle(text, from.clean);
  const quoted = title === undefined ? '' : ` ("${title}")`;
  if (from.proxy !== undefined && PROXY_STATUSES.has(status)) {
    return `the proxy ${from.proxy} answered HTTP ${status}${quoted}: ${status === 407 ? 'proxy credentials missing or wrong' : 'it did not get an answer from the service'}`;
  }
  // A web page for an address the API knows: most likely another site at a wrong base address.
  if (title !== undefined && status === 404 && from.url !== undefined)
    return `${from.url.origin}${from.url.pathname} answered HTTP 404 with a web page${quoted}, not the service's JSON: check the base address (--base-url, CARECTL_BASE_URL)`;
  // A 502/504 is a gateway that passed the request on (perhaps) and got nothing usable back.
  if (title !== undefined)
    return `a gateway in front of the service answered HTTP ${status}${quoted}${status === 502 || status === 504 ? ': it got no usable answer from the service' : ', not the service itself'}`;
  return undefined;
}

/** Who else may have answered: the proxy the request went through (`HOST:PORT (HTTP_PROXY)`). */
export interface ErrorSource {
  proxy?: string | undefined;
  /** The address asked, for an answer that is not the service's. */
  url?: URL;
  /**
   * Takes credentials out of each part the service sent (its message, a page title), before any
   * of it is cut (a secret cut in half no longer matches), and not out of carectl's words around them.
   */
  clean?: (part: string) => string;
}

/** What a proxy answers for itself: its credentials, or a service it could not reach. */
const PROXY_STATUSES: ReadonlySet<number> = new Set([407, 502, 503, 504]);

/**
 * The <title> of an HTML page, whitespace collapsed, entities of the common kind read, redacted
 * (`clean`), then cut to at most 100 characters.
 */
export function pageTitle(text: string, clean: (text: string) => string = (raw) => redact(raw)): string | undefined {
  const raw = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text.slice(0, 64 * 1024))?.[1];
  if (raw === undefined) return undefined;
  const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };
  const title = clean(
    raw
      .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => entities[name]!)
      .replace(/[\s\p{Cc}]+/gu, ' ')
      .trim(),
  );
  if (title === '') return undefined;
  return title.length > 100 ? `${title.slice(0, 99)}…` : title;
}

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A redirect of an API request, which carectl refuses: where it pointed, credentials stripped. */
export function redirectMessage(
  status: number,
  text: string,
  location: string | string[] | undefined,
  from: URL,
  clean: (part: string) => string = String,
): string {
  const value = Array.isArray(location) ? location[0] : location;
  if (value === undefined || value.trim() === '') return errorMessage(status, text, { clean });
  const target = clean(URL.canParse(value, from.href) ? stripUserinfo(new URL(value, from)) : stripUserinfo(value));
  return `${errorMessage(status, text, { clean })}: a redirect to ${target}, which carectl does not follow (credentials go only to ${from.origin}): check the base address`;
}

/** A limit as set, exactly: 64 MiB, 32 KiB, 1000 bytes (a progress figure uses formatBytes). */
export function formatLimit(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}
