/**
 * `--columns` for json and ndjson (as gh's `--json fields`): each record keeps only the listed
 * paths, a dotted path as nested keys (`author.id` → `{"author": {"id": …}}`). A name segment on
 * an array keeps that key of every element (`tags.name` → `{"tags": [{"name": …}, …]}`), a
 * numeric one the elements picked, in the order named (`channels.0.name` → `{"channels":
 * [{"name": …}]}`). A key the record lacks is null, so every record has the same keys.
 */
import type { RecordWriter } from './types.js';

/** The paths as a tree of keys; 'all' keeps the whole value (a shorter path wins: `author,author.id` is `author`). */
type PathTree = Map<string, PathTree | 'all'>;

const INDEX = /^\d+$/;

function pathTree(columns: readonly string[]): PathTree {
  const root: PathTree = new Map();
  for (const column of columns) {
    const segments = column.split('.');
    let node = root;
    for (const [i, segment] of segments.entries()) {
      const child = node.get(segment);
      if (child === 'all') break;
      if (i === segments.length - 1) node.set(segment, 'all');
      else if (child) node = child;
      else node.set(segment, (node = new Map()));
    }
  }
  return root;
}

function pick(value: unknown, tree: PathTree | 'all'): unknown {
  if (tree === 'all' || value === undefined || value === null) return value ?? null;
  if (Array.isArray(value)) {
    const keys = [...tree.keys()];
    if (keys.every((key) => INDEX.test(key))) {
      return keys.filter((key) => Number(key) < value.length).map((key) => pick(value[Number(key)], tree.get(key)!));
    }
    return value.map((element) => pick(element, tree));
  }
  if (typeof value !== 'object') return null;
  const kept: Record<string, unknown> = {};
  for (const [key, sub] of tree) {
    const picked = Object.hasOwn(value, key) ? pick((value as Record<string, unknown>)[key], sub) : null;
    // Defined, not assigned: a path segment named __proto__ is a key like any other.
    Object.defineProperty(kept, key, { value: picked, enumerable: true, writable: true, configurable: true });
  }
  return kept;
}

/** A function keeping only `columns` of a record. */
export function projector(columns: readonly string[]): (record: Record<string, unknown>) => Record<string, unknown> {
  const tree = pathTree(columns);
  return (record) => pick(record, tree) as Record<string, unknown>;
}

/** `writer`, given only the `columns` of each record. */
export function withProjection(writer: RecordWriter, columns: readonly string[]): RecordWriter {
  const project = projector(columns);
  return {
    write: (record) => writer.write(project(record)),
    endPage: () => writer.endPage(),
    end: () => writer.end(),
    ...(writer.delivered && { delivered: writer.delivered.bind(writer) }),
    ...(writer.writesNext && { writesNext: writer.writesNext.bind(writer) }),
  };
}
