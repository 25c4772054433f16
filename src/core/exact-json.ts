/**
 * JSON with every number kept as the service wrote it. JSON.parse turns an id of 9007199254740993
 * into 9007199254740992 and 1e999 into Infinity (printed as null): a pipeline fed such an id would
 * update another record. A number a double cannot hold exactly is kept as its text, an
 * ExactNumber, and printed as that text in every output format.
 */
import { isSafeNumber, parse as parseLossless } from 'lossless-json';

/** A JSON number a double would change (an integer past 2^53, 1e999, too many digits): its text. */
export class ExactNumber {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }

  /** What JSON.stringify writes for it, turned back into the bare number by stringifyJson. */
  toJSON(): string {
    return MARK + this.text;
  }
}

/** Per process, so no string in the data can pass for a kept number. */
const MARK = `\u0000exact-number-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}:`;
const MARKED = new RegExp(`"${JSON.stringify(MARK).slice(1, -1).replaceAll('\\', '\\\\')}([-+.0-9eE]+)"`, 'g');

/**
 * Where a number might not survive a double: 16 digits and dots in a row (no double holds more
 * than 15 significant digits exactly in every case), or a three-digit exponent. Only a text with
 * such a run, inside a string or not, is parsed again number by number: an ordinary page costs one
 * scan of this expression besides JSON.parse. (Spelled out: V8 runs `\d{3}` and `[\d.]{15}` ten
 * times slower over a page, where a scan costs a tenth of its parse.)
 */
const RISKY_NUMBER = new RegExp(`\\d${'[\\d.]'.repeat(15)}|\\d[eE][+-]?\\d\\d\\d`);

/**
 * The text parsed like JSON.parse (which it runs first: it checks the syntax and nesting without
 * recursion), with every number that a double would change as an ExactNumber.
 */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!RISKY_NUMBER.test(text)) return value;
  return parseLossless(text, null, {
    parseNumber: (token: string) => (isSafeNumber(token) ? Number(token) : new ExactNumber(token)),
    // As JSON.parse: the last of a repeated key wins.
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

/** JSON.stringify, with each ExactNumber written as its number. */
export function stringifyJson(value: unknown, indent?: number): string | undefined {
  const json = JSON.stringify(value, null, indent) as string | undefined;
  return json !== undefined && json.includes(MARK_START) ? json.replace(MARKED, '$1') : json;
}

/** How the mark starts once JSON.stringify has escaped it: a cheap test before the replacement. */
const MARK_START = JSON.stringify(MARK).slice(1, 12);

/** Half of a UTF-16 surrogate pair on its own: valid in JSON, but no URL (or UTF-8) can carry it. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** An id as text: a string as it is, a number (exact or not) as its digits; undefined otherwise. */
export function idText(id: unknown): string | undefined {
  if (typeof id === 'string') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  if (id instanceof ExactNumber) return id.text;
  return undefined;
}

/** A JSON object: not null, not a list. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
