export { FORMATS } from './types.js';
export type { Format, RecordWriter, WriterOptions } from './types.js';
export { createWriter } from './create-writer.js';
export { valueAt, cellText } from './cells.js';
export { sanitizeForTerminal, safeJsonStringify } from './sanitize.js';
export { terminalMessage } from './text-width.js';
export { csvField } from './csv.js';
export { tsvField } from './tsv.js';
export { writeText } from '../core/stream-sink.js';
