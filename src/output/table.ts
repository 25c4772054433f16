import type CliTable from 'cli-table3';
import { cellText, pathGetter } from './cells.js';
import type { ValueGetter } from './cells.js';
import { columnPolicy, fitColumns, MIN_WRAP_WIDTH, shortHeader, widestCell } from './grid.js';
import type { ColumnPolicy } from './grid.js';
import { sanitizeForTerminal } from './sanitize.js';
import { tableLibrary } from './table-library.js';
import { StreamSink } from '../core/stream-sink.js';
import { boldWhen } from './style.js';
import type { RecordWriter, WriterOptions } from './types.js';
import { wrapText } from './text-width.js';
import { cutToWidth, displayWidth, trimTrailingSpaces } from './width.js';

/**
 * Borderless kubectl/gh-style tables: columns two spaces apart, upper-case header, no frame, no
 * trailing blanks. carectl computes the widths and cuts (or wraps) every cell to its column
 * before anything measures it, so laying out costs time linear in what is shown; cli-table3, its
 * border characters off, renders each page's rows on those widths.
 */
const GAP = 2;
/** A cell keeps its column: an address too wide for it is cut across lines like any word. */
const CELL_WRAP = { cutAddresses: true } as const;
/** Safety valve for callers that never call endPage(): a "page" ends here. */
const MAX_BUFFERED_ROWS = 1000;
/**
 * No cell is shown wider than this, on a terminal or off one (the rest is cut, marked with '…'):
 * what a table can usefully show, and the bound on what laying it out costs.
 */
export const MAX_CELL_WIDTH = 4096;
/**
 * Room a key column takes beyond its first window's values, as a share of them, and at most
 * KEY_RESERVE_MAX: on a terminal before free text keeps its width (ColumnMeasure.reserve). For an
 * id one digit or a few letters longer; a far longer one (an e-mail address) is rare enough to
 * cost its row's free text rather than every row's.
 */
const KEY_RESERVE = 0.25;
const KEY_RESERVE_MAX = 4;
/** Columns whose cells wrap when WriterOptions.wrap is not given: `conversations update`'s messages. */
export const DEFAULT_WRAP_COLUMNS: readonly string[] = ['result'];

/** The widest word of a text (words end at spaces, as wrapText breaks lines), in columns. */
function widestWord(text: string): number {
  return text.split(' ').reduce((widest, word) => Math.max(widest, displayWidth(word)), 0);
}

/** cli-table3 with no frame: only the gap between columns, no padding, no row separators. */
const NO_BORDER = {
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
    middle: ' '.repeat(GAP),
  },
  style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
};

/** The terminal's width when stdout is one and says how wide it is. */
function terminalWidth(opts: WriterOptions): number | undefined {
  const { isTTY, columns } = opts.out;
  return isTTY && columns !== undefined && columns > 0 ? columns : undefined;
}

/**
 * A row ready for cli-table3: each cell cut to its width (a wrapped cell's first line), and the
 * widths. The further lines of wrapped cells are laid out here, under their column: a 200 KB
 * result wraps to thousands of lines, which cli-table3 would measure again and again.
 */
interface LaidRow {
  cells: string[];
  widths: number[];
  more: string[];
}

/** A line being assembled: text, and the terminal column where it ends. */
class Line {
  text = '';
  end = 0;

  /** Adds `shown` (of `width` columns) at column `at`, after spaces up to it. */
  put(at: number, shown: string, width: number): void {
    this.text += ' '.repeat(Math.max(0, at - this.end)) + shown;
    this.end = Math.max(at, this.end) + width;
  }
}

/**
 * One grid: the widths fixed, each row laid out on it, so every cell starts where its header does,
 * page after page. A cell wider than its column is cut with '…', or wrapped within the column when
 * its column wraps. A key or fixed value (an id, a code, a date) is never cut: the widths come from
 * the first window, and while more rows may follow a column keeps a reserve (room for the longest
 * value the catalogue knows, a status enum narrowed by a filter, or KEY_RESERVE for a key column),
 * on a terminal before free text keeps its width, so a wider one on a later page is rare. When one
 * comes, its record still takes one line: the value stands whole and the cells after it in that
 * row move right, each free-text (or blank) cell cut so that it still ends where its column ends,
 * until the row is back on the grid; a key or fixed value pushed past its column's end moves on
 * the ones after it. The last column reaches the terminal's edge (off a terminal, MAX_CELL_WIDTH).
 */
class Grid {
  readonly #widths: number[];
  readonly #policies: readonly ColumnPolicy[];
  readonly #terminalColumns: number | undefined;

  constructor(widths: number[], policies: readonly ColumnPolicy[], terminalColumns: number | undefined) {
    this.#widths = widths;
    this.#policies = policies;
    this.#terminalColumns = terminalColumns;
  }

