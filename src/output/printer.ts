/**
 * The output policy, decided in one place (as kubectl's PrintFlags): which writer a format
 * gets, which fields it needs from the service, the csv/tsv header that a continued (--resume)
 * run leaves out, and how records read on a terminal.
 */
import type { OutStream } from '../core/io.js';
import type { Shape } from '../catalogue/index.js';
import { createBlockWriter, type BlockWriter } from './blocks.js';
import { withComputed, withMapped } from './computed.js';
import { createWriter } from './create-writer.js';
import { withProjection } from './project.js';
import { createQueryWriter, type Query } from './query.js';
import type { ComputedColumn, Format, RecordWriter } from './types.js';

export interface PrinterSettings {
  out: OutStream;
  /** --no-header turns it off. */
  header: boolean;
  escapeFormulas: boolean;
  color: boolean;
  /** Ctrl-C: a writer waiting for a reader that is not reading gives up. */
  signal: AbortSignal;
  /** --columns was given: json and ndjson keep only those keys of each record. */
  project?: boolean;
  /** Notices on stderr (a table's columns left out on a narrow terminal). */
  notice?: (message: string) => void;
  /** Each record as it is to be written (--placeholders null), before any writer sees it. */
  map?: (record: Record<string, unknown>) => Record<string, unknown>;
  /** --query: json's document goes through it (format json). */
  query?: Query;
}

export interface WriterChoices {
  /** The header the output being continued already starts with (from a resume token); not written twice. */
  continues?: string | undefined;
  /** Columns computed from the record (a report's state), for the formats that show columns. */
  computed?: readonly ComputedColumn[] | undefined;
  /** The user chose what to show (--columns or --fields): one record in table form shows those, not every field. */
  picked?: boolean;
  /** table: the values the catalogue knows a column can hold (WriterOptions.known). */
  known?: Readonly<Record<string, readonly string[]>>;
  /** table: the most rows there can be (WriterOptions.most). */
  most?: number | undefined;
  /** table: the column the rows are read for (WriterOptions.main). */
  main?: string;
}

export class Printer {
  constructor(
    readonly format: Format,
    private readonly settings: PrinterSettings,
  ) {}

  /** json and ndjson print records as the service sent them (the --columns keys only, when given). */
  get wholeRecords(): boolean {
    return this.format === 'json' || this.format === 'ndjson';
  }

  /**
   * Whether the service must be asked for every field rather than the shown columns': json and
   * ndjson print whole records unless --columns picks keys, and one record in table form (`get`)
   * shows every field unless the user picked what to show.
   */
  needsAllFields(shape: Shape, picked: boolean): boolean {
    return (this.wholeRecords && !this.settings.project) || (this.format === 'table' && shape === 'single' && !picked);
  }

  /**
   * The header this output starts with that a run continuing it must leave out: csv and tsv are
   * made to be continued with >>. undefined for other formats, or with --no-header.
   */
  get continuableHeader(): string | undefined {
    return (this.format === 'csv' || this.format === 'tsv') && this.settings.header ? this.format : undefined;
  }

  /** A writer for records of this shape. */
  writer(shape: Shape, columns: string[], choices: WriterChoices = {}): RecordWriter {
    const continued = choices.continues !== undefined && choices.continues === this.continuableHeader;
    const { map, query, ...settings } = this.settings;
    const options = {
      ...settings,
      shape,
      columns,
      header: this.settings.header && !continued,
      everyField: this.needsAllFields(shape, choices.picked === true),
      ...(choices.known ? { known: choices.known } : {}),
      ...(choices.most !== undefined ? { most: choices.most } : {}),
      ...(choices.main ? { main: choices.main } : {}),
    };
    return withMapped(this.columnsWriter(query ? createQueryWriter(options, query) : createWriter(this.format, options), columns, choices), map);
  }

  /** `writer` with the computed columns, and for json/ndjson with --columns, only those keys. */
  private columnsWriter(writer: RecordWriter, columns: string[], choices: WriterChoices): RecordWriter {
    if (!this.wholeRecords) return withComputed(writer, choices.computed ?? []);
    return this.settings.project ? withComputed(withProjection(writer, columns), choices.computed ?? []) : writer;
  }

  /**
   * Records that are text to read (a conversation's thread) as blocks of wrapped text: in table
   * form on a terminal, unless the user picked columns. undefined: rows, as for any list.
   */
  blockWriter(picked: boolean): BlockWriter | undefined {
    if (this.format !== 'table' || !this.settings.out.isTTY || picked) return undefined;
    return createBlockWriter(this.settings.out, this.settings.color, this.settings.signal);
  }
}
