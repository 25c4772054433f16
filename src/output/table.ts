import type CliTable3 from 'cli-table3';
import { cellText, pathGetter } from './cells.js';
import type { ValueGetter } from './cells.js';
import { sanitizeForTerminal } from './sanitize.js';
import { StreamSink } from './stream-sink.js';
import type { RecordWriter, WriterOptions } from './types.js';

/**
 * Borderless kubectl/gh-style tables laid out by cli-table3: columns two spaces apart,
 * upper-case header, no frame, no trailing blanks.
 */
const GAP = '  ';
/** Fitting to the terminal never shrinks a column below this (a narrower one stays as it is). */
const MIN_SHRUNK_WIDTH = 6;
/** Safety valve for callers that never call endPage(): a "page" ends here. */
const MAX_BUFFERED_ROWS = 1000;
const ELLIPSIS = '…';

const BORDERLESS: CliTable3.TableConstructorOptions = {
  chars: {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left: '',
    'left-mid': '',
    mid: '',
    'mid-mid': '',
    right: '',
    'right-mid': '',
    middle: GAP,
  },
  // No head/border colours: cli-table3 would colour through @colors/colors, which ignores our
  // color setting; the header is styled with chalk before layout instead.
  style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [] },
  truncate: ELLIPSIS,
};

/** cli-table3 is loaded on first use, so commands printing other formats do not pay for it. */
let tableClass: Promise<CliTable3> | undefined;
function loadTableClass(): Promise<CliTable3> {
  tableClass ??= import('cli-table3').then((module) => module.default);
  return tableClass;
}

/**
 * cli-table3 truncates non-ASCII text by dropping one UTF-16 unit at a time and re-measuring the
 * rest, milliseconds per long cell. Every code point but a zero-width one takes a column, so
 * text is first cut a few code points past its column width, with no visible difference; the
 * ellipsis keeps the cut marked should the kept part fit (text heavy in zero-width characters).
 */
function boundedForColumn(text: string, width: number): string {
  const limit = width + 8;
  if (text.length <= limit) return text;
  const chars = Array.from(text);
  return chars.length <= limit ? text : chars.slice(0, limit).join('') + ELLIPSIS;
}

interface Layout {
  /** Lines ending in '\n', trailing blanks removed (cli-table3 pads the last column too). */
  text: string;
  widths: number[];
}

/**
 * Lays the rows out; without `widths`, columns take their natural width. Cells are expected
 * sanitized already: cli-table3 treats escape sequences as zero-width.
 */
async function layOut(rows: string[][], head: string[] | undefined, widths?: number[]): Promise<Layout> {
  const Table = await loadTableClass();
  // A copy: cli-table3 writes the widths it settles on back into options.colWidths.
  const table = new Table({ ...BORDERLESS, head: head ?? [], colWidths: widths ? [...widths] : [] });
  const bounded = widths
    ? rows.map((row) => row.map((cell, index) => boundedForColumn(cell, widths[index] ?? 0)))
    : rows;
  table.push(...bounded);
  return {
    text: table.toString().replace(/ +$/gm, '') + '\n',
    widths: table.options.colWidths.map((width) => width ?? 0),
  };
}

