/**
 * How a list table's columns get their widths: measured once, on the first window of rows, and
 * kept for the whole output (one grid). Fitting a terminal cuts free text; ids and other short
 * identifiers, numbers, booleans and dates are never cut.
 */
import { cutToWidth, displayWidth } from './width.js';

/**
 * - key: `id`, `*.id`, `*_id`, and columns whose every value is a short identifier (a code such
 *   as `on_hold`, `C-1042`, a UUID): values never cut.
 * - fixed: numbers, booleans and dates: values never cut either (their natural width).
 * - text: free text (names, tags, messages …): shrinks first to fit a terminal, cut with '…'.
 * - empty: no value in the first window: only as wide as its header.
 */
export type ColumnKind = 'key' | 'fixed' | 'text' | 'empty';

export interface ColumnPolicy {
  kind: ColumnKind;
  /** Cells wider than the column wrap within it instead of being cut (WriterOptions.wrap). */
  wrap: boolean;
  /** Whether a cell's text is shown whole even when wider than its column (on a line of its own then). */
  keeps(text: string): boolean;
  /** The column the rows are read for (a message's text): kept, and given a third of a terminal, before the others. */
  main?: boolean;
}

/**
 * On a terminal, a wrapped column narrower than this puts its longer cells under their row
 * instead (words stay whole). As the last column it is measured by its cells no wider than
 * this, so the columns before it keep their room, and reaches the terminal's edge.
 */
export const MIN_WRAP_WIDTH = 24;

/** Fitting to a terminal never shrinks a text column below this (a narrower one stays as it is). */
export const MIN_SHRUNK_WIDTH = 6;

/**
 * A header over narrower values is shortened to no fewer columns than this (`PRIOR…` over `true`,
 * `ACTIVE` over `false`) while free text can still be cut, and to LEAST_HEADER_WIDTH only where a
 * column would otherwise be left out.
 */
const MIN_HEADER_WIDTH = 6;

const KEY_NAME = /(?:^|[._])id$/i;
/** The free text the contract names, by the last part of the column's name. */
const TEXT_NAME =
  /(?:^|[._])(?:names?|titles?|subjects?|tags?|labels?|messages?|texts?|descriptions?|body|bodies|notes?|comments?|contents?|summary|reasons?|result)$/i;
const SHORT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@#-]{0,39}$/;
const NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[-+]\d{2}(?::?\d{2})?)?)?$/;

function isFixedValue(text: string): boolean {
  return text === 'true' || text === 'false' || NUMBER.test(text) || DATE.test(text);
}

function isShortId(text: string): boolean {
  return SHORT_ID.test(text);
}

const always = (): boolean => true;
const never = (): boolean => false;

/** The policy of column `name` from its name and its cells in the first window. */
export function columnPolicy(name: string, cells: readonly string[], wrap: boolean): ColumnPolicy {
  if (KEY_NAME.test(name)) return { kind: 'key', wrap, keeps: always };
  const values = cells.filter((cell) => cell !== '');
  if (values.length === 0) return { kind: 'empty', wrap, keeps: never };
  if (!TEXT_NAME.test(name) && !wrap) {
    if (values.every(isFixedValue)) return { kind: 'fixed', wrap, keeps: isFixedValue };
    if (values.every(isShortId)) return { kind: 'key', wrap, keeps: isShortId };
  }
  return { kind: 'text', wrap, keeps: never };
}

export interface ColumnMeasure {
  /** Columns the header takes (0 without a header). */
  header: number;
  /** Columns the widest cell of the first window takes (bounded). */
  values: number;
  /**
   * Columns wanted beyond `values`: a later id one digit or a few letters longer than the first
   * window's, or the longest status there is, stays on the grid. Given off a terminal, and on one
   * before free text or a header keeps its width, as far as the room above the columns' floors
   * goes, left to right; it counts when deciding which columns fit (but for the last column's).
   */
  reserve?: number;
}