  /** The cells of one row on the grid; a header is cut, never kept whole. */
  layRow(texts: readonly string[], header = false): LaidRow {
    const grid = [...this.#widths];
    const last = grid.length - 1;
    const lastStart = grid.slice(0, last).reduce((total, width) => total + width + GAP, 0);
    grid[last] = Math.max(1, (this.#terminalColumns ?? lastStart + MAX_CELL_WIDTH) - lastStart);
    const { widths, shown } = header ? { widths: grid, shown: texts } : this.#pushed(texts, grid);
    const starts = widths.map((_, index) => widths.slice(0, index).reduce((total, width) => total + width + GAP, 0));
    const more: Line[] = [];
    // The first line under the row free from column `at` on (what is put there goes no further left).
    const freeFrom = (at: number): number => {
      let row = more.length;
      while (row > 0 && (more[row - 1] as Line).end + GAP <= at) row--;
      return row;
    };
    const cells = shown.map((text, index) => {
      const width = widths[index] as number;
      const at = starts[index] as number;
      const policy = this.#policies[index] as ColumnPolicy;
      if (header) return shortHeader(text, width);
      if (!policy.wrap || displayWidth(text, width) <= width) return cutToWidth(text, width);
      if (this.#terminalColumns !== undefined && (width < MIN_WRAP_WIDTH || widestWord(text) > width) && index === last && index > 0) {
        // Too narrow to read, or for a word of it: under the row, from its second column, as wide as the terminal lets it.
        const under = starts[1] as number;
        const from = freeFrom(under);
        wrapText(text, this.#terminalColumns - under, CELL_WRAP).forEach((line, row) => (more[from + row] ??= new Line()).put(under, line, displayWidth(line)));
        return '';
      }
      const [first = '', ...rest] = wrapText(text, width, CELL_WRAP);
      const from = freeFrom(at);
      rest.forEach((line, row) => (more[from + row] ??= new Line()).put(at, line, displayWidth(line)));
      return first;
    });
    return { cells, widths, more: more.map((line) => trimTrailingSpaces(line.text)) };
  }

  /**
   * The widths of one row: the grid's, unless a value kept whole is wider than the room it has.
   * `shift` is how far right of its column's start a cell begins; every other cell gets the room
   * left to its column's end (at least one column: a cut text shows '…'), so the row returns to
   * the grid at the first cell that can give up what the wide value took. A last cell left no
   * room at all is not shown, rather than a line wider than the terminal.
   */
  #pushed(texts: readonly string[], grid: readonly number[]): { widths: number[]; shown: string[] } {
    let shift = 0;
    const shown = [...texts];
    const widths = grid.map((width, index) => {
      const text = texts[index] as string;
      const policy = this.#policies[index] as ColumnPolicy;
      const room = width - shift;
      const fits = Math.max(0, room);
      if (!policy.wrap && displayWidth(text, fits) > fits && policy.keeps(text)) {
        shift += displayWidth(text) - width;
        return displayWidth(text);
      }
      if (room < 1 && index === grid.length - 1) shown[index] = '';
      shift += Math.max(1, room) - width;
      return Math.max(1, room);
    });
    return { widths, shown };
  }
}

/** The lines of rows laid out on a grid, by cli-table3; rows of the same widths go in one table. */
function render(Table: typeof CliTable, rows: readonly LaidRow[], style?: (text: string) => string): string {
  let text = '';
  for (let start = 0; start < rows.length;) {
    const widths = (rows[start] as LaidRow).widths;
    // The last column as wide as its widest cell here: cli-table3 pads every cell to its column.
    const same: LaidRow[] = [];
    while (start + same.length < rows.length && sameWidths((rows[start + same.length] as LaidRow).widths, widths))
      same.push(rows[start + same.length] as LaidRow);
    start += same.length;
    const last = widths.length - 1;
    const lastWidth = Math.max(1, ...same.map((row) => displayWidth(row.cells[last] as string)));
    const table = new Table({ ...NO_BORDER, colWidths: [...widths.slice(0, last), Math.min(widths[last] as number, lastWidth)] });
    for (const row of same) table.push(style ? row.cells.map((cell) => (cell === '' ? cell : style(cell))) : row.cells);
    // One line a row (every cell is one line); a wrapped cell's further lines follow it.
    table
      .toString()
      .split('\n')
      .forEach((line, index) => {
        const { more } = same[index] as LaidRow;
        text += [line, ...more].map((shown) => trimTrailingSpaces(shown) + '\n').join('');
      });
  }
  return text;
}

function sameWidths(a: readonly number[], b: readonly number[]): boolean {
  return a.every((width, index) => width === b[index]);
}

/**
 * Rows of a list on one grid. The first window of rows (the first page, or MAX_BUFFERED_ROWS
 * rows without endPage()) fixes the columns shown, their widths and policies; every later row is
 * laid out on them, so columns never move part-way down the output. Later rows go out a page at a time.
 */
class ListTableWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #columns: string[];
  readonly #getters: ValueGetter[];
  readonly #wrap: ReadonlySet<string>;
  readonly #header: string[] | undefined;
  readonly #style: Promise<((text: string) => string) | undefined>;
  readonly #terminalColumns: number | undefined;
  readonly #notice: ((message: string) => void) | undefined;
  readonly #known: Readonly<Record<string, readonly string[]>>;
  readonly #most: number;
  readonly #main: string | undefined;
  #page: string[][] = [];
  #grid: { grid: Grid; shown: number[]; Table: typeof CliTable } | undefined;
  #leftOut: string[] = [];

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream, opts.signal);
    this.#columns = opts.columns;
    this.#getters = opts.columns.map(pathGetter);
    this.#wrap = new Set(opts.wrap ?? DEFAULT_WRAP_COLUMNS);
    this.#header = opts.header ? opts.columns.map((column) => cutToWidth(sanitizeForTerminal(column.toUpperCase()), MAX_CELL_WIDTH)) : undefined;
    // Header names bold when colour is on (chalk is loaded only then).
    this.#style = opts.header && opts.color ? boldWhen(true) : Promise.resolve(undefined);
    this.#terminalColumns = terminalWidth(opts);
    this.#notice = opts.notice;
    this.#known = opts.known ?? {};
    this.#most = opts.most ?? Infinity;
    this.#main = opts.main;
  }

