import type { OutStream } from '../core/io.js';

export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'tsv'] as const;
export type Format = (typeof FORMATS)[number];

export interface WriterOptions {
  out: OutStream;
  /** json: array vs one object; table: rows vs one record described, a `KEY  value` line per field. */
  shape: 'list' | 'single';
  /** Dotted paths ('id', 'author.id', 'channels.0.name') for table/csv/tsv; json/ndjson print whole records. */
  columns: string[];
  /** csv/tsv/table header row (--no-header). */
  header: boolean;
  /** csv only (--no-escape-formulas turns it off). */
  escapeFormulas: boolean;
  /** Bold table header; only when true. */
  color: boolean;
  /** A stop signal: a write waiting for a reader that is not reading gives up (InterruptedError). */
  signal?: AbortSignal;
  /**
   * table: columns whose cells wrap within the column instead of being cut with '…', keeping
   * the whole text on the grid. Default: ['result'] (the update command's messages).
   */
  wrap?: string[];
  /** table, one record: every field of the record rather than `columns` (`get` without --columns). */
  everyField?: boolean;
  /**
   * table: every value the catalogue knows a column can hold (a status enum), by column name: the
   * column keeps room for the widest, so a later page's longer code stays on the grid.
   */
  known?: Readonly<Record<string, readonly string[]>>;
  /** table: the most rows there can be (--limit): a first window that holds them all keeps no room for later ones. */
  most?: number;
  /** table: the column the rows are read for (a message's text): kept, and given a third of a terminal, before the others. */
  main?: string;
  /** Where a notice goes (stderr, unless --quiet): a table names the columns a terminal had no room for. */
  notice?: (message: string) => void;
}

/**
 * A column the service does not send, computed from a record's fields (a report's state). Shown by
 * table, csv and tsv like any column; json and ndjson print records as the service sent them.
 */
export interface ComputedColumn {
  readonly name: string;
  from(record: Readonly<Record<string, unknown>>): unknown;
}

export interface RecordWriter {
  /**
   * Resolves once the record is accepted by the stream (waits for 'drain' under backpressure),
   * or, into a regular file, once it is gathered for its page's write.
   */
  write(record: Record<string, unknown>): Promise<void>;
  /** Page boundary: the table writer lays out and writes its page here; into a regular file the others write the page's lines. */
  endPage(): Promise<void>;
  /**
   * How many records the stream has handed on to the system, for writers that write each record
   * at once: after a stop, the records a resumed run must not repeat. Undefined: all written.
   */
  delivered?(): number;
  /**
   * Whether the next write() puts anything on the stream (a table only gathers its page): a live
   * line on the same terminal steps aside only then. Undefined: it may.
   */
  writesNext?(): boolean;
  /** Finishes the document (json closing bracket, pending table rows). Never ends the underlying stream. */
  end(): Promise<void>;
}
