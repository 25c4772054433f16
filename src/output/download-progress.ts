/** What a download shows while it runs: a byte progress bar on a terminal. */
import { formatBytes } from '../core/bytes.js';
import type { OutStream } from '../core/io.js';
import { CLEAR_LINE } from './progress.js';
import { fitLine } from './text-width.js';
import { displayWidth } from './width.js';

/** The bar's widest, and its narrowest before it is left out for a narrow terminal. */
const BAR_WIDTH = 24;
const MIN_BAR_WIDTH = 5;
/** A few redraws a second: more is flicker, and each one is a write to a terminal. */
const REDRAW_EVERY_MS = 250;

/**
 * A byte progress bar on a terminal (`[#####-----]  48%  1.2 MiB / 2.5 MiB`), fitted to the width
 * of stderr (the bar narrows, then goes; the line never wraps), redrawn at most every 250 ms and
 * cleared when done. Off a terminal or with --quiet: nothing.
 */
export function createByteProgress(
  stderr: OutStream,
  quiet: boolean,
  label: string,
  now: () => number,
): { update(received: number, total: number | undefined): void; finish(): void } {
  if (quiet || !stderr.isTTY) return { update: () => undefined, finish: () => undefined };
  let lastDraw = -Infinity;
  let drawn = false;
  return {
    update(received, total) {
      const complete = total !== undefined && received >= total;
      if (!complete && now() - lastDraw < REDRAW_EVERY_MS) return;
      lastDraw = now();
      drawn = true;
      stderr.stream.write(`${CLEAR_LINE}${progressLine(label, received, total, stderr.columns)}`);
    },
    finish() {
      if (drawn) stderr.stream.write(CLEAR_LINE);
    },
  };
}

/** One line of the bar for a terminal of `columns` (unknown: the widest bar). */
export function progressLine(label: string, received: number, total: number | undefined, columns: number | undefined): string {
  if (total === undefined || total <= 0) return fitLine(`${label} ${formatBytes(received)}`, columns);
  const ratio = Math.min(1, received / total);
  const figures = `${String(Math.floor(ratio * 100)).padStart(3)}%  ${formatBytes(received)} / ${formatBytes(total)}`;
  // Room left for the bar and its brackets once the label and figures are placed (one column spare).
  const room = columns === undefined ? BAR_WIDTH : columns - 1 - displayWidth(label) - displayWidth(figures) - 4;
  const width = Math.min(BAR_WIDTH, room);
  if (width < MIN_BAR_WIDTH) return fitLine(`${label} ${figures}`, columns);
  const filled = Math.round(ratio * width);
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${figures}`;
}
