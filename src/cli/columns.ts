/**
 * The columns of table/csv/tsv output and the fields asked for, from --columns and --fields; and
 * what --columns takes at each command that prints records (`help columns`, `--columns help`).
 */
import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { closestWord } from '../core/closest.js';
import { parseEnumList, parseList } from '../core/parse.js';
import { CONTENT_ROWS, FIELD_PATHS, RESOURCES, type ResourceSpec, type Shape } from '../catalogue/index.js';
import { requestableFields } from './query-params.js';
import { hangingLines, wrapText } from '../output/text-width.js';

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
    if (known.includes(head)) continue;
    const closest = closestWord(head, known);
    const offer = closest === undefined ? '' : ` (closest: ${[closest, ...column.split('.').slice(1)].join('.')})`;
    throw new UsageError(`--columns: unknown column "${column}"${offer}; accepted: ${known.join(', ')} (dotted paths allowed; --columns help lists them)`);
  }
  return columns;
}

/** What --columns takes where records are printed: the columns, those shown without it, and a word on those that are not always there. */
export interface ColumnSet {
  /** The commands that print them: `tags list and get`. */
  of: string;
  /** Each column, followed by the dotted paths inside it that are known (`author`, `author.id`, `author.url`). */
  columns: readonly string[];
  defaults: readonly string[];
  /** Said of a column and the paths inside it, or of one path. */
  notes: Readonly<Record<string, string>>;
  /** The paragraph after the list: what a dotted path takes there. */
  closing: string;
  /** What completion offers where fewer are taken than listed (a list: not the fields of a get only); made only for the scripts. */
  offered?: () => readonly string[];
}

const OFFERED = new WeakMap<Command, ColumnSet>();

/**
 * Declares what --columns takes at a command: its action reads it (`--columns help`, and that the
 * command takes --columns at all), the completion scripts offer its columns. One set, where the command is made.
 */
export function offerColumns(command: Command, set: ColumnSet): Command {
  OFFERED.set(command, set);
  return command;
}

export function columnsOf(command: Command): ColumnSet | undefined {
  return OFFERED.get(command);
}

/** What a dotted path takes in the records of the service. */
const SERVICE_PATHS =
  "A dotted path reaches inside a field: on a list it takes each element's (tags.name), a number picks one (channels.0.name); any path inside a column above is taken as the service sends the field.";

/** A resource's columns, from its description: a field of the single reply only, a side-loaded key and a computed column say so. */
export function resourceColumns(spec: ResourceSpec): ColumnSet {
  const notes = [
    ...(spec.singleFields ?? []).map((field) => [field, 'get only']),
    ...(spec.sideColumns ?? []).map((key) => [key, 'with --include']),
    ...(spec.computed ?? []).map((column) => [column.name, `made by carectl from ${column.needs.join(', ')}`]),
  ];
  return {
    of: `${spec.name} ${spec.verbs.join(' and ')}`,
    columns: withPaths(columnNames(spec, spec.verbs.includes('get') ? 'single' : 'list')),
    defaults: spec.defaultColumns,
    notes: Object.fromEntries(notes),
    closing: SERVICE_PATHS,
  };
}

export const CONTENT_COLUMNS: ColumnSet = {
  of: 'conversations content',
  columns: withPaths(CONTENT_ROWS.columns),
  defaults: CONTENT_ROWS.defaultColumns,
  notes: {},
  closing: SERVICE_PATHS,
};

/** `help columns RESOURCE`: every resource by its name, and `content` for the rows of `conversations content`. */
export const COLUMN_SETS: ReadonlyMap<string, ColumnSet> = new Map([
  ...RESOURCES.map((spec) => [spec.name, resourceColumns(spec)] as const),
  ['content', CONTENT_COLUMNS],
]);

/** Each column followed by the dotted paths inside it that the catalogue knows (`author`, `author.id`, `author.url`). */
export function withPaths(columns: readonly string[]): string[] {
  return columns.flatMap((column) => [column, ...(FIELD_PATHS[column] ?? []).map((path) => `${column}.${path}`)]);
}

/** The text of `help columns` for one set: a column or path a line, wrapped to `width`. */
export function columnsHelp(set: ColumnSet, width: number): string {
  const names = set.columns;
  const column = Math.max(...names.map((name) => name.length)) + 4;
  const rows = names.map((name) => {
    // A path inside a column is there when the column is.
    const said = set.notes[name] ?? set.notes[name.split('.')[0] ?? name];
    const note = [...(set.defaults.includes(name) ? ['default'] : []), ...(said ? [said] : [])].join('; ');
    const beside = hangingLines(`  ${name.padEnd(column - 2)}`, note, width, column);
    // Too narrow a terminal for the note beside the column's name: under it.
    const lines = beside.every((line) => line.length <= width) ? beside : [`  ${name}`, ...wrapText(note, width - 6).map((line) => `      ${line}`)];
    return lines.join('\n');
  });
  const paragraph = (text: string): string => wrapText(text, width).join('\n');
  return [
    paragraph(`The columns of ${set.of}, for --columns LIST (comma-separated); those marked default are shown without it.`),
    '',
    ...rows,
    '',
    ...(set.closing === '' ? [] : [paragraph(set.closing), '']),
  ].join('\n');
}
