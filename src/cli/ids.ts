/** Ids from arguments, a comma list, or standard input (`-`, one per line). */
import { text } from 'node:stream/consumers';
import { CarectlError, ExitCode, UsageError } from '../core/errors.js';
import { LONE_SURROGATE } from '../core/exact-json.js';
import type { RecordWriter } from '../output/index.js';
import type { Context } from './context.js';

/** How many repeated ids the notice names; a long list from stdin would flood the terminal. */
const NAMED_REPEATS = 5;
/** How many ids not found the error names, for the same reason. */
const NAMED_MISSING = 20;

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
 * The header of one id column in carectl's csv/tsv output: `id`, a path to one (`author.id`,
 * `assigned_to.id`) or an `_id` field (`conversation_id`). No id of the service looks like this.
 */
const ID_HEADER = /^(?:[a-z][a-z0-9_]*\.)*(?:id|[a-z][a-z0-9]*(?:_[a-z0-9]+)*_id)$/;

/**
 * One id per line; blank lines and surrounding spaces are ignored, and so is a first line that is
 * the header of an id column of a list's csv/tsv output (`id`, `author.id`, `conversation_id`),
 * so `list --columns author.id | authors list -` works.
 */
export function idsFromText(text: string): string[] {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines[0] !== undefined && ID_HEADER.test(lines[0]) ? lines.slice(1) : lines;
}

/** A writer that notes which of the ids asked for its records carry, to name those a look-up did not return. */
export interface IdWatch {
  writer: RecordWriter;
  /** The ids asked for that no record carried; undefined when some record had no id to tell by. */
  missing(): string[] | undefined;
}

export function watchIds(writer: RecordWriter, asked: readonly string[]): IdWatch {
  // Only the ids asked for: a list's other ids would make its memory grow with its length.
  const unseen = new Set(asked);
  let unknowable = false;
  return {
    writer: {
      write: (record) => {
        if (record.id === undefined || record.id === null) unknowable = true;
        else unseen.delete(String(record.id));
        return writer.write(record);
      },
      endPage: () => writer.endPage(),
      end: () => writer.end(),
      ...(writer.delivered && { delivered: () => writer.delivered!() }),
      ...(writer.writesNext && { writesNext: () => writer.writesNext!() }),
    },
    missing: () => (unknowable ? undefined : asked.filter((id) => unseen.has(id))),
  };
}

/** Exit 4 naming the ids a look-up did not return (after the records it did return were printed). */
export function refuseMissingIds(noun: string, missing: readonly string[] | undefined): void {
  if (!missing || missing.length === 0) return;
  const named = missing.slice(0, NAMED_MISSING).join(', ') + (missing.length > NAMED_MISSING ? ` and ${missing.length - NAMED_MISSING} more` : '');
  throw new CarectlError(`no ${noun}${missing.length === 1 ? ' with the id' : 's with the ids'} ${named}`, ExitCode.notFound);
}

/** An id typed by the user, trimmed, that goes into a path (see idProblem). */
export function requireId(id: string, spec: { noun: string }): string {
  const trimmed = id.trim();
  const problem = idProblem(trimmed, spec);
  if (problem !== undefined) throw new UsageError(problem);
  return trimmed;
}

/**
 * Why a text cannot be one segment of a path, for ids typed by the user and ids the service names:
 * `.`, `..` and `/` would name another address, a leading `-` reads as an option in a printed
 * command, a control character shows as another id, and a comma is a csv line's.
 */
export function idProblem(id: string, spec: { noun: string }): string | undefined {
  if (id === '') return `the ${spec.noun} id is required`;
  const article = /^[aeiou]/.test(spec.noun) ? 'an' : 'a';
  if (id === '.' || id === '..' || id.includes('/') || id.startsWith('-') || /\p{Cc}/u.test(id)) return `"${id}" is not ${article} ${spec.noun} id`;
  // Half a surrogate pair (valid JSON from a service) goes in no address; shown escaped.
  if (id.search(LONE_SURROGATE) >= 0) return `${JSON.stringify(id)} is not ${article} ${spec.noun} id: it holds a lone UTF-16 surrogate`;
  // A csv line piped in (`500001,unread`) would be sent as one id: the service may take it as another record's.
  if (id.includes(',')) return `"${id}" is not ${article} ${spec.noun} id: ids hold no commas (one id per line or argument; a list's ids: --columns id)`;
  return undefined;
}
