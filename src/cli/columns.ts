/** The columns of table/csv/tsv output and the fields asked for, from --columns and --fields. */
import { UsageError } from '../core/errors.js';
import { parseEnumList, parseList } from '../core/parse.js';
import type { ResourceSpec } from '../api/catalogue/index.js';
import { requestableFields } from '../api/query.js';
import type { Shape } from '../output/printer.js';

/** Every column a user may name for this resource: its fields, side-loaded keys and computed columns. */
export function columnNames(spec: ResourceSpec, shape: Shape): string[] {
  return ['id', 'url', ...requestableFields(spec, shape), ...(spec.sideColumns ?? []), ...(spec.computed ?? []).map((c) => c.name)];
}

/** `--fields LIST`, checked against the resource's field names. */
export function parseFieldsFlag(spec: ResourceSpec, shape: Shape, text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const known = ['id', 'url', ...requestableFields(spec, shape)];
  const fields = parseEnumList(text, '--fields', known);
  if (fields.length === 0) throw new UsageError(`--fields: needs at least one of ${known.join(', ')}`);
  return fields;
}

/**
 * The table/csv/tsv columns: `--columns`, else `id` plus `--fields`, else the defaults. Dotted
 * paths are checked on their first segment so a typo fails instead of printing an empty column.
 */
export function resolveColumns(known: readonly string[], defaults: readonly string[], columnsFlag: string | undefined, fields: string[] | undefined): string[] {
  if (columnsFlag === undefined) return fields ? [...new Set(['id', ...fields])] : [...defaults];
  const columns = parseList(columnsFlag);
  if (columns.length === 0) throw new UsageError(`--columns: needs at least one column; accepted: ${known.join(', ')}`);
  for (const column of columns) {
    const head = column.split('.')[0] ?? '';
    if (!known.includes(head)) throw new UsageError(`--columns: unknown column "${column}"; accepted: ${known.join(', ')} (dotted paths allowed)`);
  }
  return columns;
}
