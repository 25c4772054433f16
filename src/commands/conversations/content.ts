/** `conversations content ID`: the content thread of one conversation. */
import type { Command } from 'commander';
import { requireId } from '../../api/client.js';
import { CONTENT_ITEM, defaultVersion, hasPlaceholderDate, hasWithheldText, isPlaceholderLink, itemTime, resourceByName } from '../../api/catalogue/index.js';
import { resolveColumns } from '../../api/query.js';
import type { Action } from '../../cli/action.js';
import type { Context } from '../../cli/context.js';
import { addExamples } from '../../cli/help.js';
import type { TextBlock } from '../../output/blocks.js';

const conversations = resourceByName('conversations');

export function addContentVerb(group: Command, action: Action): void {
  const content = group
    .command('content <id>')
    .description("show a conversation's content items, oldest first: on a terminal each item's whole text, elsewhere one row each");
  addExamples(content, ['carectl conversations content 500002', 'carectl conversations content 500002 --columns created_date,author.id,text -o csv']);
  content.action(action((_raw, args) => args[0] as string, showContent, ['limit', 'columns']));
}

async function showContent(ctx: Context, id: string): Promise<void> {
  const printer = await ctx.printer();
  const limit = ctx.limit ?? Infinity;
  const columns = resolveColumns(CONTENT_ITEM.fields, CONTENT_ITEM.defaultColumns, ctx.globals.columns, undefined);
  const version = await ctx.apiVersion(conversations.versions, defaultVersion(conversations));
  const record = await (await ctx.api()).fetchRecord(conversations, version, requireId(id, conversations), [['include', 'content']]);
  const items = (record.content as Record<string, unknown>[] | undefined) ?? [];
  // The whole thread comes in one reply; --limit keeps its oldest items.
  const thread = [...items].sort(byTime).slice(0, limit);
  const blocks = printer.blockWriter(ctx.globals.columns !== undefined);
  if (blocks) {
    for (const item of thread) await blocks.write(contentBlock(item));
    await blocks.end();
  } else {
    const writer = printer.writer('list', columns);
    for (const item of thread) await writer.write(item);
    await writer.end();
  }
  if (items.length === 0) ctx.notice(`conversation ${id} has no content items`);
  else if (items.length > limit) ctx.notice(`stopped at --limit ${limit}: conversation ${id} has ${items.length} content items`);
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
  const time = hasPlaceholderDate(item)
    ? `(time unavailable${imported ? `; imported ${imported}` : ''})`
    : (text(item.created_date) ?? '(no time)');
  const kind = [text(item.platform), text(item.type)].filter(Boolean).join('/');
  const header = [author, time, kind, item.is_by_source === true ? '(by source)' : ''].filter(Boolean);
  const body = text(item.text);
  const link = isPlaceholderLink(item.link) ? '(link unavailable)' : text(item.link);
  return {
    header,
    body: [...(body === undefined ? [hasWithheldText(item) ? '(text unavailable)' : '(no text)'] : body.split(/\r?\n/)), ...(link ? [link] : [])],
  };
}
