import { ExactNumber } from '../core/exact-json.js';
import { cellText, jsonListCell } from './cells.js';
import { sanitizeForTerminal } from './sanitize.js';

/**
 * OWASP CSV injection triggers, including the full-width forms some spreadsheets fold (＝＋－＠,
 * escaped: one character beyond ASCII made V8 hold the whole bundle as two-byte text).
 */
const FORMULA_TRIGGER = /^[=+\-@\t\r\n\uFF1D\uFF0B\uFF0D\uFF20]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * A text cell starting with a trigger, as the contract says: a string "-5" too (the service sent
 * text, and the spreadsheet shows it as text). JSON numbers stay numbers.
 */
function looksLikeFormula(value: unknown, text: string): boolean {
  return typeof value !== 'number' && !(value instanceof ExactNumber) && FORMULA_TRIGGER.test(text);
}

/**
 * One RFC 4180 field (a list a JSON array, see jsonListCell); a formula-like text cell gets a leading `'` when escapeFormulas. For a
 * terminal, control characters are shown escaped (as in table and tsv): nobody parses a screen,
 * and escape sequences in the data must not act on it.
 */
export function csvField(value: unknown, escapeFormulas: boolean, forTerminal = false): string {
  let text = Array.isArray(value) ? jsonListCell(value) : cellText(value);
  if (escapeFormulas && looksLikeFormula(value, text)) text = `'${text}`;
  if (forTerminal) text = sanitizeForTerminal(text);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
