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

/** A count drawn live on stderr: `tick()` after each item done, `stepAside()` before stdout is written. */
export interface LiveTicker {
  tick(): void;
  stepAside(): void;
  /** Redraws (or puts back) the line without counting. */
  refresh(): void;
  clear(): void;
}

/**
 * The live line: once the run has lasted LIVE_COUNT_AFTER_MS, the count (`1,250 conversations
 * (410/s)`, or with `total` `120 of 500 conversations (40/s)`) is drawn on stderr, then updated at
 * most every LIVE_COUNT_EVERY_MS. stderr not a terminal: nothing is ever drawn.
 */
export function liveTicker(options: LiveCountOptions & { total?: number }): LiveTicker {
  const { stderr, now, noun, total } = options;
  if (!stderr.isTTY) return { tick: () => undefined, stepAside: () => undefined, refresh: () => undefined, clear: () => undefined };
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
  const refresh = (): void => {
    const at = now();
    const elapsed = at - started;
    if (elapsed < LIVE_COUNT_AFTER_MS || (shown !== undefined && at - shown.at < LIVE_COUNT_EVERY_MS)) {
      // Put back as it was after stepping aside for stdout.
      if (lifted && shown !== undefined) stderr.stream.write(shown.text);
      lifted = false;
      return;
    }
    const rate = Math.round((count * 1000) / elapsed);
    const counted = total === undefined ? groupDigits(count) : `${groupDigits(count)} of ${groupDigits(total)}`;
    shown = { text: fitLine(`${counted} ${noun}${(total ?? count) === 1 ? '' : 's'} (${groupDigits(rate)}/s)`, stderr.columns), at };
    stderr.stream.write(CLEAR_LINE + shown.text);
    lifted = false;
  };
  return {
    tick() {
      count += 1;
      refresh();
    },
    /** Records printed on the same terminal must not land after the live line's text. */
    stepAside() {
      if (shown === undefined || lifted || !options.stdout.isTTY) return;
      stderr.stream.write(CLEAR_LINE);
      lifted = true;
    },
    refresh,
    clear,
  };
}

/** Wraps `writer` so that each record written counts on a live line (liveTicker); `end()` clears it. */
export function withLiveCount(writer: RecordWriter, options: LiveCountOptions): LiveCount {
  if (!options.stderr.isTTY) return { writer, clear: () => undefined };
  const live = liveTicker(options);
  return {
    writer: {
      async write(record) {
        if (writer.writesNext?.() ?? true) live.stepAside();
        await writer.write(record);
        live.tick();
      },
      async endPage() {
        live.stepAside();
        await writer.endPage();
        live.refresh();
      },
      async end() {
        live.clear();
        await writer.end();
      },
      ...(writer.delivered && { delivered: writer.delivered.bind(writer) }),
      ...(writer.writesNext && { writesNext: writer.writesNext.bind(writer) }),
    },
    clear: live.clear,
  };
}
