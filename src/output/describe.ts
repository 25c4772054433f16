/**
 * One record as a person reads it (kubectl describe, gh pr view): every field on a line of its
 * own, `key  value`, keys aligned; nested objects flattened to dotted keys (`author.id`), lists of
 * references summarised (`tags  vip (7001), 7005`), long values wrapped under their value on a
 * terminal. The table format's view of a single record.
 */
import { ExactNumber, isObject, stringifyJson } from '../core/exact-json.js';
import { pathGetter } from './cells.js';
import { sanitizeForTerminal } from './sanitize.js';
import { StreamSink } from '../core/stream-sink.js';
import { boldWhen } from './style.js';
import { hangingLines } from './text-width.js';
import { displayWidth } from './width.js';
import type { RecordWriter, WriterOptions } from './types.js';

const GAP = '  ';
const MIN_KEY_COLUMN = 16;
/** Keys an object may have and still read as a reference to another record. */
const REFERENCE_KEYS = new Set(['id', 'url', 'name', 'platform_id', 'email']);

type Entry = [key: string, value: string];

/** {id, url} or {id, url, name, …}: shown by its name and id, its address left out. */
function isReference(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  return keys.every((key) => REFERENCE_KEYS.has(key)) && (keys.includes('id') || keys.includes('name'));
}

function referenceText(ref: Record<string, unknown>): string {
  const { id, name } = ref;
  const hasId = id !== undefined && id !== null && id !== '';
  if (typeof name === 'string' && name !== '') return hasId ? `${name} (${String(id)})` : name;
  return hasId ? String(id) : '';
}

function scalarText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string'
    ? value
    : value instanceof ExactNumber
      ? value.text
      : typeof value === 'object'
        ? (stringifyJson(value) ?? '')
        : String(value);
}

/** The lines of one value under `key`: one for a scalar or a summarised list, several for an object. */
export function describeEntries(key: string, value: unknown): Entry[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [[key, '']];
    if (value.every((element) => !isObject(element) && !Array.isArray(element))) return [[key, value.map(scalarText).join(', ')]];
    if (value.every(isReference)) return [[key, value.map(referenceText).join(', ')]];
    return value.flatMap((element, index) => describeEntries(`${key}.${index}`, element));
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return [[key, '']];
    return keys.flatMap((child) => describeEntries(`${key}.${child}`, value[child]));
  }
  return [[key, scalarText(value)]];
}

class DescribeWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #columns: readonly string[] | undefined;
  readonly #width: number | undefined;
  readonly #key: Promise<(text: string) => string>;

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream, opts.signal);
    this.#columns = opts.everyField ? undefined : opts.columns;
    // Wrapped to the terminal; off a terminal each value stays on one line, for grep.
    this.#width = opts.out.isTTY ? opts.out.columns : undefined;
    this.#key = boldWhen(opts.color);
  }

  async write(record: Record<string, unknown>): Promise<void> {
    const entries = this.#columns
      ? this.#columns.flatMap((column) => describeEntries(column, pathGetter(column)(record)))
      : Object.keys(record).flatMap((key) => describeEntries(key, record[key]));
    const shown = entries.map(([key, value]): Entry => [sanitizeForTerminal(key), sanitizeForTerminal(value)]);
    const keyWidth = this.#keyWidth(shown.map(([key]) => displayWidth(key)));
    const style = await this.#key;
    const lines = shown.flatMap(([key, value]) => {
      const indent = keyWidth + GAP.length;
      // Values start in one column: a key longer than the keys' column has a line of its own.
      const alone = displayWidth(key) > keyWidth && value !== '';
      const label = alone ? ' '.repeat(indent) : key + ' '.repeat(Math.max(0, keyWidth - displayWidth(key))) + GAP;
      const [first = '', ...rest] = hangingLines(label, value, this.#width, indent);
      // Only the key is styled: the padding and the value stay plain.
      return alone ? [style(key), first, ...rest] : [style(key) + first.slice(key.length), ...rest];
    });
    await this.#sink.write(lines.map((line) => `${line.trimEnd()}\n`).join(''));
  }

  /**
   * The keys' column: as wide as the longest key, but on a terminal not past a third of it (at
   * least MIN_KEY_COLUMN); a longer key is on a line of its own, its value under the others'.
   */
  #keyWidth(widths: number[]): number {
    // A loop, not Math.max(...widths): a record with 12,000 content items has tens of thousands of keys, past the stack.
    const longest = widths.reduce((max, width) => (width > max ? width : max), 0);
    return this.#width === undefined ? longest : Math.min(longest, Math.max(MIN_KEY_COLUMN, Math.floor(this.#width / 3)));
  }

  async endPage(): Promise<void> {}

  async end(): Promise<void> {
    await this.#sink.end();
  }
}

export function createDescribeWriter(opts: WriterOptions): RecordWriter {
  return new DescribeWriter(opts);
}
