/**
 * Resume tokens: where a list continues, bound to the plan it came from. A token holds only what
 * the plan cannot rebuild: the phase, what the page address changes in that phase's first
 * address (the cursor: skip, offset, page_token, a date bound), the records of that page already
 * written, and the part's last day when the list ran in date slices. Never the page size: a run
 * continuing a `--limit 2` run reads pages of its own size.
 */
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
  a?: string;
  d?: string;
  r?: string[];
}

function diffAddress(model: string, address: string): AddressDiff {
  const [modelPath, modelParams] = splitAddress(model);
  const [path, params] = splitAddress(address);
  const set = new URLSearchParams();
  const removed: string[] = [];
  for (const key of new Set([...modelParams.keys(), ...params.keys()])) {
    if (SIZE_PARAMS.has(key)) continue;
    const values = params.getAll(key);
    if (values.join('\u0000') === modelParams.getAll(key).join('\u0000')) continue;
    if (values.length === 0) removed.push(key);
    for (const value of values) set.append(key, value);
  }
  return { ...(path !== modelPath && { a: path }), ...(set.size > 0 && { d: set.toString() }), ...(removed.length > 0 && { r: removed }) };
}

function applyDiff(model: string, diff: AddressDiff): string {
  const [modelPath, modelParams] = splitAddress(model);
  const set = new URLSearchParams(diff.d ?? '');
  const removed = new Set(diff.r ?? []);
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
  return `${diff.a ?? modelPath}${query === '' ? '' : `?${query}`}`;
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
 * `2|fingerprint|phase|skip|end|header|asOf (base 36)|path|set parameters|removed names`, with
 * empty fields for what a cursor does not need and trailing empty fields left out, in base64url.
 */
export function encodeResumeToken(plan: ListPlan, cursor: Cursor, header?: string): string {
  const diff = diffAddress(plan.phases[cursor.phase] ?? '', cursor.url);
  const fields = [
    '2',
    fingerprint(plan),
    String(cursor.phase),
    cursor.skip > 0 ? String(cursor.skip) : '',
    cursor.end === undefined ? '' : String(cursor.end),
    header ?? '',
    plan.asOf === undefined ? '' : plan.asOf.toString(36),
    diff.a ?? '',
    diff.d === undefined ? '' : packParams(diff.d),
    (diff.r ?? []).join(','),
  ];
  while (fields[fields.length - 1] === '') fields.pop();
  return Buffer.from(fields.join('|')).toString('base64url');
}

interface TokenPayload extends AddressDiff {
  v?: unknown;
  f?: unknown;
  p?: unknown;
  u?: unknown;
  s?: unknown;
  e?: unknown;
  h?: unknown;
  n?: unknown;
}

/** Version 2 (the text form above) or version 1 (JSON, with the whole address in `u`). */
function parseToken(token: string): TokenPayload | undefined {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (text.startsWith('2|')) {
    const [v, f, p, s, e, h, n, a, d, r] = text.split('|');
    const count = (field: string | undefined): number | undefined => (field === undefined || field === '' ? undefined : /^-?\d+$/.test(field) ? Number(field) : NaN);
    return {
      v: Number(v), f, p: count(p), s: count(s) ?? 0, e: count(e),
      ...(h ? { h } : {}), ...(n ? { n: parseInt(n, 36) } : {}), ...(a ? { a } : {}), ...(d ? { d: unpackParams(d) } : {}), ...(r ? { r: r.split(',') } : {}),
    };
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as TokenPayload) : undefined;
  } catch {
    return undefined;
  }
}

/** The moment the token's list resolved its relative dates at, to build the same plan again. */
export function resumeAsOf(token: string | undefined): number | undefined {
  const n = token === undefined ? undefined : parseToken(token)?.n;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isText = (value: unknown): boolean => value === undefined || typeof value === 'string';

export function decodeResumeToken(plan: ListPlan, token: string): ResumePoint {
  const payload = parseToken(token) ?? {};
  const { v, f, p, s = 0, e, h } = payload;
  const valid =
    isCount(p) && p < plan.phases.length && isCount(s) && (e === undefined || Number.isSafeInteger(e)) &&
    ((v === 1 && typeof payload.u === 'string') ||
      (v === 2 && isText(payload.a) && isText(payload.d) && (payload.r === undefined || (Array.isArray(payload.r) && payload.r.every((k) => typeof k === 'string')))));
  if (!valid) throw new UsageError('--resume: not a token carectl printed');
  if (f !== fingerprint(plan)) {
    throw new UsageError(`--resume: the token belongs to a different command; run the same command that printed it (${plan.sameCommand ?? 'the same resource and filters'})`);
  }
  const phase = plan.phases[p] as string;
  // Tokens of earlier versions hold the whole address: it keeps its place (skip, offset or
  // token) but takes this run's page size.
  const url = v === 1 ? withPageSizeOf(phase, payload.u as string) : applyDiff(phase, payload);
  return { phase: p, url, skip: s, ...(typeof e === 'number' && { end: e }), ...(typeof h === 'string' && { header: h }) };
}

/** `address` with the page size that `model` asks for, where both carry one. */
function withPageSizeOf(model: string, address: string): string {
  const wanted = splitAddress(model)[1];
  const [path, present] = splitAddress(address);
  for (const key of SIZE_PARAMS) {
    const size = wanted.get(key);
    if (size !== null && present.has(key)) present.set(key, size);
  }
  return `${path}?${present.toString()}`;
}

/**
 * FNV-1a over the phases without their page size: short, stable, enough to catch a token pasted
 * onto another command, and still accepting the same command with another --limit or --page-size.
 */
function fingerprint(plan: ListPlan): string {
  let hash = 0x811c9dc5;
  for (const char of plan.phases.map(withoutPageSize).join('\n')) {
    hash ^= char.codePointAt(0) as number;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

function withoutPageSize(address: string): string {
  const [path, params] = splitAddress(address);
  for (const key of SIZE_PARAMS) params.delete(key);
  return `${path}?${params.toString()}`;
}
