import { safeJsonStringify } from './sanitize.js';
import { StreamSink } from '../core/stream-sink.js';
import type { RecordWriter, WriterOptions } from './types.js';

/** Writes each record as its own complete document (ndjson lines, a pretty json object). */
class DocumentPerRecordWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #render: (record: Record<string, unknown>) => string;

  constructor(sink: StreamSink, render: (record: Record<string, unknown>) => string) {
    this.#sink = sink;
    this.#render = render;
  }

  // The sink's own promise, not one more async call per record (see StreamSink.write).
  write(record: Record<string, unknown>): Promise<void> {
    return this.#sink.write(this.#render(record));
  }

  async endPage(): Promise<void> {
    await this.#sink.flush();
  }

  delivered(): number {
    return this.#sink.handled;
  }

  async end(): Promise<void> {
    await this.#sink.end();
  }
}

/** A pretty-printed JSON array, streamed: the opening bracket goes out with the first record. */
class JsonArrayWriter implements RecordWriter {
  readonly #sink: StreamSink;
  #count = 0;

  constructor(sink: StreamSink) {
    this.#sink = sink;
  }

  write(record: Record<string, unknown>): Promise<void> {
    // Inside a one-element array JSON.stringify indents the record as an element: `[\n` and `\n]` cut off, no second pass.
    const element = safeJsonStringify([record], 2).slice(2, -2);
    const separator = this.#count === 0 ? '[\n' : ',\n';
    this.#count += 1;
    return this.#sink.write(separator + element);
  }

  async endPage(): Promise<void> {
    await this.#sink.flush();
  }

  delivered(): number {
    return this.#sink.handled;
  }

  async end(): Promise<void> {
    await this.#sink.write(this.#count === 0 ? '[]\n' : '\n]\n');
    await this.#sink.end();
  }
}

export function createJsonWriter(opts: WriterOptions): RecordWriter {
  const sink = new StreamSink(opts.out.stream, opts.signal, opts.out.file);
  if (opts.shape === 'list') return new JsonArrayWriter(sink);
  return new DocumentPerRecordWriter(sink, (record) => safeJsonStringify(record, 2) + '\n');
}

export function createNdjsonWriter(opts: WriterOptions): RecordWriter {
  return new DocumentPerRecordWriter(new StreamSink(opts.out.stream, opts.signal, opts.out.file), (record) => safeJsonStringify(record) + '\n');
}
