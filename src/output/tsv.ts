import { cellText, jsonListCell } from './cells.js';
import { escapeJsonText, escapeTsvText } from './sanitize.js';

/**
 * One tsv field: never a raw tab, newline or other control character. A list is a JSON array,
 * as in csv, so values that hold commas split back exactly; its JSON text goes in as it is (JSON
 * escapes tabs, newlines and controls itself), so `cut -f N | jq` reads it.
 */
export function tsvField(value: unknown): string {
  return Array.isArray(value) ? escapeJsonText(jsonListCell(value)) : escapeTsvText(cellText(value));
}
