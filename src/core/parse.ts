/**
 * Pure parsers for option values (DATE, RANGE, DURATION, integers, enums, lists) as the CLI
 * contract defines them. Every failure is a one-line UsageError that names the flag and the
 * accepted forms. Time comes in as `now` so results never depend on the real clock.
 */
import { UsageError } from './errors.js';
import { shellWord } from './shell.js';

export const DAY_MS = 86_400_000;
const DATE_FORMS = 'use YYYY-MM-DD, today, yesterday, Nd or Nw, or a date-time YYYY-MM-DDTHH:MM:SS with Z, an offset (+02:00) or none (UTC)';
const RANGE_FORMS = 'use FROM..TO, FROM.., ..TO, or gt:DATE, gte:DATE, lt:DATE, lte:DATE (two joined by a comma)';
const DURATION_FORMS = 'use a number with ms, s, m or h, or several from the largest unit down (e.g. 500ms, 90s, 10m, 1.5h, 1h30m)';
/** setTimeout fires at once for longer delays, so a longer duration could never be honoured. */
const MAX_DURATION_MS = 2 ** 31 - 1;

export type BoundOp = 'gt' | 'gte' | 'lt' | 'lte';
/** A day (`YYYY-MM-DD`) or a UTC date-time in the service's own form (`YYYY-MM-DDTHH:MM:SS`). */
export type Bound = { op: BoundOp; date: string };

/**
 * The bounds that close a side the spec's "supplied as a pair" leaves open: days no record's
 * sort date can pass (never today or tomorrow: sort dates may lie in the future).
 */
export const OPEN_FROM = '1900-01-01';
export const OPEN_TO = '9999-12-31';

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})t(\d{2}):(\d{2}):(\d{2})(z|[+-]\d{2}:?\d{2})?$/;

/**
 * DATE: YYYY-MM-DD (a real calendar date), today, yesterday, Nd or Nw (N days / weeks before
 * today), in UTC; or a date-time YYYY-MM-DDTHH:MM:SS with Z, an offset or none (UTC), returned
 * in the service's own form, UTC: `2026-11-27T00:30:00`. Keywords and units are case-insensitive.
 */
export function parseDate(text: string, flag: string, now: number): string {
  const value = text.trim().toLowerCase();
  const invalid = (): UsageError => new UsageError(`${flag}: "${text}" is not a valid date; ${DATE_FORMS}`);
  const timed = DATE_TIME.exec(value);
  if (timed) return dateTimeText(timed, invalid);

  const absolute = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (absolute) {
    const [year, month, day] = absolute.slice(1).map(Number) as [number, number, number];
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) throw invalid();
    return value;
  }

  const daysBack = relativeDays(value);
  if (daysBack === undefined) throw invalid();
  const date = new Date(now - daysBack * DAY_MS);
  const iso = Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 10);
  // Far-past results leave the four-digit year the service understands.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(iso)) {
    throw new UsageError(`${flag}: "${text}" reaches too far into the past; ${DATE_FORMS}`);
  }
  return iso;
}

/** A date-time's parts (a real date, a real time, an offset within a day) as UTC `YYYY-MM-DDTHH:MM:SS`. */
function dateTimeText(match: RegExpExecArray, invalid: () => UsageError): string {
  const [, day, hours, minutes, seconds, zone = 'z'] = match as unknown as [string, string, string, string, string, string | undefined];
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const [h, m, s] = [hours, minutes, seconds].map(Number) as [number, number, number];
  if (month < 1 || month > 12 || date < 1 || date > daysInMonth(year, month) || h > 23 || m > 59 || s > 59) throw invalid();
  const digits = zone.replace(':', '');
  const offset = zone === 'z' ? 0 : (digits.startsWith('-') ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3)));
  if (zone !== 'z' && (Number(digits.slice(1, 3)) > 23 || Number(digits.slice(3)) > 59)) throw invalid();
  // Date.UTC reads years 0-99 as 1900-1999: the year is set on its own.
  const instant = new Date(Date.UTC(2000, month - 1, date, h, m, s));
  instant.setUTCFullYear(year);
  const utc = new Date(instant.getTime() - offset * 60_000).toISOString();
  // An offset may carry a time near year 0 or 10000 out of the four-digit form.
  if (!/^\d{4}-/.test(utc)) throw invalid();
  return utc.slice(0, 19);
}

