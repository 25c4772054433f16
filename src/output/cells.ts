export type ValueGetter = (record: unknown) => unknown;

function childOf(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) return /^\d+$/.test(segment) ? value[Number(segment)] : undefined;
  // Own properties only: a column named 'constructor' must not reach Object.prototype.
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, segment)) {
    return (value as Record<string, unknown>)[segment];
  }
  return undefined;
}

/** Compiles a dotted path once, for use on every record. */
export function pathGetter(path: string): ValueGetter {
  const segments = path.split('.');
  return (record) => {
    let current = record;
    for (const segment of segments) {
      current = childOf(current, segment);
      if (current === undefined) return undefined;
    }
    return current;
  };
}

/** Dotted path lookup; numeric segments index arrays ('channels.0.name'). */
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
  if (Array.isArray(value)) return value.map(cellText).join(',');
  if (typeof value === 'object') {
    const { name, id } = value as { name?: unknown; id?: unknown };
    if (typeof name === 'string') return name;
    if (id !== undefined && id !== null) return cellText(id);
    return JSON.stringify(value);
  }
  return String(value);
}