/** The widest of `cells` in columns, counting no further than `limit`. */
export function widestCell(cells: readonly string[], limit: number): number {
  let widest = 0;
  for (const cell of cells) widest = Math.max(widest, Math.min(limit, displayWidth(cell, limit)));
  return widest;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * Lowers the columns, widest first, until the widths fit `budget` or every column is at its
 * floor. Lowering the widest first is capping them all at one limit, so
 * this finds the largest limit that fits; the few columns the rounding leaves go back to the
 * capped columns, left to right.
 */
function shrink(widths: number[], floors: readonly number[], budget: number): number[] {
  const capped = (limit: number): number[] => widths.map((width, index) => Math.max(Math.min(floors[index] as number, width), Math.min(width, limit)));
  if (sum(widths) <= budget) return widths;
  let low = 0;
  let high = Math.max(0, ...widths);
  const fitted = capped(low);
  if (sum(fitted) > budget) return fitted;
  // Invariant: capped(low) fits, capped(high) does not.
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (sum(capped(middle)) <= budget) low = middle;
    else high = middle;
  }
  const result = capped(low);
  let spare = budget - sum(result);
  return result.map((width, index) => {
    if (spare === 0 || width !== low || width >= (widths[index] as number)) return width;
    spare -= 1;
    return width + 1;
  });
}

/** The main column (ColumnPolicy.main) is not shrunk below this share of a terminal. */
const MAIN_SHARE = 1 / 3;

/** A header over narrower values is cut to no fewer columns than this (`PR…`), rather than a column left out. */
const LEAST_HEADER_WIDTH = 3;

/**
 * Below these widths a column is not shrunk: free text to MIN_SHRUNK_WIDTH (the main column to a
 * third of the terminal), a key or fixed value never below its values, its header to `headerLeast`.
 */
function floorsOf(measures: readonly ColumnMeasure[], policies: readonly ColumnPolicy[], terminalColumns: number, headerLeast: number): number[] {
  return measures.map(({ header, values }, index) => {
    const width = Math.max(1, header, values);
    const policy = policies[index] as ColumnPolicy;
    if (policy.main) return Math.min(width, Math.max(MIN_SHRUNK_WIDTH, Math.floor(terminalColumns * MAIN_SHARE)));
    if (policy.kind === 'text') return Math.min(width, MIN_SHRUNK_WIDTH);
    // A key or fixed value is never cut; its header gives way to its short form (shortHeader) instead.
    return Math.max(1, values, Math.min(header, values === 0 ? MIN_SHRUNK_WIDTH : headerLeast));
  });
}

/**
 * The floors of a first fitting pass: free text keeps its natural width while the headers wider
 * than their key or fixed values give way, so `IS_PRIORITY` over `true` becomes `PRIOR…` before a
 * channel's name is cut.
 */
function headersFirst(natural: readonly number[], floors: readonly number[], policies: readonly ColumnPolicy[]): number[] {
  return floors.map((floor, index) => ((policies[index] as ColumnPolicy).kind === 'text' ? (natural[index] as number) : floor));
}

/**
 * `floors` raised by the reserves of the columns but the last (it reaches the terminal's edge),
 * left to right, as far as the room above them in `budget` goes.
 */
function withReserves(floors: readonly number[], measures: readonly ColumnMeasure[], budget: number): number[] {
  let room = budget - sum(floors);
  const last = floors.length - 1;
  return floors.map((floor, index) => {
    const { values, reserve = 0 } = measures[index] as ColumnMeasure;
    const more = reserve > 0 && index < last ? Math.max(0, Math.min(room, values + reserve - floor)) : 0;
    room -= more;
    return floor + more;
  });
}

/**
 * The widths of the columns: natural (the header and the widest cell of the first window), off a
 * terminal with the reserve. Fitted to `terminalColumns`, a column is as wide as what it shows
 * and its reserve; what gives way, widest first: the blank part under a header wider than its key
 * or fixed values (down to MIN_HEADER_WIDTH of the header), free text (down to MIN_SHRUNK_WIDTH),
 * then those headers again, down to LEAST_HEADER_WIDTH, where fitColumns kept a column only so.
 * The reserves are given before that, as far as they fit, the rest of them out of the room left.
 */