/** A DATE that must be a whole day (a parameter the spec types as an ISO date, as a report's date_from). */
export function parseDay(text: string, flag: string, now: number): string {
  const date = parseDate(text, flag, now);
  if (isTimed(date)) throw new UsageError(`${flag}: "${text}" is a date-time; this option takes whole days (YYYY-MM-DD, today, yesterday, Nd or Nw)`);
  return date;
}

/** Whether a parsed DATE is a date-time (not a whole day). */
export const isTimed = (date: string): boolean => date.length > 10;

/** Days before today named by today, yesterday, Nd or Nw; undefined for anything else. */
function relativeDays(value: string): number | undefined {
  if (value === 'today') return 0;
  if (value === 'yesterday') return 1;
  const match = /^(\d+)([dw])$/.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * (match[2] === 'w' ? 7 : 1);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * RANGE: FROM..TO (gte FROM + lt the day after TO, or lte TO when TO is a date-time: both ends
 * included), FROM.., ..TO, or explicit gt:D / gte:D / lt:D / lte:D, one or two joined by a comma
 * (at most one lower and one upper). Each date is any DATE form. Returns the lower bound first.
 * Rejects a range that no date can satisfy.
 */
export function parseRange(text: string, flag: string, now: number): Bound[] {
  const value = text.trim();
  if (value === '' || value === '..') {
    throw new UsageError(`${flag}: "${text}" gives no bound; ${RANGE_FORMS}`);
  }
  const bounds = /^(gt|gte|lt|lte):/.test(value) ? parseExplicitBounds(value, text, flag, now) : parseDottedRange(value, text, flag, now);
  const [lower, upper] = bounds;
  if (lower && upper && firstMoment(lower) > lastMoment(upper)) {
    throw new UsageError(`${flag}: "${text}" matches no date; the start is after the end`);
  }
  return bounds;
}

function parseDottedRange(value: string, text: string, flag: string, now: number): Bound[] {
  const sides = value.split('..');
  if (sides.length === 1 && (/^\d{4}-\d{2}-\d{2}/.test(value) || isDate(value, now))) {
    // A word shaped as a date that is none (2026-13-01) is a wrong date, not a wrong range: parseDate says what is wrong.
    parseDate(value, flag, now);
    // `--created 7d` for the last 7 days: the ranges that one date starts, ends or is.
    const [from, to, alone] = [`${value}..`, `..${value}`, `${value}..${value}`].map(shellWord);
    throw new UsageError(`${flag}: "${text}" is one date, not a range: ${from} (from it on), ${to} (up to it) or ${alone} (that alone)`);
  }
  if (sides.length !== 2) throw notARange(flag, text);
  const [from, to] = sides.map((side) => side.trim()) as [string, string];
  const bounds: Bound[] = [];
  if (from !== '') bounds.push({ op: 'gte', date: parseDate(from, flag, now) });
  if (to !== '') bounds.push(upTo(parseDate(to, flag, now)));
  return bounds;
}

/**
 * TO, included. A day: `_lt=` the day after, which means the same to a service that reads a
 * date-only bound as the whole day and to one that reads it as that day's midnight. A date-time
 * names an instant, not a day: `_lte=` that instant.
 */
function upTo(date: string): Bound {
  if (isTimed(date)) return { op: 'lte', date };
  return { op: 'lt', date: new Date(Date.parse(date) + DAY_MS).toISOString().slice(0, 10) };
}

function parseExplicitBounds(value: string, text: string, flag: string, now: number): Bound[] {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length > 2) {
    throw new UsageError(`${flag}: "${text}" has more than two bounds; ${RANGE_FORMS}`);
  }
  const bounds = parts.map((part): Bound => {
    const match = /^(gt|gte|lt|lte):(.*)$/.exec(part);
    if (!match) throw notARange(flag, text);
    return { op: match[1] as BoundOp, date: parseDate(match[2] as string, flag, now) };
  });
  const lowers = bounds.filter((bound) => isLower(bound.op));
  if (lowers.length > 1) {
    throw new UsageError(`${flag}: "${text}" has two lower bounds (gt/gte); give at most one`);
  }
  if (bounds.length - lowers.length > 1) {
    throw new UsageError(`${flag}: "${text}" has two upper bounds (lt/lte); give at most one`);
  }
  return bounds.sort((a, b) => Number(isLower(b.op)) - Number(isLower(a.op)));
}

function isDate(text: string, now: number): boolean {
  try {
    parseDate(text, '', now);
    return true;
  } catch {
    return false;
  }
}

