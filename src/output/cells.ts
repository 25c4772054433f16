import { ExactNumber, stringifyJson } from '../core/exact-json.js';
export type ValueGetter = (record: unknown) => unknown;

const INDEX = /^\d+$/;

function childOf(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) return INDEX.test(segment) ? value[Number(segment)] : undefined;
  // Own properties only: a column named 'constructor' must not reach Object.prototype.
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, segment)) {
    return (value as Record<string, unknown>)[segment];
  }
  return undefined;
}

/**
 * Follows `segments` from `value`. A name segment on an array is taken from each element, the
 * way jq's `.tags[].name` is: 'tags.name' gives every tag's name, null where one has none (so
 * 'tags.id' and 'tags.name' line up), and nested arrays give one flat list. A numeric segment
 * picks one element ('channels.0.name').
 */
function follow(value: unknown, segments: string[], from: number): unknown {
  let current = value;
  for (let i = from; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (Array.isArray(current) && !INDEX.test(segment)) {
      return current.flatMap((element) => {
        const found = follow(element, segments, i);
        // One flat list through nested arrays: 'channels.owners.id' lists every owner's id.
        return found === undefined ? [null] : Array.isArray(found) ? found : [found];
      });
    }
    current = childOf(current, segment);
    if (current === undefined) return undefined;
  }
  return current;
}

/** Compiles a dotted path once, for use on every record. */
export function pathGetter(path: string): ValueGetter {
  const segments = path.split('.');
  return (record) => follow(record, segments, 0);
}

/** Dotted path lookup; numeric segments index arrays ('channels.0.name'), names map over them ('tags.name'). */
export function valueAt(record: unknown, path: string): unknown {
  return pathGetter(path)(record);
}

/**
 * Text of one table/csv/tsv cell: nothing for null, arrays joined with ',', and an embedded
 * object shown by its name, else its id, else compact JSON.
 */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value instanceof ExactNumber) return value.text;
  if (Array.isArray(value)) return value.map(cellText).join(',');
  if (typeof value === 'object') {
    const { name, id } = value as { name?: unknown; id?: unknown };
    if (typeof name === 'string') return name;
    if (id !== undefined && id !== null) return cellText(id);
    return stringifyJson(value) ?? '';
  }
  return String(value);
}

/**
 * A list-valued csv cell: a JSON array of its elements' cell texts (numbers stay numbers, an
 * empty list is `[]`, a missing value an empty cell), so values that hold commas split back
 * with any JSON parser (`json.loads`, DuckDB's `from_json`, SQLite's `json_each`).
 */
export function jsonListCell(values: readonly unknown[]): string {
  const element = (value: unknown): string =>
    value instanceof ExactNumber
      ? value.text
      : JSON.stringify(value === null || typeof value === 'number' || typeof value === 'boolean' ? value : cellText(value));
  return `[${values.map(element).join(',')}]`;
}
