import { createCsvWriter, createTsvWriter } from './delimited.js';
import { createJsonWriter, createNdjsonWriter } from './json.js';
import { createTableWriter } from './table.js';
import type { Format, RecordWriter, WriterOptions } from './types.js';

const FACTORIES: Readonly<Record<Format, (opts: WriterOptions) => RecordWriter>> = {
  table: createTableWriter,
  json: createJsonWriter,
  ndjson: createNdjsonWriter,
  csv: createCsvWriter,
  tsv: createTsvWriter,
};

export function createWriter(format: Format, opts: WriterOptions): RecordWriter {
  return FACTORIES[format](opts);
}
