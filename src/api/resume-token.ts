/**
 * Resume tokens: where a list continues, bound to the plan it came from. A token holds only what
 * the plan cannot rebuild: the phase, what the page address changes in that phase's first
 * address (the cursor: skip, offset, page_token, a date bound), the records of that page already
 * written, and the part's last day when the list ran in date slices. Never the page size: a run
 * continuing a `--limit 2` run reads pages of its own size. A checksum makes a cut or edited
 * token a usage error, before anything is sent.
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../core/errors.js';
import { splitAddress } from './links.js';
import { PAGING_STYLES } from './catalogue/index.js';
import type { Cursor, ListPlan } from './paging.js';

/** Where a resumed list starts, and the header the output it continues already starts with. */
export interface ResumePoint extends Cursor {
  /** 'csv' or 'tsv' when such a header went out before this point: a continuation leaves it out. */
  header?: string;
}

const SIZE_PARAMS: ReadonlySet<string> = new Set(Object.values(PAGING_STYLES).flatMap((style) => (style.sizeParam ? [style.sizeParam] : [])));

/** What `address` changes in `model`: another path, parameters set (all their values) and removed. */
interface AddressDiff {
  path?: string;
  set?: string;
  removed?: string[];
}

function diffAddress(model: string, address: string): AddressDiff {
  const [modelPath, modelParams] = splitAddress(model);
  const [path, params] = splitAddress(address);
  const set = new URLSearchParams();
  const removed: string[] = [];
  for (const key of new Set([...modelParams.keys(), ...params.keys()])) {
    if (SIZE_PARAMS.has(key)) continue;
    const values = params.getAll(key);
    const model = modelParams.getAll(key);
    if (values.length === model.length && values.join('\u0000') === model.join('\u0000')) continue;
    if (values.length === 0) removed.push(key);
    for (const value of values) set.append(key, value);
  }
  return { ...(path !== modelPath && { path }), ...(set.size > 0 && { set: set.toString() }), ...(removed.length > 0 && { removed }) };
}

function applyDiff(model: string, diff: AddressDiff): string {
  const [modelPath, modelParams] = splitAddress(model);
  const set = new URLSearchParams(diff.set ?? '');
  const removed = new Set(diff.removed ?? []);
  const params = new URLSearchParams();
  const placed = new Set<string>();
  for (const [key, value] of modelParams) {
    if (removed.has(key)) continue;
    if (!set.has(key)) params.append(key, value);
    else if (!placed.has(key)) {
      for (const given of set.getAll(key)) params.append(key, given);
      placed.add(key);
    }
  }
  for (const [key, value] of set) if (!modelParams.has(key)) params.append(key, value);
  const query = params.toString();
  return `${diff.path ?? modelPath}${query === '' ? '' : `?${query}`}`;
}

/**
 * Long parameter names of the spec, written as `~N` in a token's parameters (URLSearchParams
 * writes a literal `~` as %7E, so a bare one is always this shorthand). Append only.
 */
const SHORTHANDS = ['oldest_sort_date', 'newest_sort_date', 'page_token', 'is_priority'];

/** Parameters as short text: shorthands, and `:` `,` left as they are (the token is base64url'd). */
function packParams(query: string): string {
  let packed = query.replace(/%3A/gi, ':').replace(/%2C/gi, ',');
  SHORTHANDS.forEach((name, i) => (packed = packed.split(name).join(`~${i}`)));
  return packed;
}

function unpackParams(packed: string): string {
  return packed.replace(/~(\d)/g, (all, i: string) => SHORTHANDS[Number(i)] ?? all);
}

/**
 * `3|fingerprint|phase|skip|end|header|asOf (base 36)|path|set parameters|removed names|done ids|checksum`,
 * with empty fields for what a cursor does not need, in base64url. The checksum covers all the
 * rest, the query's fingerprint included: a token cut short or edited by hand is refused rather
 * than continuing somewhere else.
 */
