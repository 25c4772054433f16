/**
 * Records read as text rather than as rows (a conversation's thread on a terminal): each one a
 * header line and its whole text wrapped to the terminal's width, a blank line between them.
 */
import { sanitizeForTerminal } from './sanitize.js';
import { StreamSink } from '../core/stream-sink.js';
import { boldWhen } from './style.js';
import { wrapText } from './text-width.js';
import { displayWidth } from './width.js';
import type { OutStream } from '../core/io.js';

export interface TextBlock {
  /** Who wrote it and when: parts shown two spaces apart on one line, a part broken only when it is wider than the terminal. */
  header: readonly string[];
  /** The text: each string a paragraph (a line of the original), wrapped. */
  body: readonly string[];
}

export interface BlockWriter {
  write(block: TextBlock): Promise<void>;
  end(): Promise<void>;
}

/** Holds a header part together while the header is wrapped. */
const NBSP = '\u00a0';

class TextBlockWriter implements BlockWriter {
  readonly #sink: StreamSink;
  readonly #width: number | undefined;
  readonly #header: Promise<(text: string) => string>;
  #count = 0;

  constructor(out: OutStream, color: boolean, signal: AbortSignal) {
    this.#sink = new StreamSink(out.stream, signal);
    this.#width = out.isTTY ? out.columns : undefined;
    this.#header = boldWhen(color);
  }

  async write(block: TextBlock): Promise<void> {
    const bold = await this.#header;
    // A part of the header stays on one line when it fits one; a longer one breaks at its own spaces, not inside a word.
    const width = this.#width;
    const parts = block.header
      .map((part) => sanitizeForTerminal(part))
      .map((part) => (width !== undefined && displayWidth(part) > width ? part : part.replaceAll(' ', NBSP)));
    const header = wrapText(parts.join('  '), width).map((line) => bold(line.replaceAll(NBSP, ' ')));
    const body = block.body.flatMap((paragraph) => wrapText(sanitizeForTerminal(paragraph), this.#width));
    const lines = [...(this.#count > 0 ? [''] : []), ...header, ...body];
    this.#count += 1;
    await this.#sink.write(lines.map((line) => `${line.trimEnd()}\n`).join(''));
  }

  async end(): Promise<void> {
    await this.#sink.end();
  }
}

export function createBlockWriter(out: OutStream, color: boolean, signal: AbortSignal): BlockWriter {
  return new TextBlockWriter(out, color, signal);
}
