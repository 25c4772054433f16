/** What a download shows while it runs: a byte progress bar on a terminal. */
import type { OutStream } from '../core/io.js';

/**
 * A byte progress bar on a terminal (`[#####-----]  48%  1.2 MB / 2.5 MB`), redrawn at most
 * every 100 ms and cleared when done. Off a terminal or with --quiet: nothing.
 */
export function createByteProgress(stderr: OutStream, quiet: boolean, label: string, now: () => number): { update(received: number, total: number | undefined): void; finish(): void } {
  if (quiet || !stderr.isTTY) return { update: () => undefined, finish: () => undefined };
  const BAR_WIDTH = 24;
  let lastDraw = -Infinity;
  let drawn = false;
  return {
    update(received, total) {
      const complete = total !== undefined && received >= total;
      if (!complete && now() - lastDraw < 100) return;
      lastDraw = now();
      drawn = true;
      let text = `${label} ${formatBytes(received)}`;
      if (total !== undefined && total > 0) {
        const ratio = Math.min(1, received / total);
        const filled = Math.round(ratio * BAR_WIDTH);
        text = `${label} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%  ${formatBytes(received)} / ${formatBytes(total)}`;
      }
      stderr.stream.write(`\r\x1b[2K${text}`);
    },
    finish() {
      if (drawn) stderr.stream.write('\r\x1b[2K');
    },
  };
}

/** 512 B, 12.3 KB, 4.5 MB (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
