/** Escaping text for roff (man(7)), so that no input character is read as formatting. */

/**
 * Prose: backslashes and non-ASCII characters escaped, and dashes that start a word (options,
 * `-` for stdin, `-field` sort keys) written as the minus sign `\-`, which man readers search
 * for and copy as a plain ASCII hyphen. Hyphens inside words (non-priority) stay hyphens.
 */
export function text(value: string): string {
  return escapeCharacters(value).replace(/(^|[^\w\\])(-+)/g, (_match, before: string, dashes: string) => before + '\\-'.repeat(dashes.length));
}

/** Literal text to be typed as shown (commands, options): every dash is a minus sign. */
export function code(value: string): string {
  return escapeCharacters(value).replace(/-/g, '\\-');
}

/** `.B`, `.I` and other macro arguments: quoted, with quotes escaped. */
export function argument(value: string): string {
  return `"${value.replace(/"/g, '\\(dq')}"`;
}

/** A text line must not begin with a control character (`.` or `'`); `\&` is a zero-width guard. */
export function line(value: string): string {
  return /^[.']/.test(value) ? `\\&${value}` : value;
}

function escapeCharacters(value: string): string {
  let escaped = '';
  for (const character of value.replace(/\\/g, '\\e')) {
    const point = character.codePointAt(0) as number;
    if (point < 0x80) escaped += character;
    else escaped += `\\[u${point.toString(16).toUpperCase().padStart(4, '0')}]`;
  }
  return escaped;
}
