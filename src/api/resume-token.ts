/**
 * Resume tokens: where a list continues, bound by a checksum to the plan it came from. A token holds
 * only what the plan cannot rebuild, and never the page size: a resumed run reads pages of its own.
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../core/errors.js';
import { LONE_SURROGATE } from '../core/exact-json.js';
import { linkChanges, splitAddress } from './links.js';
import { PAGING_STYLES } from '../catalogue/index.js';
import type { Cursor, ListPlan } from './paging.js';

/** Where a resumed list starts, and the header the output it continues already starts with. */
export interface ResumePoint extends Cursor {
  /** 'csv' or 'tsv' when such a header went out before this point: a continuation leaves it out. */
  header?: string;
}

const SIZE_PARAMS: ReadonlySet<string> = new Set(Object.values(PAGING_STYLES).flatMap((style) => (style.sizeParam ? [style.sizeParam] : [])));

/** A page address against its phase's first, as token fields: its path if another, parameters set (all their values), removed. */
function diffAddress(model: string, address: string): string[] {
  const [modelPath, modelParams] = splitAddress(model);
  const [path, params] = splitAddress(address);
  const set = new URLSearchParams();
  const removed: string[] = [];
  for (const key of new Set([...modelParams.keys(), ...params.keys()])) {
    if (SIZE_PARAMS.has(key)) continue;
    const values = params.getAll(key);
    if (JSON.stringify(values) === JSON.stringify(modelParams.getAll(key))) continue;
    if (values.length === 0) removed.push(key);
    for (const value of values) set.append(key, value);
  }
  return [path === modelPath ? '' : path, packParams(set.toString()), removed.join(',')];
}

/** `model` with diffAddress's fields applied: a parameter set takes the place of its first occurrence, a new one goes last. */
function applyDiff(model: string, [path, packed, removedNames]: string[]): string {
  const [modelPath, modelParams] = splitAddress(model);
  const set = new URLSearchParams(unpackParams(packed ?? ''));
  const removed = new Set(removedNames ? removedNames.split(',') : []);
  const params = new URLSearchParams();
  for (const [key, value] of modelParams) {
    if (removed.has(key)) continue;
    if (!set.has(key)) params.append(key, value);
    else if (!params.has(key)) for (const given of set.getAll(key)) params.append(key, given);
  }
  for (const [key, value] of set) if (!modelParams.has(key)) params.append(key, value);
  const query = params.toString();
  return `${path || modelPath}${query === '' ? '' : `?${query}`}`;
}

/**
 * Long parameter names, written `~N` in a token to keep it short (URLSearchParams writes a literal
 * `~` as %7E, so a bare one is always this shorthand). Append only: tokens already printed use them.
 */
const SHORTHANDS = ['oldest_sort_date', 'newest_sort_date', 'page_token', 'is_priority'];

/** `:` and `,` are left unescaped: the whole token is base64url'd anyway. */
const packParams = (query: string): string =>
  SHORTHANDS.reduce((packed, name, i) => packed.replaceAll(name, `~${i}`), query.replace(/%3A/gi, ':').replace(/%2C/gi, ','));

const unpackParams = (packed: string): string => packed.replace(/~(\d)/g, (all, i: string) => SHORTHANDS[Number(i)] ?? all);

/**
 * base64url of `5|fingerprint|phase|writtenBefore|sliceLastDay|header|asOf (base 36)|path|set parameters|removed names|named ids|checksum`,
 * empty fields where the cursor has nothing. The checksum covers the rest, so a cut token is refused; an edited one
 * can recompute it, so what a token holds is checked as a next_page link is (decodeResumeToken). Version 4 ties the
 * fingerprint to the service's base address; version 3 tokens (carectl before it) are still read, without that tie.
 * Version 5 adds to the fingerprint that of the plan without its names' values (checkResumeToken, before they are resolved).
 */
export function encodeResumeToken(plan: ListPlan, cursor: Cursor, header?: string): string {
  const fields = [
    '5',
    prints(plan),
    cursor.phase,
    cursor.writtenBefore > 0 ? cursor.writtenBefore : '',
    cursor.sliceLastDay ?? '',
    header ?? '',
    plan.asOf?.toString(36) ?? '',
    ...diffAddress(plan.phases[cursor.phase] ?? '', cursor.url),
    (cursor.namedIds ?? []).map(packId).join(','),
  ];
  const text = fields.join('|');
  return Buffer.from(`${text}|${digest(text)}`).toString('base64url');
}

/** The fingerprint, then that of the plan without its names' values where they differ (the query names some). */
function prints(plan: ListPlan): string {
  const whole = fingerprint(plan, true);
  const unnamed = fingerprint(plan, true, plan.named ?? []);
  return unnamed === whole ? whole : whole + unnamed;
}

/** A lone surrogate, kept as a part of a split. */
const LONE_PART = new RegExp(`(${LONE_SURROGATE.source})`);

/**
 * A written id as a token field: percent-encoded, and a lone UTF-16 surrogate (valid JSON, which
 * no percent-encoding carries) as `%uD800`, so the resumed run knows that id again. encodeURIComponent
 * never writes `%u`: tokens of carectl before this (such an id as U+FFFD) read as they did.
 */
const packId = (id: string): string =>
  id
    .split(LONE_PART)
    .map((part, i) => (i % 2 === 1 ? `%u${part.charCodeAt(0).toString(16).toUpperCase()}` : encodeURIComponent(part)))
    .join('');

/** packId undone; throws (a URIError) on a field that is not one. */
const unpackId = (packed: string): string =>
  packed
    .split(/%u([0-9A-F]{4})/)
    .map((part, i) => (i % 2 === 1 ? String.fromCharCode(parseInt(part, 16)) : decodeURIComponent(part)))
    .join('');

