import { cellText, jsonListCell } from './cells.js';
import { escapeTsvText } from './sanitize.js';

/**
 * One tsv field: never a raw tab, newline or other control character. A list is a JSON array,
 * as in csv, so values that hold commas split back exactly.
 */
export function tsvField(value: unknown): string {
  return escapeTsvText(Array.isArray(value) ? jsonListCell(value) : cellText(value));
}
