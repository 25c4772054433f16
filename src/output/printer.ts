/**
 * The output policy, decided in one place (as kubectl's PrintFlags): which writer a format
 * gets, whether it prints whole records (and so needs every field from the service), and the
 * csv/tsv header that a continued (--resume) run leaves out.
 */
import type { OutStream } from '../core/io.js';
import { createWriter } from './create-writer.js';
import type { Format, RecordWriter } from './types.js';

export interface PrinterSettings {
  out: OutStream;
  /** --no-header turns it off. */
  header: boolean;
  escapeFormulas: boolean;
  color: boolean;
  /** Ctrl-C: a writer waiting for a reader that is not reading gives up. */
  signal: AbortSignal;
}

export class Printer {
  constructor(
    readonly format: Format,
    private readonly settings: PrinterSettings,
  ) {}

  /** json and ndjson print whole records: the service is asked for every field, not the columns'. */
  get wholeRecords(): boolean {
    return this.format === 'json' || this.format === 'ndjson';
  }

  /**
   * The header this output starts with that a run continuing it must leave out: csv and tsv are
   * made to be continued with >>. undefined for other formats, or with --no-header.
   */
  get continuableHeader(): string | undefined {
    return (this.format === 'csv' || this.format === 'tsv') && this.settings.header ? this.format : undefined;
  }

  /**
   * A writer for records of this shape. `continues`: the header the output being continued
   * already starts with (from a resume token); the same header is not written twice.
   */
  writer(shape: 'list' | 'single', columns: string[], { continues }: { continues?: string | undefined } = {}): RecordWriter {
    const continued = continues !== undefined && continues === this.continuableHeader;
    return createWriter(this.format, { ...this.settings, shape, columns, header: this.settings.header && !continued });
  }
}