export function columnWidths(
  measures: readonly ColumnMeasure[],
  policies: readonly ColumnPolicy[],
  gap: number,
  terminalColumns: number | undefined,
): number[] {
  const natural = measures.map(({ header, values }) => Math.max(1, header, values));
  if (!terminalColumns) {
    return natural.map((width, index) => {
      const { values, reserve = 0 } = measures[index] as ColumnMeasure;
      return Math.max(width, values + reserve);
    });
  }
  const budget = terminalColumns - gap * (natural.length - 1);
  const kept = withReserves(floorsOf(measures, policies, terminalColumns, LEAST_HEADER_WIDTH), measures, budget);
  const floors = floorsOf(measures, policies, terminalColumns, MIN_HEADER_WIDTH).map((floor, index) => Math.max(floor, kept[index] as number));
  const wanted = natural.map((width, index) => Math.max(width, kept[index] as number));
  const fitted = shrink(shrink(shrink(wanted, headersFirst(wanted, floors, policies), budget), floors, budget), kept, budget);
  // The rest comes out of the room no column needs (the last one reaches the edge), left to right.
  const last = fitted.length - 1;
  // A wrapped last column keeps the room to wrap in.
  let spare = Math.max(0, budget - sum(fitted) - ((policies[last] as ColumnPolicy).wrap ? Math.max(0, MIN_WRAP_WIDTH - (fitted[last] as number)) : 0));
  return fitted.map((width, index) => {
    const { values, reserve = 0 } = measures[index] as ColumnMeasure;
    const wanted = index === last ? 0 : Math.min(spare, Math.max(0, values + reserve - width));
    spare -= wanted;
    return width + wanted;
  });
}

export interface FittedColumns {
  /** Which columns are shown (indices, in order): all of them, unless the terminal is too narrow. */
  shown: number[];
  /** The widths of the shown columns. */
  widths: number[];
}

/**
 * The columns a terminal has room for, and their widths: when even the ids, identifiers, dates
 * and the shortest free text do not fit, columns are left out from the right (never the first,
 * nor the main column: what the rows are read for), rather than a line wider than the terminal.
 */
export function fitColumns(
  measures: readonly ColumnMeasure[],
  policies: readonly ColumnPolicy[],
  gap: number,
  terminalColumns: number | undefined,
): FittedColumns {
  let shown = measures.map((_, index) => index);
  if (terminalColumns) {
    // What a column shows, its header cut as far as it goes. A reserve counts, but for the last
    // column's (it reaches the edge): a later, longer id or status then still stands on the grid.
    const floors = floorsOf(measures, policies, terminalColumns, LEAST_HEADER_WIDTH);
    const least = (index: number, at: number): number => (floors[index] as number) + (at < shown.length - 1 ? (measures[index]?.reserve ?? 0) : 0);
    const fits = (): boolean => sum(shown.map(least)) + gap * (shown.length - 1) <= terminalColumns;
    const natural = measures.map(({ header, values }) => Math.max(1, header, values));
    const crowded = sum(natural) + gap * (natural.length - 1) > terminalColumns;
    // Columns with no value in the first window go first: they would take room from text that has some.
    if (crowded) shown = shown.filter((index) => index === 0 || (measures[index] as ColumnMeasure).values > 0);
    while (shown.length > 1 && !fits()) {
      const out = shown.findLastIndex((index, at) => at > 0 && !(policies[index] as ColumnPolicy).main);
      shown = shown.filter((_, at) => at !== (out < 0 ? shown.length - 1 : out));
    }
  }
  const pick = <T>(items: readonly T[]): T[] => shown.map((index) => items[index] as T);
  return { shown, widths: columnWidths(pick(measures), pick(policies), gap, terminalColumns) };
}

/** What a header drops, in this order, before it is cut: a predicate's `IS_`, and a reference's `.ID`. */
const HEADER_PREFIX = /^(?:IS|HAS|CONTAINS)_(?=.)/;
const HEADER_SUFFIX = /(?<=.)[._]ID$/;

/**
 * A header in `width` columns (help formats documents it): whole where it fits, else without its
 * `IS_`/`HAS_`/`CONTAINS_` prefix and `.ID`/`_ID` suffix (`IS_PRIORITY` → `PRIORITY`,
 * `ASSIGNED_TO.ID` → `ASSIGNED_TO`), cut with '…' where that still does not fit.
 */
export function shortHeader(header: string, width: number): string {
  if (displayWidth(header) <= width) return header;
  const short = header.replace(HEADER_PREFIX, '').replace(HEADER_SUFFIX, '');
  return displayWidth(short) <= width ? short : cutToWidth(short, width);
}
