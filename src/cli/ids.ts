/** Ids from arguments, a comma list, or standard input (`-`, one per line). */
import { text } from 'node:stream/consumers';
import { UsageError } from '../core/errors.js';
import type { Context } from './context.js';

/** How many repeated ids the notice names; a long list from stdin would flood the terminal. */
const NAMED_REPEATS = 5;

/** The ids, each once in the order first given; a repeated one is named in a notice. */
export async function readIds(ctx: Context, given: string[], flag: string): Promise<string[]> {
  const ids = await givenIds(ctx, given, flag);
  const unique = new Set<string>();
  const repeated = new Set<string>();
  for (const id of ids) (unique.has(id) ? repeated : unique).add(id);
  if (repeated.size > 0) {
    const named = [...repeated].slice(0, NAMED_REPEATS).join(', ') + (repeated.size > NAMED_REPEATS ? ` and ${repeated.size - NAMED_REPEATS} more` : '');
    ctx.notice(`ids: ${named} ${repeated.size === 1 ? 'was' : 'were'} given more than once; each id is taken once`);
  }
  return [...unique];
}

async function givenIds(ctx: Context, given: string[], flag: string): Promise<string[]> {
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

/**
 * One id per line; blank lines and surrounding spaces are ignored, and so is a first line that is
 * the header `id` of a list's csv/tsv output, so `list --columns id | update -` works.
 */
export function idsFromText(text: string): string[] {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines[0] === 'id' ? lines.slice(1) : lines;
}
