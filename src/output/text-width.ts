/**
 * Lines for people, measured in terminal columns (src/output/width.ts): one line cut to a width
 * (live status lines), and text wrapped at spaces with a hanging indent (help, `get`, content
 * blocks). Text is expected sanitised (src/output/sanitize.ts): no control characters.
 */

import { codePointWidth, displayWidth, ELLIPSIS } from './width.js';

/** hangingLines leaves a value at least this many columns, however deep its indent. */
const MIN_ROOM = 20;
/** A web or mail address, which wrapping never breaks. */
const URL = /^(?:[a-z][a-z\d+.-]*:\/\/\S+|[^\s@]+@[^\s@]+\.[^\s@]+)$/i;

/** Where the longest run of `text` from `start` that takes at most `width` columns ends. */
function headEnd(text: string, start: number, width: number): number {
  let used = 0;
  let end = start;
  while (end < text.length) {
    const code = text.codePointAt(end) as number;
    const next = used + codePointWidth(code);
    if (next > width) break;
    used = next;
    end += code > 0xffff ? 2 : 1;
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

/**
 * Wraps one paragraph at spaces into lines of at most `width` columns (the first line
 * `firstWidth`); a word longer than a line is cut across lines, except a URL, which goes whole on
 * a line of its own. Runs of spaces inside a line are kept; spaces at a break are dropped. Width
 * undefined: the paragraph as one line.
 */
export function wrapText(text: string, width: number | undefined, firstWidth = width): string[] {
  if (width === undefined || firstWidth === undefined || width < 1 || displayWidth(text) <= firstWidth) return [text];
  const lines: string[] = [];
  const room = (): number => Math.max(1, lines.length === 0 ? firstWidth : width);
  let line = '';
  let lineWidth = 0;
  const breakLine = (): void => {
    lines.push(line.trimEnd());
    line = '';
    lineWidth = 0;
  };
  /** The word on the line; a word wider than a line is cut across lines, in one pass over it (a 200 KB word too). */
  const cutAcross = (word: string, wordWidth: number): void => {
    let at = 0;
    let restWidth = wordWidth;
    while (lineWidth + restWidth > room()) {
      let end = headEnd(word, at, room() - lineWidth);
      if (end === at) end += (word.codePointAt(at) as number) > 0xffff ? 2 : 1;
      const head = word.slice(at, end);
      line += head;
      restWidth -= displayWidth(head);
      at = end;
      breakLine();
    }
    line += word.slice(at);
    lineWidth += restWidth;
  };
  for (const word of text.split(/( +)/)) {
    if (word === '') continue;
    const wordWidth = displayWidth(word);
    if (word.startsWith(' ')) {
      // spaces: kept inside a line, dropped at its ends
      if (lineWidth > 0 && lineWidth + wordWidth < room()) {
        line += word;
        lineWidth += wordWidth;
      } else if (lineWidth > 0) {
        breakLine();
      }
      continue;
    }
    if (lineWidth > 0 && lineWidth + wordWidth > room()) breakLine();
    if (wordWidth > room() && URL.test(word)) {
      // An address is never broken (it could not be opened or copied): a line of its own, however wide.
      line = word;
      breakLine();
      continue;
    }
    cutAcross(word, wordWidth);
  }
  if (line.trimEnd() !== '' || lines.length === 0) lines.push(line.trimEnd());
  return lines;
}

/**
 * `first` then the wrapped lines of `text`, every line after the first indented by `indent`
 * columns (a hanging indent: `name  value that goes on` / `      under the value`); `first` may be
 * wider than the indent. A web or mail address that does not fit where it would start is on a
 * line of its own. Lines of the text (\n) each start a new line. Width undefined: no wrapping.
 */
export function hangingLines(first: string, text: string, width: number | undefined, indent = displayWidth(first)): string[] {
  // Never narrower than this: a deep indent on a narrow terminal still leaves words room.
  const room = width === undefined ? undefined : Math.max(width - indent, MIN_ROOM);
  const firstRoom = width === undefined ? undefined : Math.max(width - displayWidth(first), MIN_ROOM);
  const lines = text.split('\n').flatMap((paragraph, index) => wrapText(paragraph, room, index === 0 ? firstRoom : room));
  const pad = ' '.repeat(indent);
  return lines.flatMap((line, index) => {
    // An address too wide for where it would start is on a line of its own, whole, under the
    // value if it fits there, else from the first column: the terminal then breaks it only if
    // it is wider than the terminal itself.
    const at = index === 0 ? displayWidth(first) : indent;
    if (width !== undefined && URL.test(line) && at + displayWidth(line) > width) {
      const own = indent + displayWidth(line) <= width ? pad + line : line;
      return index === 0 ? [first.trimEnd(), own] : [own];
    }
    return [(index === 0 ? first + line : line === '' ? '' : pad + line).trimEnd()];
  });
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
