/**
 * `conversations content`: the content items of one conversation (ID), of several (ids, or - for
 * stdin), or of every conversation the list filters match, as rows with their conversation_id.
 */
import type { Command } from 'commander';
import {
  CONTENT_ROWS,
  defaultVersion,
  hasPlaceholderDate,
  hasWithheldText,
  isPlaceholderLink,
  itemInstant,
  itemTime,
  PLACEHOLDER_WORDS,
  resourceByName,
} from '../../catalogue/index.js';
import type { FilterValues } from '../../cli/query-params.js';
import { CONTENT_COLUMNS, offerColumns, resolveColumns } from '../../cli/columns.js';
import { inOrder } from '../../api/scheduler.js';
import { LIST_USES, type Action, type RawOptions } from '../../cli/action.js';
import type { Context } from '../../cli/context.js';
import { addExamples } from '../../cli/help.js';
import { readIds, requireId } from '../../cli/ids.js';
import { UsageError } from '../../core/errors.js';
import { type Bound, inBounds, parseRange } from '../../core/parse.js';
import type { TextBlock } from '../../output/blocks.js';
import type { RecordWriter } from '../../output/index.js';
import { listSettings, runListRequest, type ListOutcome } from '../../cli/list-pipeline.js';
import { addFilterOptions, listQuery, readFilters } from '../resources.js';

const conversations = resourceByName('conversations');
/** The list filters, but --include: content is what this verb side-loads. */
const FILTERS = conversations.filters.filter((filter) => filter.flag !== 'include');
/** What a person reads content rows for: a table keeps it, and a third of the terminal, before the other columns. */
const TEXT_COLUMN = 'text';

interface ContentOptions {
  ids: string[];
  filters: FilterValues;
  created: string | undefined;
}

/** The items a run keeps: those --created admits (all without it), and how many it left out for lacking a time. */
interface ItemFilter {
  keeps(item: Record<string, unknown>): boolean;
  /** --created as given, for notices; undefined without it. */
  readonly given: string | undefined;
  /** Its bounds with relative dates resolved: what a resume token ties to. */
  readonly resolved: string | undefined;
  untimed: number;
}

const CREATED_HELP =
  'only items created in RANGE (a restricted microblog item: imported, its creation date being a placeholder), where --oldest and --newest pick conversations; the service cannot filter items, so carectl reads every item of the conversations and keeps these';

/** --created, read at `now` (a resumed run's: relative dates mean what they meant then). Nothing sent before it parses. */
function itemFilter(given: string | undefined, now: number): ItemFilter {
  const bounds: Bound[] | undefined = given === undefined ? undefined : parseRange(given, '--created', now);
  const filter: ItemFilter = {
    given,
    resolved: bounds?.map((bound) => `created_${bound.op}=${bound.date}`).join('&'),
    untimed: 0,
    keeps(item) {
      if (bounds === undefined) return true;
      const at = itemInstant(item);
      if (at === undefined) filter.untimed += 1;
      return at !== undefined && inBounds(bounds, at);
    },
  };
  return filter;
}

/** What --created left out for want of a time, and a run it left with no item at all: said, so an empty output is not a mystery. */
function noticeFiltered(ctx: Context, filter: ItemFilter, kept: number): void {
  if (filter.given === undefined) return;
  if (filter.untimed > 0) ctx.notice(`--created: left out ${filter.untimed} content item${filter.untimed === 1 ? '' : 's'} with no date to go by`);
  if (kept === 0) ctx.notice(`--created ${filter.given}: no content item falls in it`);
}

export function addContentVerb(group: Command, action: Action): void {
  const content = group
    .command('content [ids...]')
    .description(
      "show content items, oldest first: of one conversation (on a terminal each item's whole text, elsewhere one row each), of several (ids, or - for stdin), or of every conversation the list filters match, one row per item with its conversation_id",
    );
  addFilterOptions(content, FILTERS);
  content.option('--created <range>', CREATED_HELP);
  addExamples(content, [
    'carectl conversations content 500002',
    'carectl conversations content 500002 --columns created_date,author.id,text -o csv',
    'carectl conversations content --status closed --newest 7d..today --created 7d..today -o csv > messages.csv',
  ]);
  const read = (raw: RawOptions, args: readonly unknown[]): ContentOptions => ({
    ids: (args[0] as string[] | undefined) ?? [],
    filters: readFilters(raw, FILTERS),
    created: raw.created as string | undefined,
  });
  offerColumns(content, CONTENT_COLUMNS).action(action(read, showContent, LIST_USES));
}