  async write(record: Record<string, unknown>): Promise<void> {
    this.#page.push(
      this.#getters.map((get, index) => {
        const text = sanitizeForTerminal(cellText(get(record)));
        // Wrapped cells are kept whole; any other is cut to the most a table shows, right away.
        return this.#wrap.has(this.#columns[index] as string) ? text : cutToWidth(text, MAX_CELL_WIDTH);
      }),
    );
    if (this.#page.length >= MAX_BUFFERED_ROWS) await this.endPage();
  }

  writesNext(): boolean {
    return this.#page.length + 1 >= MAX_BUFFERED_ROWS;
  }

  /** An empty page (e.g. the first of two queries) prints nothing and fixes no widths. */
  async endPage(): Promise<void> {
    await this.#writePage(false);
  }

  /** `last`: no row comes after these (end()), so the widths keep no room for one. */
  async #writePage(last: boolean): Promise<void> {
    const rows = this.#page;
    if (rows.length === 0) return;
    this.#page = [];
    let text = '';
    if (!this.#grid) {
      this.#grid = { ...this.#gridFor(rows, last || rows.length >= this.#most), Table: await tableLibrary() };
      // Said before the table, so that whoever reads its top knows columns are missing.
      if (this.#leftOut.length > 0) {
        this.#notice?.(`left out ${this.#leftOut.join(', ')} to fit ${this.#terminalColumns} columns: --columns picks the columns, -o tsv shows them all`);
      }
      if (this.#header) text += render(this.#grid.Table, [this.#grid.grid.layRow(this.#pick(this.#header), true)], await this.#style);
    }
    const { grid, Table } = this.#grid;
    text += render(
      Table,
      rows.map((row) => grid.layRow(this.#pick(row))),
    );
    await this.#sink.write(text);
  }

  /** An empty list prints nothing, not even the header: the caller says so on stderr. */
  async end(): Promise<void> {
    await this.#writePage(true);
    await this.#sink.end();
  }

  #pick(row: readonly string[]): string[] {
    return (this.#grid?.shown ?? []).map((index) => row[index] as string);
  }

  /** `whole`: these are all the rows, and no column keeps a reserve for later ones. */
  #gridFor(rows: readonly string[][], whole: boolean): { grid: Grid; shown: number[] } {
    const policies: ColumnPolicy[] = [];
    const measures = this.#columns.map((column, index) => {
      const cells = rows.map((row) => row[index] as string);
      const policy = { ...columnPolicy(column, cells, this.#wrap.has(column)), main: column === this.#main };
      const known = this.#known[column] ?? [];
      policies.push(policy);
      const last = index === this.#columns.length - 1;
      const measured =
        policy.wrap && last && this.#terminalColumns !== undefined ? cells.filter((cell) => displayWidth(cell, MIN_WRAP_WIDTH) <= MIN_WRAP_WIDTH) : cells;
      const values = widestCell(measured, MAX_CELL_WIDTH);
      return {
        header: this.#header ? displayWidth(this.#header[index] as string) : 0,
        values,
        // Not the first column: its ids are what a row is read by, mostly of one length. One whose
        // values the catalogue knows wants room for the longest of them.
        reserve: whole
          ? 0
          : known.length > 0
            ? Math.max(0, widestCell(known, MAX_CELL_WIDTH) - values)
            : index > 0 && policy.kind === 'key'
              ? Math.min(KEY_RESERVE_MAX, Math.ceil(values * KEY_RESERVE))
              : 0,
      };
    });
    const { shown, widths } = fitColumns(measures, policies, GAP, this.#terminalColumns);
    this.#leftOut = this.#columns.filter((_, index) => !shown.includes(index));
    return {
      grid: new Grid(
        widths,
        shown.map((index) => policies[index] as ColumnPolicy),
        this.#terminalColumns,
      ),
      shown,
    };
  }
}

export function createTableWriter(opts: WriterOptions): RecordWriter {
  // One record in table form is the describe view (create-writer.ts).
  return new ListTableWriter(opts);
}
