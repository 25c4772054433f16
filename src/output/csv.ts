import { cellText } from './cells.js';

/** OWASP CSV injection triggers, including the full-width forms some spreadsheets fold. */
const FORMULA_TRIGGER = /^[=+\-@\t\r\n＝＋－＠]/;
/** "-5" or "+1.5" is a number to a spreadsheet, not a formula: numbers stay numbers. */
const PLAIN_DECIMAL = /^[+-]?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

function looksLikeFormula(value: unknown, text: string): boolean {
  return (
    typeof value !== 'number' &&
    typeof value !== 'bigint' &&
    FORMULA_TRIGGER.test(text) &&
    !PLAIN_DECIMAL.test(text)
  );
}

/** One RFC 4180 field; a formula-like text cell gets a leading `'` when escapeFormulas. */
export function csvField(value: unknown, escapeFormulas: boolean): string {
  let text = cellText(value);
  if (escapeFormulas && looksLikeFormula(value, text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
