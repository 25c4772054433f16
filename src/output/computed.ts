import type { ComputedColumn, RecordWriter } from './types.js';

/**
 * Adds the computed columns to each record before `writer` sees it, right after its id (where a
 * person reading one record looks first). The service's own field of the same name wins.
 */
export function withComputed(writer: RecordWriter, computed: readonly ComputedColumn[]): RecordWriter {
  if (computed.length === 0) return writer;
  return {
    write(record) {
      const added: Record<string, unknown> = {};
      for (const column of computed) if (!Object.hasOwn(record, column.name)) added[column.name] = column.from(record);
      const { id, ...rest } = record;
      return writer.write(id === undefined && !Object.hasOwn(record, 'id') ? { ...added, ...rest } : { id, ...added, ...rest });
    },
    endPage: () => writer.endPage(),
    end: () => writer.end(),
    // What the reader took: a stopped list resumes there.
    ...(writer.delivered && { delivered: writer.delivered.bind(writer) }),
    ...(writer.writesNext && { writesNext: writer.writesNext.bind(writer) }),
  };
}

/** Each record through `map` before `writer` sees it (what the user asked to write differently, as placeholders as null). */
export function withMapped(writer: RecordWriter, map: ((record: Record<string, unknown>) => Record<string, unknown>) | undefined): RecordWriter {
  if (!map) return writer;
  return {
    write: (record) => writer.write(map(record)),
    endPage: () => writer.endPage(),
    end: () => writer.end(),
    ...(writer.delivered && { delivered: writer.delivered.bind(writer) }),
    ...(writer.writesNext && { writesNext: writer.writesNext.bind(writer) }),
  };
}
