/**
 * Display width of terminal text, and cutting and wrapping it to a width, in one pass over the
 * part of the text that can be shown: a 200 KB cell costs no more than the columns it gets.
 * Each code point is measured as string-width measures it alone (East Asian Width, emoji,
 * zero-width marks), the measure cli-table3 uses too. Text is expected sanitized (no control
 * characters; sanitizeForTerminal shows them escaped).
 */

import { eastAsianWidth } from 'get-east-asian-width';

export const ELLIPSIS = '…';

/**
 * string-width's rules for a cluster of one code point, without string-width itself: loading it
 * makes an Intl.Segmenter, most of the time carectl's bundle spent initialising at every start,
 * only to split text into clusters, which carectl never asks of it.
 */
const INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Nonspacing_Mark}\p{Enclosing_Mark}\p{Surrogate}]$/u;
/** Built on first use: a v-flag literal is past tsc's target. */
let rgiEmoji: RegExp | undefined;

function computeWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 0;
  // Terminals show the soft hyphen (string-width counts it as none).
  if (code === 0xad) return 1;
  const text = String.fromCodePoint(code);
  if (INVISIBLE.test(text)) return 0;
  rgiEmoji ??= new RegExp('^\\p{RGI_Emoji}$', 'v');
  return rgiEmoji.test(text) ? 2 : eastAsianWidth(code);
}

/** Widths of the Basic Multilingual Plane as found, plus one (0: not yet computed). */
let bmpWidths: Uint8Array | undefined;

/** Columns one code point takes: 0, 1 or 2. */
export function codePointWidth(code: number): number {
  if (code >= 0x20 && code < 0x7f) return 1;
  if (code > 0xffff) return computeWidth(code);
  bmpWidths ??= new Uint8Array(0x10000);
  let known = bmpWidths[code] as number;
  if (known === 0) {
    known = computeWidth(code) + 1;
    bmpWidths[code] = known;
  }
  return known - 1;
}

/**
 * Columns `text` takes on a terminal. With `limit`, stops counting once past it (the result is
 * then some number above `limit`), so a long text costs only what is looked at.
 */
export function displayWidth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let width = 0;
  for (let index = 0; index < text.length;) {
    const unit = text.charCodeAt(index);
    if (unit >= 0x20 && unit < 0x7f) {
      width += 1;
      index += 1;
    } else {
      const code = text.codePointAt(index) as number;
      width += codePointWidth(code);
      index += code > 0xffff ? 2 : 1;
    }
    if (width > limit) return width;
  }
  return width;
}

/**
 * Most code points a cut or wrapped piece of `width` columns keeps: combining marks take no
 * column, so text of nothing but marks would otherwise never be cut. Generous enough for scripts
 * that stack marks (Thai, decomposed Vietnamese).
 */
export function codePointBound(width: number): number {
  return width * 3 + 8;
}

/**
 * `text` cut to at most `width` columns, the cut marked with an ellipsis (which takes the last
 * column); text that fits is returned as it is. Looks at no more of the text than it keeps.
 */
export function cutToWidth(text: string, width: number): string {
  if (text.length <= width && isPrintableAscii(text)) return text;
  const maxCodePoints = codePointBound(width);
  let used = 0;
  let codePoints = 0;
  /** Where the text is cut if it does not fit: the longest prefix that leaves room for the ellipsis. */
  let cutAt = 0;
  for (let index = 0; index < text.length;) {
    const code = text.codePointAt(index) as number;
    const next = index + (code > 0xffff ? 2 : 1);
    used += codePointWidth(code);
    codePoints += 1;
    if (used > width || codePoints > maxCodePoints) {
      return width <= 0 ? '' : trimTrailingSpaces(text.slice(0, cutAt)) + ELLIPSIS;
    }
    if (used <= width - 1 && codePoints <= maxCodePoints - 1) cutAt = next;
    index = next;
  }
  return text;
}

function isPrintableAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x20 || unit >= 0x7f) return false;
  }
  return true;
}

/**
 * `text` in lines of at most `width` columns, broken after spaces where it can be and inside a
 * word only where a word is wider than a line; the spaces at a break are dropped. Every character
 * is kept otherwise. One pass over the text.
 */
export function wrapToWidth(text: string, width: number): string[] {
  const lineWidth = Math.max(1, width);
  const maxCodePoints = codePointBound(lineWidth);
  const lines: string[] = [];
  let lineStart = 0;
  let used = 0;
  let codePoints = 0;
  /** The last space in the current line (-1: none), and what the line holds after it. */
  let lastSpace = -1;
  let usedAfterSpace = 0;
  let codePointsAfterSpace = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.codePointAt(index) as number;
    const columns = codePointWidth(code);
    if (used + columns > lineWidth || codePoints + 1 > maxCodePoints) {
      if (code === 0x20) {
        // The line is full at a space: it ends here, and the spaces go.
        lines.push(trimTrailingSpaces(text.slice(lineStart, index)));
        index = skipSpaces(text, index);
        lineStart = index;
        used = codePoints = 0;
        lastSpace = -1;
        continue;
      }
      if (lastSpace > lineStart) {
        // Broken at the line's last space; what followed it starts the next line.
        lines.push(trimTrailingSpaces(text.slice(lineStart, lastSpace)));
        lineStart = lastSpace + 1;
        used = usedAfterSpace;
        codePoints = codePointsAfterSpace;
        lastSpace = -1;
        continue;
      }
      if (index > lineStart) {
        // A word wider than the line: broken where the line is full.
        lines.push(text.slice(lineStart, index));
        lineStart = index;
        used = codePoints = 0;
        lastSpace = -1;
        continue;
      }
      // A character wider than the whole line stands alone on one.
    }
    used += columns;
    codePoints += 1;
    if (code === 0x20) {
      lastSpace = index;
      usedAfterSpace = codePointsAfterSpace = 0;
    } else {
      usedAfterSpace += columns;
      codePointsAfterSpace += 1;
    }
    index += code > 0xffff ? 2 : 1;
  }
  if (index > lineStart || lines.length === 0) lines.push(trimTrailingSpaces(text.slice(lineStart)));
  return lines;
}

function skipSpaces(text: string, from: number): number {
  let index = from;
  while (text.charCodeAt(index) === 0x20) index += 1;
  return index;
}

/** `text` without the spaces at its end, in time linear in their number (a regex / +$/ is not). */
export function trimTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}
