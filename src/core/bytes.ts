/** Bytes: counts as people read them (download progress, saved notices, --verbose's sizes), and where UTF-8 text starts. */

/** 512 B, 12.3 KiB, 4.5 MiB (powers of 1024, so binary units). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** The length of a UTF-8 byte order mark at the start of `bytes` (RFC 8259 8.1 lets a reader leave it out): 3, or 0 without one. */
export function utf8BomLength(bytes: Uint8Array): number {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
}
