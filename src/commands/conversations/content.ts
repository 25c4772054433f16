/** `conversations content ID`: the content thread of one conversation. */
import type { Command } from 'commander';
import { requireId } from '../../api/client.js';
import { CONTENT_ITEM, defaultVersion, resourceByName } from '../../api/catalogue/index.js';
import { resolveColumns } from '../../api/query.js';
import type { Action } from '../../cli/action.js';
import type { Context } from '../../cli/context.js';
import { addExamples } from '../../cli/help.js';

const conversations = resourceByName('conversations');

export function addContentVerb(group: Command, action: Action): void {
  const content = group
    .command('content <id>')
    .description("show a conversation's content items as rows, oldest first");
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
  const writer = printer.writer('list', columns);
  // The whole thread comes in one reply; --limit keeps its oldest items.
  for (const item of [...items].sort(byTime).slice(0, limit)) await writer.write(item);
  await writer.end();
  if (items.length === 0) ctx.notice(`conversation ${id} has no content items`);
  else if (items.length > limit) ctx.notice(`stopped at --limit ${limit}: conversation ${id} has ${items.length} content items`);
}

/**
 * Microblog items carry a placeholder creation date (1970-01-01T00:00:00); their import date is
 * the only real timing, so it stands in when ordering the thread.
 */
export function itemTime(item: Record<string, unknown>): string {
  const created = typeof item.created_date === 'string' ? item.created_date : '';
  if (created.startsWith('1970-01-01') && typeof item.imported_date === 'string') return item.imported_date;
  return created;
}

function byTime(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ta = itemTime(a);
  const tb = itemTime(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}
