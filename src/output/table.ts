import { cellText, pathGetter } from './cells.js';
import type { ValueGetter } from './cells.js';
import { columnPolicy, columnWidths, widestCell } from './grid.js';
import type { ColumnPolicy } from './grid.js';
import { sanitizeForTerminal } from './sanitize.js';
import { StreamSink } from '../core/stream-sink.js';
import { boldWhen } from './style.js';
import type { RecordWriter, WriterOptions } from './types.js';
import { cutToWidth, displayWidth, trimTrailingSpaces, wrapToWidth } from './width.js';

/**
 * Borderless kubectl/gh-style tables: columns two spaces apart, upper-case header, no frame, no
 * trailing blanks. Laid out here, in time linear in what is shown: every cell is cut to what can
 * be shown before anything measures it.
 */
const GAP = 2;
/** Safety valve for callers that never call endPage(): a "page" ends here. */
const MAX_BUFFERED_ROWS = 1000;
/**
 * No cell is shown wider than this, on a terminal or off one (the rest is cut, marked with '…'):
 * what a table can usefully show, and the bound on what laying it out costs.
 */
export const MAX_CELL_WIDTH = 4096;
/** Columns whose cells wrap when WriterOptions.wrap is not given: `conversations update`'s messages. */
export const DEFAULT_WRAP_COLUMNS: readonly string[] = ['result'];

/** The terminal's width when stdout is one and says how wide it is. */
function terminalWidth(opts: WriterOptions): number | undefined {
  const { isTTY, columns } = opts.out;
  return isTTY && columns !== undefined && columns > 0 ? columns : undefined;
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
 * One grid: the widths fixed, each row laid out on it. A cell wider than its column is cut with
 * '…', or wrapped within the column when its column wraps; a key or fixed value is shown whole,
 * and the cells after it in that row make room (the row's next free-text cell is cut shorter), so
 * the following rows and columns stay on the grid.
 */
class Grid {
  readonly #widths: number[];
  readonly #starts: number[];
  readonly #policies: readonly ColumnPolicy[];
  /** How far the last column may reach: to the terminal's edge, or the cell bound off a terminal. */
  readonly #lastRight: number;

  constructor(widths: number[], policies: readonly ColumnPolicy[], terminalColumns: number | undefined) {
    this.#widths = widths;
    this.#policies = policies;
    let start = 0;
    this.#starts = widths.map((width) => {
      const at = start;
      start += width + GAP;
      return at;
    });
    const lastStart = this.#starts.at(-1) ?? 0;
    const lastWidth = widths.at(-1) ?? 0;
    this.#lastRight = terminalColumns ? Math.max(lastStart + lastWidth, terminalColumns) : lastStart + MAX_CELL_WIDTH;
  }

  /** One row as lines ending in '\n'; `style` (the header's bold) wraps each shown cell. */
  row(cells: readonly string[], header = false, style?: (text: string) => string): string {
    const first = new Line();
    /** Continuation lines of wrapped cells. */
    const more: Line[] = [];
    const last = cells.length - 1;
    for (let index = 0; index <= last; index++) {
      const text = cells[index] as string;
      if (text === '') continue;
      const policy = this.#policies[index] as ColumnPolicy;
      const gridStart = this.#starts[index] as number;
      const start = index === 0 ? 0 : Math.max(gridStart, first.end + GAP);
      const right = index === last ? this.#lastRight : gridStart + (this.#widths[index] as number);
      const room = Math.max(1, right - start);
      let shown: string;
      if (!header && policy.wrap && displayWidth(text, room) > room) {
        const [head = '', ...rest] = wrapToWidth(text, room);
        shown = head;
        rest.forEach((line, at) => {
          const continuation = (more[at] ??= new Line());
          continuation.put(gridStart, line, displayWidth(line));
        });
      } else {
        shown = !header && policy.keeps(text) ? text : cutToWidth(text, room);
      }
      first.put(start, style ? style(shown) : shown, displayWidth(shown));
    }
    return [first, ...more].map((line) => trimTrailingSpaces(line.text) + '\n').join('');
  }
}

/**
 * Rows of a list on one grid. The first window of rows (the first page, or MAX_BUFFERED_ROWS
 * rows without endPage()) fixes the columns' widths and policies; every later row is laid out on
 * them, so columns never move part-way down the output. Later rows go out a page at a time.
 */
class ListTableWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #columns: string[];
  readonly #getters: ValueGetter[];
  readonly #wrap: ReadonlySet<string>;
  readonly #header: string[] | undefined;
  readonly #style: Promise<((text: string) => string) | undefined>;
  readonly #terminalColumns: number | undefined;
  #page: string[][] = [];
  #grid: Grid | undefined;

  constructor(opts: WriterOptions) {
    this.#sink = new StreamSink(opts.out.stream, opts.signal);
    this.#columns = opts.columns;
    this.#getters = opts.columns.map(pathGetter);
    this.#wrap = new Set(opts.wrap ?? DEFAULT_WRAP_COLUMNS);
    this.#header = opts.header
      ? opts.columns.map((column) => cutToWidth(sanitizeForTerminal(column.toUpperCase()), MAX_CELL_WIDTH))
      : undefined;
    // Header names bold when colour is on (chalk is loaded only then).
    this.#style = opts.header && opts.color ? boldWhen(true) : Promise.resolve(undefined);
    this.#terminalColumns = terminalWidth(opts);
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

  /** An empty page (e.g. the first of two queries) prints nothing and fixes no widths. */
  async endPage(): Promise<void> {
    const rows = this.#page;
    if (rows.length === 0) return;
    this.#page = [];
    let text = '';
    if (!this.#grid) {
      this.#grid = this.#gridFor(rows);
      if (this.#header) text += this.#grid.row(this.#header, true, await this.#style);
    }
    for (const row of rows) text += this.#grid.row(row);
    await this.#sink.write(text);
  }

  /** An empty list prints nothing, not even the header: the caller says so on stderr. */
  async end(): Promise<void> {
    await this.endPage();
    await this.#sink.end();
  }

  #gridFor(rows: readonly string[][]): Grid {
    const policies: ColumnPolicy[] = [];
    const measures = this.#columns.map((column, index) => {
      const cells = rows.map((row) => row[index] as string);
      policies.push(columnPolicy(column, cells, this.#wrap.has(column)));
      return {
        header: this.#header ? displayWidth(this.#header[index] as string) : 0,
        values: widestCell(cells, MAX_CELL_WIDTH),
      };
    });
    return new Grid(columnWidths(measures, policies, GAP, this.#terminalColumns), policies, this.#terminalColumns);
  }
}

export function createTableWriter(opts: WriterOptions): RecordWriter {
  // One record in table form is the describe view (create-writer.ts).
  return new ListTableWriter(opts);
}
