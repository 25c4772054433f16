import { cellText } from './cells.js';
import { escapeTsvText } from './sanitize.js';

/** One tsv field: never a raw tab, newline or other control character. */
export function tsvField(value: unknown): string {
  return escapeTsvText(cellText(value));
}
