/**
 * Lines for people, measured in terminal columns (src/output/width.ts): one line cut to a width
 * (live status lines), and text wrapped at spaces (table cells), with a hanging indent (help,
 * `get`, content blocks). Text is expected sanitised (src/output/sanitize.ts): no control characters.
 */

import { displayWidth, ELLIPSIS, graphemeAt, graphemeBound, trimTrailingSpaces } from './width.js';

/** hangingLines leaves a value at least this many columns, however deep its indent. */
const MIN_ROOM = 20;
/** A web or mail address, which wrapping breaks only where it is wider than a line (hangingLines, table cells). */
const URL = /^(?:[a-z][a-z\d+.-]*:\/\/\S+|[^\s@]+@[^\s@]+\.[^\s@]+)$/i;

/** Where the longest run of whole graphemes of `text` from `start` that takes at most `width` columns ends. */
function headEnd(text: string, start: number, width: number): number {
  let used = 0;
  let end = start;
  while (end < text.length) {
    const grapheme = graphemeAt(text, end);
    if (used + grapheme.width > width) break;
    used += grapheme.width;
    end = grapheme.end;
  }
  return end;
}

/** The longest start of `text` that takes at most `width` columns. */
function headOf(text: string, width: number): string {
  return text.slice(0, headEnd(text, 0, width));
}

/**
 * One line that fits a terminal `columns` wide without wrapping: cut to columns - 1 (a character
 * in the last column makes some terminals wrap, and a redrawn live line would then pile up),
 * with an ellipsis where it was cut. Unknown width: the text as it is.
 */
export function fitLine(text: string, columns: number | undefined): string {
  if (columns === undefined || columns <= 1) return text;
  const room = columns - 1;
  if (displayWidth(text) <= room) return text;
  return headOf(text, room - 1) + ELLIPSIS;
}

/** How wrapText treats a web or mail address wider than a line. */
export interface WrapOptions {
  /** Columns of the first line (default: `width`), for text that starts after a label. */
  readonly firstWidth?: number | undefined;
  /** Cut it across lines like any long word (a table cell, which must keep its column), instead of a line of its own. */
  readonly cutAddresses?: boolean;
}

/**
 * The one word-wrapper: `text` in lines of at most `width` columns, broken after spaces where it
 * can be and inside a word only where a word is wider than a line, between whole graphemes. The
 * spaces at a break are dropped; every other character is kept. A web or mail address is never
 * broken (it could not be opened or copied): it goes whole on a line of its own, however wide,
 * unless `cutAddresses`. Lines hold at most graphemeBound(width) graphemes, so a run of marks
 * that take no column is cut too. One pass over the text. Width undefined: the text as one line.
 */
export function wrapText(text: string, width: number | undefined, options: WrapOptions = {}): string[] {
  const firstWidth = options.firstWidth ?? width;
  if (width === undefined || firstWidth === undefined || displayWidth(text, firstWidth) <= firstWidth) return [text];
  const lines: string[] = [];
  /** The current line: where it starts, its room, and the columns and graphemes it holds. */
  let lineStart = 0;
  let room = Math.max(1, firstWidth);
  let bound = graphemeBound(room);
  let used = 0;
  let count = 0;
  /** The last space in the current line (-1: none), and the columns and graphemes after it. */
  let lastSpace = -1;
  let usedAfterSpace = 0;
  let countAfterSpace = 0;
  const breakAt = (end: number, next: number, carriedWidth = 0, carriedCount = 0): void => {
    lines.push(trimTrailingSpaces(text.slice(lineStart, end)));
    lineStart = next;
    room = Math.max(1, width);
    bound = graphemeBound(room);
    used = carriedWidth;
    count = carriedCount;
    lastSpace = -1;
  };
  let index = 0;
  while (index < text.length) {
    const grapheme = graphemeAt(text, index);
    if (used + grapheme.width > room || count >= bound) {
      if (text.charCodeAt(index) === 0x20) {
        // The line is full at a space: it ends here, and the spaces go.
        const end = index;
        index = skipSpaces(text, index);
        breakAt(end, index);
        continue;
      }
      if (lastSpace > lineStart) {
        // Broken at the line's last space; what followed it starts the next line.
        breakAt(lastSpace, lastSpace + 1, usedAfterSpace, countAfterSpace);
        continue;
      }
      const wordEnd = options.cutAddresses || !startsWord(text, lineStart) ? -1 : addressEnd(text, lineStart);
      if (wordEnd > 0) {
        index = skipSpaces(text, wordEnd);
        breakAt(wordEnd, index);
        continue;
      }
      if (index > lineStart) {
        // A word wider than the line: broken where the line is full.
        breakAt(index, index);
        continue;
      }
      // A character wider than the whole line stands alone on one.
    }
    used += grapheme.width;
    count += 1;
    if (text.charCodeAt(index) === 0x20) {
      lastSpace = index;
      usedAfterSpace = countAfterSpace = 0;
    } else {
      usedAfterSpace += grapheme.width;
      countAfterSpace += 1;
    }
    index = grapheme.end;
  }
  if (index > lineStart || lines.length === 0) lines.push(trimTrailingSpaces(text.slice(lineStart)));
  return lines;
}