async function showContent(ctx: Context, opts: ContentOptions): Promise<ListOutcome | void> {
  const filtered = Object.keys(opts.filters).length > 0;
  if (filtered && opts.ids.length > 0) throw new UsageError('conversations content: give ids or list filters (--status, --oldest, …), not both');
  if (opts.ids.length > 0 && ctx.globals.resume !== undefined)
    throw new UsageError('--resume continues a list by filters; with ids, give the ids not yet done');
  if (opts.ids.length === 1 && opts.ids[0] !== '-') return showThread(ctx, opts.ids[0]!, itemFilter(opts.created, ctx.io.now()));
  const printer = await ctx.printer();
  const columns = resolveColumns(CONTENT_ROWS.columns, CONTENT_ROWS.defaultColumns, ctx.globals.columns, undefined);
  const version = await ctx.apiVersion(conversations.versions, defaultVersion(conversations));
  if (opts.ids.length === 0) {
    // Every matching conversation through the list engine, with its content side-loaded: resumable and parallel as any list.
    const { query, asOf } = listQuery(ctx, conversations, version, opts.filters);
    const filter = itemFilter(opts.created, asOf);
    let rows: ItemRows | undefined;
    const outcome = await runListRequest(ctx, {
      ...listSettings(ctx, printer),
      spec: conversations,
      version,
      query,
      shown: [['include', 'content']],
      asOf,
      local: filter.resolved,
      writerFor: (continues) => (rows = itemRows(printer.writer('list', columns, { continues, main: TEXT_COLUMN }), filter)),
    });
    if (outcome.written > 0) noticeFiltered(ctx, filter, rows?.kept() ?? 0);
    return outcome;
  }
  const filter = itemFilter(opts.created, ctx.io.now());
  const ids = (await readIds(ctx, opts.ids, '-')).map((id) => requireId(id, conversations));
  const api = await ctx.api();
  const writer = itemRows(printer.writer('list', columns, { main: TEXT_COLUMN }), filter);
  const live = ctx.liveTicker('conversation', ids.length);
  try {
    await inOrder(
      await ctx.scheduler(),
      ids,
      (id, slot) => api.fetchRecord(conversations, version, id, [['include', 'content']], { throttle: slot.throttle }),
      async (record) => {
        live.stepAside();
        await writer.write(record);
        live.tick();
      },
      { stop: ctx.io.signal },
    );
  } finally {
    live.clear();
    await writer.end();
  }
  noticeFiltered(ctx, filter, writer.kept());
}

/** Content rows, and how many items they held. */
type ItemRows = RecordWriter & { kept(): number };

/**
 * Each conversation record as the rows of its content items `filter` keeps, oldest first, each
 * with its conversation_id. Only one conversation's thread is held at a time. What the stream took
 * counts whole conversations, for the resume point of a list that stopped.
 */
function itemRows(writer: RecordWriter, filter: ItemFilter): ItemRows {
  /** Item counts at the end of each conversation not yet known to be delivered, and how many were. */
  const ends: number[] = [];
  let confirmed = 0;
  let items = 0;
  const delivered = writer.delivered?.bind(writer);
  const settle = (): number => {
    const took = delivered?.() ?? items;
    while (ends.length > 0 && (ends[0] as number) <= took) {
      ends.shift();
      confirmed += 1;
    }
    return confirmed;
  };
  return {
    async write(record) {
      const thread = ((record.content as Record<string, unknown>[] | undefined) ?? []).filter((item) => filter.keeps(item)).sort(byTime);
      for (const item of thread) await writer.write({ conversation_id: record.id, ...item });
      items += thread.length;
      ends.push(items);
      settle();
    },
    endPage: () => writer.endPage(),
    end: () => writer.end(),
    kept: () => items,
    ...(delivered && { delivered: settle }),
  };
}

/** One conversation's thread: blocks of text on a terminal, else rows. */
async function showThread(ctx: Context, id: string, filter: ItemFilter): Promise<void> {
  const printer = await ctx.printer();
  const limit = ctx.limit ?? Infinity;
  const columns = resolveColumns(CONTENT_ROWS.columns, CONTENT_ROWS.defaultColumns, ctx.globals.columns, undefined);
  const version = await ctx.apiVersion(conversations.versions, defaultVersion(conversations));
  const record = await (await ctx.api()).fetchRecord(conversations, version, requireId(id, conversations), [['include', 'content']]);
  const items = (record.content as Record<string, unknown>[] | undefined) ?? [];
  // The whole thread comes in one reply; --limit keeps its oldest items.
  const matching = items.filter((item) => filter.keeps(item)).sort(byTime);
  const thread = matching.slice(0, limit);
  const blocks = printer.blockWriter(ctx.globals.columns !== undefined);
  if (blocks) {
    for (const item of thread) await blocks.write(contentBlock(item));
    await blocks.end();
  } else {
    const writer = printer.writer('list', columns, { main: TEXT_COLUMN });
    // The same rows as for several ids: a script reads one shape however the ids were given.
    for (const item of thread) await writer.write({ conversation_id: record.id, ...item });
    await writer.end();
  }
  if (items.length === 0) ctx.notice(`conversation ${id} has no content items`);
  else noticeFiltered(ctx, filter, matching.length);
  if (matching.length > limit)
    ctx.notice(`stopped at --limit ${limit}: conversation ${id} has ${matching.length} content items${filter.given === undefined ? '' : ' in --created'}`);
}

function byTime(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ta = itemTime(a);
  const tb = itemTime(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

function text(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  return typeof value === 'string' ? value : String(value);
}

/**
 * One item as a person reads it: `author  time  platform/type  (by source)`, then its whole text.
 * The placeholders of restricted microblog items are said to be unavailable, not shown as data.
 */
export function contentBlock(item: Record<string, unknown>): TextBlock {
  const author = text((item.author as { id?: unknown } | null | undefined)?.id) ?? '(unknown author)';
  // to the second: enough to read a thread by
  const imported = text(item.imported_date)?.replace(/\.\d+$/, '');
  const unavailable = imported ? PLACEHOLDER_WORDS.date.replace(')', `; imported ${imported})`) : PLACEHOLDER_WORDS.date;
  const time = hasPlaceholderDate(item) ? unavailable : (text(item.created_date) ?? '(no time)');
  const kind = [text(item.platform), text(item.type)].filter(Boolean).join('/');
  const header = [author, time, kind, item.is_by_source === true ? '(by source)' : ''].filter(Boolean);
  const body = text(item.text);
  const link = isPlaceholderLink(item.link) ? PLACEHOLDER_WORDS.link : text(item.link);
  return {
    header,
    body: [...(body === undefined ? [hasWithheldText(item) ? PLACEHOLDER_WORDS.text : '(no text)'] : body.split(/\r?\n/)), ...(link ? [link] : [])],
  };
}
