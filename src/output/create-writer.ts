import { createCsvWriter, createTsvWriter } from './delimited.js';
import { createJsonWriter, createNdjsonWriter } from './json.js';
import { createDescribeWriter } from './describe.js';
import { createTableWriter } from './table.js';
import type { Format, RecordWriter, WriterOptions } from './types.js';

const FACTORIES: Readonly<Record<Format, (opts: WriterOptions) => RecordWriter>> = {
  table: createTableWriter,
  json: createJsonWriter,
  ndjson: createNdjsonWriter,
  csv: createCsvWriter,
  tsv: createTsvWriter,
};

/** One record in table format reads as `key  value` lines (describe.ts), a list as a grid (table.ts). */
export function createWriter(format: Format, opts: WriterOptions): RecordWriter {
  if (format === 'table' && opts.shape === 'single') return createDescribeWriter(opts);
  return FACTORIES[format](opts);
}
