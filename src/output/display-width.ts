/**
 * Terminal column width of text, close to wcwidth: combining marks and format characters take
 * no column, East Asian wide/full-width characters and emoji take two. Input is expected to be
 * sanitized already (no control characters).
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const DOUBLE_WIDTH =
  /^[\p{Emoji_Presentation}\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]$/u;

const ELLIPSIS = '…';

function charWidth(char: string): number {
  if (ZERO_WIDTH.test(char)) return 0;
  return DOUBLE_WIDTH.test(char) ? 2 : 1;
}

export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let width = 0;
  for (const char of text) width += charWidth(char);
  return width;
}

/** Cuts text to at most `width` columns, marking the cut with '…'. */
export function truncateToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let kept = '';
  let used = 0;
  for (const char of text) {
    const charColumns = charWidth(char);
    if (used + charColumns > width - 1) break;
    kept += char;
    used += charColumns;
  }
  return kept + ELLIPSIS;
}
