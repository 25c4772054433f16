import { pathGetter } from './cells.js';
import type { ValueGetter } from './cells.js';
import { csvField } from './csv.js';
import { StreamSink } from '../core/stream-sink.js';
import { tsvField } from './tsv.js';
import type { RecordWriter, WriterOptions } from './types.js';

interface Dialect {
  separator: string;
  lineEnd: string;
  field(value: unknown): string;
}

/** csv and tsv: a header from the column list (never from the data), then one line per record. */
class DelimitedWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #dialect: Dialect;
  readonly #getters: ValueGetter[];
  /** Goes out with the first line, or alone at end() for an empty list. */
  #pendingHeader: string;

  constructor(opts: WriterOptions, dialect: Dialect) {
    this.#sink = new StreamSink(opts.out.stream, opts.signal, opts.out.file);
    this.#dialect = dialect;
    this.#getters = opts.columns.map(pathGetter);
    this.#pendingHeader = opts.header ? this.#line(opts.columns) : '';
  }

  // The sink's own promise, not one more async call per record (see StreamSink.write).
  write(record: Record<string, unknown>): Promise<void> {
    const line = this.#line(this.#getters.map((get) => get(record)));
    return this.#sink.write(this.#takeHeader() + line);
  }

  async endPage(): Promise<void> {
    await this.#sink.flush();
  }

  delivered(): number {
    return this.#sink.handled;
  }

  async end(): Promise<void> {
    const header = this.#takeHeader();
    if (header) await this.#sink.write(header);
    await this.#sink.end();
  }

  #line(values: unknown[]): string {
    const { field, separator, lineEnd } = this.#dialect;
    return values.map(field).join(separator) + lineEnd;
  }

  #takeHeader(): string {
    const header = this.#pendingHeader;
    this.#pendingHeader = '';
    return header;
  }
}

export function createCsvWriter(opts: WriterOptions): RecordWriter {
  return new DelimitedWriter(opts, {
    separator: ',',
    lineEnd: '\r\n',
    field: (value) => csvField(value, opts.escapeFormulas, opts.out.isTTY),
  });
}

export function createTsvWriter(opts: WriterOptions): RecordWriter {
  return new DelimitedWriter(opts, { separator: '\t', lineEnd: '\n', field: tsvField });
}