/** Header names, bold when colour is on; chalk is loaded only then. */
async function headerCells(names: string[], opts: WriterOptions): Promise<string[]> {
  if (!opts.color) return names;
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return names.map((name) => chalk.bold(name));
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * Shrinks the widest columns until the table fits the terminal. Shrinking the widest first is
 * the same as capping every column at one limit, so this finds the largest limit that fits.
 */
function fitToTerminal(widths: number[], terminalColumns: number | undefined): number[] {
  if (!terminalColumns) return widths;
  const budget = terminalColumns - GAP.length * (widths.length - 1);
  const capped = (limit: number): number[] => widths.map((width) => Math.min(width, limit));
  let limit = Math.max(0, ...widths);
  while (limit > MIN_SHRUNK_WIDTH && sum(capped(limit)) > budget) limit -= 1;
  return capped(limit);
}

/**
 * Widens columns to `wanted`, never narrows them (rows already printed keep their alignment), and
 * on a terminal only into the room left: the first columns to need it get it first.
 */
function widen(widths: number[], wanted: number[], terminalColumns: number | undefined): number[] {
  let room = terminalColumns ? terminalColumns - GAP.length * (widths.length - 1) - sum(widths) : Infinity;
  return widths.map((width, index) => {
    const extra = Math.max(0, Math.min((wanted[index] ?? 0) - width, room));
    room -= extra;
    return width + extra;
  });
}

/** At least the columns `text` takes: one per printable ASCII character, else at most two per UTF-16 unit. */
function widthBound(text: string): number {
  return /^[\x20-\x7e]*$/.test(text) ? text.length : text.length * 2;
}

/**
 * Rows of a list, laid out a page at a time: one cli-table3 table per page rather than per row.
 * Widths come from the header and the first page; a later page with longer cells widens them
 * where there is room, so nothing is cut that fits.
 */
class ListTableWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #getters: ValueGetter[];
  readonly #head: Promise<string[] | undefined>;
  readonly #terminalColumns: number | undefined;
  #page: string[][] = [];
  #widths: number[] | undefined;

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream);
    this.#getters = opts.columns.map(pathGetter);
    this.#head = opts.header
      ? headerCells(
          opts.columns.map((column) => sanitizeForTerminal(column.toUpperCase())),
          opts,
        )
      : Promise.resolve(undefined);
    this.#terminalColumns = opts.out.columns;
  }

  async write(record: Record<string, unknown>): Promise<void> {
    this.#page.push(this.#getters.map((get) => sanitizeForTerminal(cellText(get(record)))));
    if (this.#page.length >= MAX_BUFFERED_ROWS) await this.endPage();
  }

  /** An empty page (e.g. the first of two queries) prints nothing and fixes no widths. */
  async endPage(): Promise<void> {
    const rows = this.#page;
    if (rows.length === 0) return;
    this.#page = [];
    if (this.#widths) {
      const { text } = await layOut(rows, undefined, await this.#widthsFor(rows, this.#widths));
      await this.#sink.write(text);
    } else {
      await this.#writeFirstPage(rows);
    }
  }

  /** An empty list prints nothing, not even the header: the caller says so on stderr. */
  async end(): Promise<void> {
    await this.endPage();
    await this.#sink.end();
  }

  /** The widths for a later page; measured only when a cell may be wider than its column. */
  async #widthsFor(rows: string[][], widths: number[]): Promise<number[]> {
    if (!rows.some((row) => row.some((cell, index) => widthBound(cell) > (widths[index] ?? 0)))) return widths;
    const natural = (await layOut(rows, undefined)).widths;
    this.#widths = widen(widths, natural, this.#terminalColumns);
    return this.#widths;
  }

  async #writeFirstPage(rows: string[][]): Promise<void> {
    const head = await this.#head;
    let layout = await layOut(rows, head);
    const fitted = fitToTerminal(layout.widths, this.#terminalColumns);
    if (fitted.some((width, index) => width !== layout.widths[index])) {
      layout = await layOut(rows, head, fitted);
    }
    this.#widths = fitted;
    await this.#sink.write(layout.text);
  }
}

/** One record as KEY/VALUE lines; values are never truncated. */
class KeyValueTableWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #fields: { key: string; get: ValueGetter }[];
  readonly #head: Promise<string[] | undefined>;

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream);
    this.#fields = opts.columns.map((column) => ({
      key: sanitizeForTerminal(column),
      get: pathGetter(column),
    }));
    this.#head = opts.header ? headerCells(['KEY', 'VALUE'], opts) : Promise.resolve(undefined);
  }

  async write(record: Record<string, unknown>): Promise<void> {
    const rows = this.#fields.map(({ key, get }) => [key, sanitizeForTerminal(cellText(get(record)))]);
    // Natural widths (no terminal fitting): the value column is never cut.
    const { text } = await layOut(rows, await this.#head);
    await this.#sink.write(text);
  }

  async endPage(): Promise<void> {}

  async end(): Promise<void> {
    await this.#sink.end();
  }
}

export function createTableWriter(opts: WriterOptions): RecordWriter {
  return opts.shape === 'single' ? new KeyValueTableWriter(opts) : new ListTableWriter(opts);
}
