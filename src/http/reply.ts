/**
 * Reading an API reply: bounded in size, parsed as JSON no deeper than carectl can print, and
 * the service's error body turned into the message a user reads.
 */
import type { Readable } from 'node:stream';
import { parseJson } from '../core/exact-json.js';
import { stripUserinfo } from './redact.js';

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
export async function readBounded(body: Readable, limit: number, contentLength: string | string[] | undefined): Promise<string> {
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
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
}

/** Why a 2xx reply cannot be used; undefined when it parsed. */
export type ParsedReply = { ok: true; value: unknown } | { ok: false; reason: string };

/** An empty body is null; anything else must be JSON no deeper than MAX_JSON_DEPTH. */
export function parseReply(text: string, contentType: string | string[] | undefined): ParsedReply {
  if (text === '') return { ok: true, value: null };
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    // Only the exact parse, run on a text JSON.parse took, recurses: it ran out of stack.
    if (err instanceof RangeError) return { ok: false, reason: `the service sent JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
    const type = Array.isArray(contentType) ? contentType[0] : contentType;
    return { ok: false, reason: `the service sent a reply that is not JSON${type ? ` (${type.split(';')[0]!.trim()})` : ''}` };
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
export function errorMessage(status: number, text: string): string {
  let body: { message?: unknown; error_code?: unknown; param?: unknown } | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as typeof body;
  } catch {
    // not JSON: the plain status
  }
  const details = [scalar(body?.error_code) && `error_code: ${scalar(body?.error_code)}`, scalar(body?.param) && `param: ${scalar(body?.param)}`].filter(Boolean);
  const message = typeof body?.message === 'string' && body.message !== '' ? body.message : undefined;
  if (message !== undefined) return `${message} (${[`HTTP ${status}`, ...details].join(', ')})`;
  return `the service answered HTTP ${status}${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
}

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A redirect of an API request, which carectl refuses: where it pointed, credentials stripped. */
export function redirectMessage(status: number, text: string, location: string | string[] | undefined, from: URL): string {
  const value = Array.isArray(location) ? location[0] : location;
  if (value === undefined || value.trim() === '') return errorMessage(status, text);
  const target = URL.canParse(value, from.href) ? stripUserinfo(new URL(value, from)) : stripUserinfo(value);
  return `${errorMessage(status, text)}: a redirect to ${target}, which carectl does not follow (credentials go only to ${from.origin}): check the base address`;
}

/** A limit as set, exactly: 64 MiB, 32 KiB, 1000 bytes (a progress figure uses formatBytes). */
export function formatLimit(bytes: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}