/** Whether a word starts at `index` (not the rest of one cut across lines). */
function startsWord(text: string, index: number): boolean {
  return index === 0 || text.charCodeAt(index - 1) === 0x20;
}

/** Where the word at `start` ends if it is a web or mail address, else -1. */
function addressEnd(text: string, start: number): number {
  const space = text.indexOf(' ', start);
  const end = space === -1 ? text.length : space;
  return URL.test(text.slice(start, end)) ? end : -1;
}

function skipSpaces(text: string, from: number): number {
  let index = from;
  while (text.charCodeAt(index) === 0x20) index += 1;
  return index;
}

/**
 * `first` then the wrapped lines of `text`, every line after the first indented by `indent`
 * columns (a hanging indent: `name  value that goes on` / `      under the value`); `first` may be
 * wider than the indent. A web or mail address that does not fit where it would start is on a
 * line of its own under the value, or, wider than that room, cut across lines under the value as
 * any long word is. Lines of the text (\n) each start a new line. Width undefined: no wrapping.
 */
export function hangingLines(first: string, text: string, width: number | undefined, indent = displayWidth(first)): string[] {
  // Never narrower than this: a deep indent on a narrow terminal still leaves words room.
  const room = width === undefined ? undefined : Math.max(width - indent, MIN_ROOM);
  const firstRoom = width === undefined ? undefined : Math.max(width - displayWidth(first), MIN_ROOM);
  const lines = text.split('\n').flatMap((paragraph, index) => wrapText(paragraph, room, { firstWidth: index === 0 ? firstRoom : room }));
  const pad = ' '.repeat(indent);
  return lines.flatMap((line, index) => {
    const at = index === 0 ? displayWidth(first) : indent;
    if (width !== undefined && URL.test(line) && at + displayWidth(line) > width) {
      if (indent + displayWidth(line) <= width) return index === 0 ? [first.trimEnd(), pad + line] : [pad + line];
      // Whole, it would start a line at the first column (where it reads as a key) or be folded there by the terminal.
      const [head = '', ...tail] = cutAddress(line, index === 0 ? firstRoom : room, room);
      return [(index === 0 ? first : pad) + head, ...tail.map((part) => pad + part)];
    }
    return [(index === 0 ? first + line : line === '' ? '' : pad + line).trimEnd()];
  });
}

/**
 * An address in lines of `room` columns (the first `firstRoom`), broken after a path's `/` or a
 * mail address's `@` where one falls in the line (`…/v1.3/` and `conversations/500002`), else
 * where the line is full. The spaces let wrapText break there; an address holds none, so every
 * space in its lines is one of them.
 */
function cutAddress(address: string, firstRoom: number | undefined, room: number | undefined): string[] {
  const spaced = address.replace(/(?<!\/)\/(?!\/)|@/g, '$& ');
  return wrapText(spaced, room, { firstWidth: firstRoom, cutAddresses: true }).map((part) => part.replaceAll(' ', ''));
}

/** 1250 → '1,250'. */
export function groupDigits(value: number): string {
  return String(Math.trunc(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * A message line for a terminal's stderr, wrapped at spaces to its width when it is prose only.
 * One that gives something to copy (a command, a --resume token, a path or an address, a quoted
 * command) stays one line for the terminal to fold: a break carectl made in it would reach the
 * shell when pasted. Elsewhere, as it is.
 */
export function terminalMessage(text: string, stderr: { isTTY: boolean; columns?: number | undefined }): string {
  const width = stderr.columns;
  if (!stderr.isTTY || width === undefined || displayWidth(text) <= width || TO_COPY.test(text)) return text;
  return wrapText(text, width).join('\n');
}

/** What a message may give to copy: `carectl …` past its own prefix, `--resume`, a path or an address, a backquote. */
const TO_COPY = /\scarectl\s|--resume\s|\/|`/;
