/**
 * Display width of terminal text, and cutting and wrapping it to a width, in one pass over the
 * part of the text that can be shown: a 200 KB cell costs no more than the columns it gets.
 * Text is expected sanitized (no control characters; sanitizeForTerminal shows them escaped).
 */

export const ELLIPSIS = '…';

/**
 * East Asian Wide and Fullwidth ranges (Unicode 15.1 EastAsianWidth.txt, W and F) that are not
 * emoji; emoji with a default emoji presentation are found by their Unicode property.
 * Sorted pairs of first and last code point.
 */
const WIDE_RANGES: readonly number[] = [
  0x1100, 0x115f, 0x2329, 0x232a, 0x2e80, 0x2e99, 0x2e9b, 0x2ef3, 0x2f00, 0x2fd5, 0x2ff0, 0x2fff,
  0x3000, 0x303e, 0x3041, 0x3096, 0x3099, 0x30ff, 0x3105, 0x312f, 0x3131, 0x318e, 0x3190, 0x31e3,
  0x31ef, 0x321e, 0x3220, 0x3247, 0x3250, 0x4dbf, 0x4e00, 0xa48c, 0xa490, 0xa4c6, 0xa960, 0xa97c,
  0xac00, 0xd7a3, 0xf900, 0xfaff, 0xfe10, 0xfe19, 0xfe30, 0xfe52, 0xfe54, 0xfe66, 0xfe68, 0xfe6b,
  0xff01, 0xff60, 0xffe0, 0xffe6, 0x16fe0, 0x16fe4, 0x16ff0, 0x16ff1, 0x17000, 0x187f7, 0x18800,
  0x18cd5, 0x18d00, 0x18d08, 0x1aff0, 0x1affe, 0x1b000, 0x1b122, 0x1b132, 0x1b132, 0x1b150, 0x1b152,
  0x1b155, 0x1b155, 0x1b164, 0x1b167, 0x1b170, 0x1b2fb, 0x1f200, 0x1f202, 0x1f210, 0x1f23b, 0x1f240,
  0x1f248, 0x1f250, 0x1f251, 0x1f260, 0x1f265, 0x20000, 0x2fffd, 0x30000, 0x3fffd,
];

function inWideRange(code: number): boolean {
  let low = 0;
  let high = WIDE_RANGES.length / 2 - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (code < (WIDE_RANGES[middle * 2] as number)) high = middle - 1;
    else if (code > (WIDE_RANGES[middle * 2 + 1] as number)) low = middle + 1;
    else return true;
  }
  return false;
}

const EMOJI_PRESENTATION = /\p{Emoji_Presentation}/u;
/** Combining marks and format characters take no column (U+00AD, the soft hyphen, takes one). */
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}]/u;

function computeWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 0;
  if (code === 0xad) return 1;
  // Hangul vowels and final consonants join the syllable's leading consonant.
  if ((code >= 0x1160 && code <= 0x11ff) || (code >= 0xd7b0 && code <= 0xd7ff)) return 0;
  const char = String.fromCodePoint(code);
  if (ZERO_WIDTH.test(char)) return 0;
  return inWideRange(code) || EMOJI_PRESENTATION.test(char) ? 2 : 1;
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
  for (let index = 0; index < text.length; ) {
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
  for (let index = 0; index < text.length; ) {
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
