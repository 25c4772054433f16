/** Wire formats of dates and the shared meaning of the _gt/_gte/_lt/_lte range filters. */
import { HttpProblem } from './http.js';

export const SECOND_MS = 1000;
export const DAY_MS = 86_400_000;

/** `YYYY-MM-DDTHH:MM:SS`, the spec's datetime form (UTC, no zone suffix). */
export function formatDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/** `YYYY-MM-DDTHH:MM:SS.mmm`, used by imported_date. */
export function formatDateTimeMillis(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}

export function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function floorToSecond(ms: number): number {
  return Math.floor(ms / SECOND_MS) * SECOND_MS;
}

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?$/;

export interface QueryDate {
  ms: number;
  dateOnly: boolean;
}

/** Strict `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS`; impossible dates (02-30, 25:00) are refused. */
export function parseQueryDate(text: string): QueryDate | undefined {
  const match = DATE_PATTERN.exec(text);
  if (!match) return undefined;
  const part = (index: number): number => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [part(1), part(2), part(3), part(4), part(5), part(6)];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const roundTrip =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  return roundTrip ? { ms: date.getTime(), dateOnly: match[4] === undefined } : undefined;
}

/** Strict `YYYY-MM-DD` only (report bodies). */
export function parseIsoDay(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const parsed = parseQueryDate(text);
  return parsed?.dateOnly ? parsed.ms : undefined;
}

export const RANGE_MODIFIERS = ['gt', 'gte', 'lt', 'lte'] as const;
export type RangeModifier = (typeof RANGE_MODIFIERS)[number];

/** Both ends inclusive, in ms; ±Infinity when open. Records carry whole seconds. */
export interface Range {
  lo: number;
  hi: number;
}

/**
 * Reads `<name>_<modifier>` parameters. A date-only bound covers the whole day
 * (gte D: from D 00:00; gt D: from D+1; lte D: before D+1; lt D: before D); a datetime bound
 * is exact to the second. Returns undefined when no bound was given.
 */
export function readRange(query: URLSearchParams, name: string, allowed: readonly RangeModifier[] = RANGE_MODIFIERS): Range | undefined {
  if (query.has(name)) {
    throw new HttpProblem(400, `${name} needs a range suffix: ${allowed.map((m) => `${name}_${m}`).join(', ')}`);
  }
  const range: Range = { lo: -Infinity, hi: Infinity };
  let seen = false;
  for (const modifier of RANGE_MODIFIERS) {
    const key = `${name}_${modifier}`;
    for (const value of query.getAll(key)) {
      if (!allowed.includes(modifier)) {
        throw new HttpProblem(400, `${key} is not supported; use ${allowed.map((m) => `${name}_${m}`).join(', ')}`);
      }
      const parsed = parseQueryDate(value);
      if (!parsed) throw new HttpProblem(400, `${key} must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, got '${value}'`);
      const span = parsed.dateOnly ? DAY_MS : SECOND_MS;
      if (modifier === 'gte') range.lo = Math.max(range.lo, parsed.ms);
      if (modifier === 'gt') range.lo = Math.max(range.lo, parsed.ms + span);
      if (modifier === 'lt') range.hi = Math.min(range.hi, parsed.ms - 1);
      if (modifier === 'lte') range.hi = Math.min(range.hi, parsed.ms + span - 1);
      seen = true;
    }
  }
  return seen ? range : undefined;
}

export function inRange(range: Range | undefined, ms: number): boolean {
  return range === undefined || (ms >= range.lo && ms <= range.hi);
}
