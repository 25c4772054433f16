import { Chalk } from 'chalk';
import { cellText, pathGetter } from './cells.js';
import type { ValueGetter } from './cells.js';
import { displayWidth, truncateToWidth } from './display-width.js';
import { sanitizeForTerminal } from './sanitize.js';
import { StreamSink } from './stream-sink.js';
import type { RecordWriter, WriterOptions } from './types.js';

/**
 * Borderless kubectl/gh-style tables, laid out with plain padding: columns two spaces apart,
 * upper-case header, no frame, no trailing blanks.
 */
const GAP = '  ';
/** Fitting to the terminal never shrinks a column below this (a narrower one stays as it is). */
const MIN_SHRUNK_WIDTH = 6;
/** Safety valve for callers that never call endPage(): the first "page" ends here. */
const MAX_BUFFERED_ROWS = 1000;

type Style = (text: string) => string;

function headerStyle(opts: WriterOptions): Style | undefined {
  if (!opts.color) return undefined;
  const chalk = new Chalk({ level: 1 });
  return (text) => chalk.bold(text);
}

/** Each cell cut to its column width; every cell but the last padded to it. */
function renderLine(cells: string[], widths: number[], style?: Style): string {
  const last = cells.length - 1;
  const parts = cells.map((cell, index) => {
    const width = widths[index] ?? 0;
    const fitted = truncateToWidth(cell, width);
    const styled = style ? style(fitted) : fitted;
    return index === last ? styled : styled + ' '.repeat(width - displayWidth(fitted));
  });
  return parts.join(GAP).replace(/ +$/, '') + '\n';
}

function naturalWidths(rows: string[][], columnCount: number): number[] {
  const widths = new Array<number>(columnCount).fill(0);
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, displayWidth(cell));
    });
  }
  return widths;
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

/** Rows of a list. Widths come from the header and the first page; later pages reuse them. */
class ListTableWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #getters: ValueGetter[];
  readonly #headerCells: string[] | undefined;
  readonly #headerStyle: Style | undefined;
  readonly #terminalColumns: number | undefined;
  #firstPage: string[][] = [];
  #widths: number[] | undefined;

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream);
    this.#getters = opts.columns.map(pathGetter);
    this.#headerCells = opts.header
      ? opts.columns.map((column) => sanitizeForTerminal(column.toUpperCase()))
      : undefined;
    this.#headerStyle = headerStyle(opts);
    this.#terminalColumns = opts.out.columns;
  }

  async write(record: Record<string, unknown>): Promise<void> {
    const cells = this.#getters.map((get) => sanitizeForTerminal(cellText(get(record))));
    if (this.#widths) return this.#sink.write(renderLine(cells, this.#widths));
    this.#firstPage.push(cells);
    if (this.#firstPage.length >= MAX_BUFFERED_ROWS) await this.#flushFirstPage();
  }

  /** An empty first page (e.g. the first of two queries) does not fix the widths yet. */
  async endPage(): Promise<void> {
    if (!this.#widths && this.#firstPage.length > 0) await this.#flushFirstPage();
  }

  /** An empty list prints nothing, not even the header: the caller says so on stderr. */
  async end(): Promise<void> {
    await this.endPage();
    await this.#sink.end();
  }

  async #flushFirstPage(): Promise<void> {
    const rows = this.#firstPage;
    this.#firstPage = [];
    const measured = this.#headerCells ? [this.#headerCells, ...rows] : rows;
    const widths = fitToTerminal(
      naturalWidths(measured, this.#getters.length),
      this.#terminalColumns,
    );
    this.#widths = widths;
    let text = this.#headerCells ? renderLine(this.#headerCells, widths, this.#headerStyle) : '';
    for (const row of rows) text += renderLine(row, widths);
    await this.#sink.write(text);
  }
}

/** One record as KEY/VALUE lines; values are never truncated. */
class KeyValueTableWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #fields: { key: string; get: ValueGetter }[];
  readonly #header: boolean;
  readonly #headerStyle: Style | undefined;

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream);
    this.#fields = opts.columns.map((column) => ({
      key: sanitizeForTerminal(column),
      get: pathGetter(column),
    }));
    this.#header = opts.header;
    this.#headerStyle = headerStyle(opts);
  }

  async write(record: Record<string, unknown>): Promise<void> {
    const rows = this.#fields.map(({ key, get }) => [key, sanitizeForTerminal(cellText(get(record)))]);
    const header = ['KEY', 'VALUE'];
    const keyWidth = naturalWidths(this.#header ? [header, ...rows] : rows, 2)[0] ?? 0;
    // Infinity: the value column is never cut.
    const widths = [keyWidth, Infinity];
    let text = this.#header ? renderLine(header, widths, this.#headerStyle) : '';
    for (const row of rows) text += renderLine(row, widths);
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