type TokenPayload = {
  version: string;
  fingerprint: string;
  /** Version 5: the fingerprint of the plan without its names' values. */
  unnamed?: string;
  asOf?: number;
  address: string[];
  point: Omit<ResumePoint, 'url'>;
};

const NOT_OURS = '--resume: not a whole token as carectl printed it (cut short or changed?); copy it again from the message that printed it';

/** The token's fields, when it is whole (its checksum holds); undefined otherwise. */
function parseToken(token: string): TokenPayload | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const whole = Buffer.from(token, 'base64url').toString('utf8');
  const checksumAt = whole.lastIndexOf('|');
  const text = whole.slice(0, checksumAt);
  if (checksumAt < 0 || whole.slice(checksumAt + 1) !== digest(text)) return undefined;
  const [version, printed = '', phase = '', writtenBefore, sliceLastDay, header, asOf, path = '', set = '', removed = '', namedIds] = text.split('|');
  // NaN for anything but digits, which the check below refuses.
  const count = (field: string): number => (/^\d+$/.test(field) ? Number(field) : NaN);
  let named: { namedIds?: string[] } = {};
  try {
    if (namedIds) named = { namedIds: namedIds.split(',').map(unpackId) };
  } catch {
    return undefined; // not a field packId wrote: an edited token, refused as not whole
  }
  const point = {
    phase: count(phase),
    writtenBefore: writtenBefore ? count(writtenBefore) : 0,
    ...(sliceLastDay && { sliceLastDay: count(sliceLastDay) }),
    ...(header && { header }),
    ...named,
  };
  const payload = { version, ...readPrints(version ?? '', printed), asOf: asOf ? parseInt(asOf, 36) : undefined, address: [path, set, removed], point };
  const counts = [point.phase, point.writtenBefore, point.sliceLastDay ?? 0, payload.asOf ?? 0];
  return ['3', '4', '5'].includes(version) && counts.every((n) => Number.isSafeInteger(n) && n >= 0) ? payload : undefined;
}

/** The fingerprints field (see prints): version 5 may hold two. */
function readPrints(version: string, printed: string): Pick<TokenPayload, 'fingerprint' | 'unnamed'> {
  if (version !== '5') return { fingerprint: printed };
  const fingerprint = printed.slice(0, DIGEST_CHARS);
  return { fingerprint, unnamed: printed.slice(DIGEST_CHARS) || fingerprint };
}

/** The moment the token's list resolved its relative dates at, to build the same plan again. */
export function resumeAsOf(token: string | undefined): number | undefined {
  return token === undefined ? undefined : parseToken(token)?.asOf;
}

/**
 * What a token can be checked against before the plan's names are resolved (`plan` holds them as
 * typed): whole, and (version 5) of this command apart from those names. Nothing is sent for a token
 * that is refused.
 */
export function checkResumeToken(plan: ListPlan, token: string): void {
  const payload = parseToken(token);
  if (!payload || payload.point.phase >= plan.phases.length) throw new UsageError(NOT_OURS);
  if (payload.unnamed !== undefined && payload.unnamed !== fingerprint(plan, true, plan.named ?? [])) throw differentCommand(plan);
}

function differentCommand(plan: ListPlan): UsageError {
  const sameCommand = plan.sameCommand ?? 'the same resource and filters';
  const service = plan.origin === undefined ? '' : ` against the same service (${plan.origin})`;
  return new UsageError(`--resume: the token belongs to a different command; run the same command that printed it (${sameCommand})${service}`);
}

export function decodeResumeToken(plan: ListPlan, token: string): ResumePoint {
  const payload = parseToken(token);
  if (!payload || payload.point.phase >= plan.phases.length) throw new UsageError(NOT_OURS);
  if (payload.fingerprint !== fingerprint(plan, payload.version !== '3')) throw differentCommand(plan);
  const first = plan.phases[payload.point.phase] as string;
  const url = applyDiff(first, payload.address);
  // Only the cursor and a tighter date bound may differ from the command's own query, as for a next_page link.
  const changes = plan.rules ? linkChanges(first, url, plan.rules) : [];
  if (changes.length > 0) throw new UsageError(`--resume: the token's address ${changes.join(', ')} (${url}): not a token carectl printed for this command`);
  return { ...payload.point, url };
}

/** Whether `token` is whole and was printed for `plan`'s command (another query's, or no token: false). */
export function isTokenOf(plan: ListPlan, token: string): boolean {
  const payload = parseToken(token);
  return payload !== undefined && payload.fingerprint === fingerprint(plan, payload.version !== '3');
}

/** Characters of a token's checksum and fingerprint: 48 bits catch a cut or mistyped token, and keep it short. */
const DIGEST_CHARS = 8;
const digest = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, DIGEST_CHARS);

/**
 * A digest of the phases without their page size (a token fits the same command with another --limit or --page-size),
 * and `withOrigin`, of the service's base address; the values of the parameters `unnamed` left out.
 */
function fingerprint(plan: ListPlan, withOrigin: boolean, unnamed: readonly string[] = []): string {
  const withoutPageSize = plan.phases.map((address) => {
    const [path, params] = splitAddress(address);
    for (const key of SIZE_PARAMS) params.delete(key);
    for (const key of unnamed) {
      const count = params.getAll(key).length;
      params.delete(key);
      for (let i = 0; i < count; i++) params.append(key, '');
    }
    return `${path}?${params.toString()}`;
  });
  return digest([...(withOrigin ? [plan.origin ?? ''] : []), ...withoutPageSize, ...(plan.local === undefined ? [] : [plan.local])].join('\n'));
}
