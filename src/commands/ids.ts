/** Ids from arguments, a comma list, or standard input (`-`, one per line). */
import { text } from 'node:stream/consumers';
import { UsageError } from '../errors.js';
import type { Context } from '../context.js';

export async function readIds(ctx: Context, given: string[], flag: string): Promise<string[]> {
  const items = given.map((id) => id.trim()).filter((id) => id !== '');
  if (items.includes('-')) {
    if (items.length > 1) throw new UsageError(`ids: give them as arguments or as - (stdin), not both`);
    if (ctx.io.stdin.isTTY) throw new UsageError('ids: - reads ids from standard input, one per line; pipe them in');
    const fromStdin = idsFromText(await text(ctx.io.stdin.stream));
    if (fromStdin.length === 0) throw new UsageError('ids: standard input held no ids');
    return fromStdin;
  }
  if (items.length === 0) throw new UsageError(`ids: give at least one id as an argument, with ${flag}, or - to read them from stdin`);
  return items;
}

/** One id per line; blank lines and surrounding spaces are ignored. */
export function idsFromText(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
