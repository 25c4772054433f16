/** The `fields` parameter: which extra fields a reply carries besides id and url. */
import { HttpProblem } from './http.js';

export type Wire = Record<string, unknown>;

/**
 * Validated field names, or undefined when `fields` was not sent. id and url are always
 * accepted, since every record carries them anyway.
 */
export function parseFields(query: URLSearchParams, allowed: readonly string[], what: string): string[] | undefined {
  const values = query.getAll('fields');
  if (values.length === 0) return undefined;
  const names = values
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names) {
    if (name !== 'id' && name !== 'url' && !allowed.includes(name)) {
      throw new HttpProblem(400, `Unknown field '${name}' for ${what}; accepted: ${allowed.join(', ')}`);
    }
  }
  return names;
}

/** id and url plus the requested fields that the record has (absent optional fields stay absent). */
export function project(full: Wire, fields: readonly string[] | undefined, fullByDefault = false): Wire {
  if (fields === undefined && fullByDefault) return full;
  const out: Wire = { id: full['id'], url: full['url'] };
  for (const name of fields ?? []) if (name in full) out[name] = full[name];
  return out;
}