function notARange(flag: string, text: string): UsageError {
  return new UsageError(`${flag}: "${text}" is not a range; ${RANGE_FORMS}`);
}

function isLower(op: BoundOp): boolean {
  return op === 'gt' || op === 'gte';
}

/** A bound's value in ms (UTC), and how long its unit is: a day, or a second. */
function boundSpan(bound: Bound): [number, number] {
  return isTimed(bound.date) ? [Date.parse(`${bound.date}Z`), 1000] : [Date.parse(`${bound.date}T00:00:00Z`), DAY_MS];
}

/** The first moment a lower bound admits (a date-only gt: the next day; a date-time gt: the next second). */
function firstMoment(bound: Bound): number {
  const [at, span] = boundSpan(bound);
  return bound.op === 'gt' ? at + span : at;
}

/** The last moment an upper bound admits (a date-only lte covers its whole day). */
function lastMoment(bound: Bound): number {
  const [at, span] = boundSpan(bound);
  return bound.op === 'lte' ? at + span - 1 : at - 1;
}

/** Whether the instant `at` (ms, UTC) falls in a RANGE's bounds: a day bound covers its whole day, a date-time its second. */
export function inBounds(bounds: readonly Bound[], at: number): boolean {
  return bounds.every((bound) => (isLower(bound.op) ? at >= firstMoment(bound) : at <= lastMoment(bound)));
}

/** Query parameters for a range on a spec parameter: [['oldest_sort_date_gte', '2024-01-01']]. */
export function rangeParams(param: string, bounds: Bound[]): Array<[string, string]> {
  return bounds.map((bound): [string, string] => [`${param}_${bound.op}`, bound.date]);
}

/** Each unit's length, largest first: a compound duration names its units in this order. */
const DURATION_UNITS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;

/**
 * DURATION: number (integer or decimal) + ms|s|m|h, or several such parts from the largest unit
 * down, each unit at most once (`1h30m`, `1m30s500ms`) → whole milliseconds (rounded). Positive
 * only, and no longer than a timer can wait (about 596h).
 */
export function parseDuration(text: string, flag: string): number {
  const value = text.trim();
  const units = Object.keys(DURATION_UNITS);
  let total = 0;
  let previous = -1;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < value.length) {
    const part = DURATION_PART.exec(value);
    const unit = units.indexOf(part?.[2] ?? '');
    if (!part || unit <= previous) {
      throw new UsageError(`${flag}: "${text}" is not a duration; ${DURATION_FORMS}`);
    }
    previous = unit;
    total += Number(part[1]) * DURATION_UNITS[part[2] as keyof typeof DURATION_UNITS];
  }
  if (previous === -1) throw new UsageError(`${flag}: "${text}" is not a duration; ${DURATION_FORMS}`);
  const ms = Math.round(total);
  if (ms < 1) throw new UsageError(`${flag}: "${text}" must be at least 1ms; ${DURATION_FORMS}`);
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(`${flag}: "${text}" is too long; the longest duration is ${MAX_DURATION_MS}ms (about 596h)`);
  }
  return ms;
}

/**
 * Integer within [min, max] inclusive; either end may be infinite (open). The message names the
 * accepted range: `--page-size: must be an integer from 1 to 50 (got "0")`.
 */
export function parseIntInRange(text: string, flag: string, min: number, max: number): number {
  const value = /^[+-]?\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const accepted = describeInterval(min, max);
    throw new UsageError(`${flag}: must be an integer${accepted} (got "${text}")`);
  }
  return value;
}

function describeInterval(min: number, max: number): string {
  if (Number.isFinite(min) && Number.isFinite(max)) return ` from ${min} to ${max}`;
  if (Number.isFinite(min)) return ` of at least ${min}`;
  if (Number.isFinite(max)) return ` of at most ${max}`;
  return '';
}

/** Enum: exact match; the message lists the accepted values. */
export function parseEnum<T extends string>(text: string, flag: string, values: readonly T[]): T {
  const found = values.find((value) => value === text);
  if (found === undefined) {
    throw new UsageError(`${flag}: "${text}" is not one of ${values.join(', ')}`);
  }
  return found;
}

/** Comma-separated list, trimmed, empty items dropped; `''` → []. */
export function parseList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Like parseList, each item checked with parseEnum. */
export function parseEnumList<T extends string>(text: string, flag: string, values: readonly T[]): T[] {
  return parseList(text).map((item) => parseEnum(item, flag, values));
}
