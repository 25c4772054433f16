/**
 * The live count of a long list on a terminal's stderr: `1,250 conversations (410/s)`, one line
 * redrawn in place as records are written, and gone when the list ends. Time comes from the
 * injected clock, so tests drive it without waiting.
 */
import type { OutStream } from '../core/io.js';
import { fitLine, groupDigits } from './text-width.js';
import type { RecordWriter } from './types.js';

/** Moves to the start of the line and clears it: a live line redraws in place. */
export const CLEAR_LINE = '\r\x1b[2K';
/** A list done sooner shows no count at all. */
export const LIVE_COUNT_AFTER_MS = 1000;
/** At most about four redraws a second. */
export const LIVE_COUNT_EVERY_MS = 250;

export interface LiveCountOptions {
  /** stderr; the count is drawn only when it is a terminal. */
  stderr: OutStream;
  /** When stdout is the same terminal, the line steps aside while records are written. */
  stdout: OutStream;
  now(): number;
  /** Noun of one record: 'conversation' (a count other than one adds the s). */
  noun: string;
}

export interface LiveCount {
  /** The records go through this writer, which counts them. */
  readonly writer: RecordWriter;
  /** Removes the line (when drawn), before a notice or an error line takes its place. Idempotent. */
  clear(): void;
}

/**
 * Wraps `writer` so that each record written counts; once the list has run LIVE_COUNT_AFTER_MS,
 * the count is drawn on stderr, then updated at most every LIVE_COUNT_EVERY_MS. `end()` clears
 * it. stderr not a terminal: the writer as it is, and nothing is ever drawn.
 */
export function withLiveCount(writer: RecordWriter, options: LiveCountOptions): LiveCount {
  const { stderr, now, noun } = options;
  if (!stderr.isTTY) return { writer, clear: () => undefined };
  const started = now();
  let count = 0;
  /** What the line shows, and when it was last updated; undefined while nothing is drawn. */
  let shown: { text: string; at: number } | undefined;
  let lifted = false;
  const clear = (): void => {
    if (shown === undefined) return;
    if (!lifted) stderr.stream.write(CLEAR_LINE);
    shown = undefined;
    lifted = false;
  };
  const update = (): void => {
    const at = now();
    const elapsed = at - started;
    if (elapsed < LIVE_COUNT_AFTER_MS || (shown !== undefined && at - shown.at < LIVE_COUNT_EVERY_MS)) {
      // Put back as it was after stepping aside for stdout.
      if (lifted && shown !== undefined) stderr.stream.write(shown.text);
      lifted = false;
      return;
    }
    const rate = Math.round((count * 1000) / elapsed);
    shown = { text: fitLine(`${groupDigits(count)} ${noun}${count === 1 ? '' : 's'} (${groupDigits(rate)}/s)`, stderr.columns), at };
    stderr.stream.write(CLEAR_LINE + shown.text);
    lifted = false;
  };
  /** Records printed on the same terminal must not land after the live line's text. */
  const stepAside = (): void => {
    if (shown === undefined || lifted || !options.stdout.isTTY) return;
    stderr.stream.write(CLEAR_LINE);
    lifted = true;
  };
  return {
    writer: {
      async write(record) {
        stepAside();
        await writer.write(record);
        count += 1;
        update();
      },
      async endPage() {
        stepAside();
        await writer.endPage();
        update();
      },
      async end() {
        clear();
        await writer.end();
      },
      ...(writer.delivered && { delivered: writer.delivered.bind(writer) }),
    },
    clear,
  };
}