export function encodeResumeToken(plan: ListPlan, cursor: Cursor, header?: string): string {
  const diff = diffAddress(plan.phases[cursor.phase] ?? '', cursor.url);
  const fields = [
    '3',
    fingerprint(plan),
    String(cursor.phase),
    cursor.skip > 0 ? String(cursor.skip) : '',
    cursor.end === undefined ? '' : String(cursor.end),
    header ?? '',
    plan.asOf === undefined ? '' : plan.asOf.toString(36),
    diff.path ?? '',
    diff.set === undefined ? '' : packParams(diff.set),
    (diff.removed ?? []).join(','),
    (cursor.done ?? []).map(encodeURIComponent).join(','),
  ];
  const text = fields.join('|');
  return Buffer.from(`${text}|${digest(text, 8)}`).toString('base64url');
}

interface TokenPayload extends AddressDiff {
  fingerprint: string;
  phase: number;
  skip: number;
  end?: number;
  header?: string;
  asOf?: number;
  done?: string[];
}

const NOT_OURS = '--resume: not a whole token as carectl printed it (cut short or changed?); copy it again from the message that printed it';

/** The token's fields, when it is whole (its checksum holds); undefined otherwise. */
function parseToken(token: string): TokenPayload | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const whole = Buffer.from(token, 'base64url').toString('utf8');
  const cut = whole.lastIndexOf('|');
  const text = whole.slice(0, cut);
  if (cut < 0 || whole.slice(cut + 1) !== digest(text, 8)) return undefined;
  const [version, fingerprint, phase, skip, end, header, asOf, path, set, removed, done] = text.split('|');
  const count = (field: string | undefined): number | undefined =>
    field === undefined || field === '' ? undefined : /^\d+$/.test(field) ? Number(field) : NaN;
  const payload: TokenPayload = {
    fingerprint: fingerprint ?? '',
    phase: count(phase) ?? NaN,
    skip: count(skip) ?? 0,
    ...(end ? { end: count(end) as number } : {}),
    ...(header ? { header } : {}),
    ...(asOf ? { asOf: parseInt(asOf, 36) } : {}),
    ...(path ? { path } : {}),
    ...(set ? { set: unpackParams(set) } : {}),
    ...(removed ? { removed: removed.split(',') } : {}),
    ...(done ? { done: done.split(',').map(decodeURIComponent) } : {}),
  };
  const counts = [payload.phase, payload.skip, payload.end ?? 0, payload.asOf ?? 0];
  return version === '3' && counts.every((n) => Number.isSafeInteger(n) && n >= 0) ? payload : undefined;
}

/** The moment the token's list resolved its relative dates at, to build the same plan again. */
export function resumeAsOf(token: string | undefined): number | undefined {
  return token === undefined ? undefined : parseToken(token)?.asOf;
}

export function decodeResumeToken(plan: ListPlan, token: string): ResumePoint {
  const payload = parseToken(token);
  if (!payload || payload.phase >= plan.phases.length) throw new UsageError(NOT_OURS);
  if (payload.fingerprint !== fingerprint(plan)) {
    throw new UsageError(
      `--resume: the token belongs to a different command; run the same command that printed it (${plan.sameCommand ?? 'the same resource and filters'})`,
    );
  }
  const url = applyDiff(plan.phases[payload.phase] as string, payload);
  return {
    phase: payload.phase,
    url,
    skip: payload.skip,
    ...(payload.end !== undefined && { end: payload.end }),
    ...(payload.header !== undefined && { header: payload.header }),
    ...(payload.done !== undefined && { done: payload.done }),
  };
}

/** base64url of the text's SHA-256, its first `length` characters. */
function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, length);
}

/**
 * The phases without their page size: enough to catch a token pasted onto another command, and
 * still accepting the same command with another --limit or --page-size.
 */
function fingerprint(plan: ListPlan): string {
  return digest(plan.phases.map(withoutPageSize).join('\n'), 8);
}

function withoutPageSize(address: string): string {
  const [path, params] = splitAddress(address);
  for (const key of SIZE_PARAMS) params.delete(key);
  return `${path}?${params.toString()}`;
}
