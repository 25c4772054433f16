/**
 * Words from the service for `carectl __complete`: the names or ids of a resource's records (tags,
 * channels), from the completion cache (src/config/completion-cache.ts) while it is fresh, else
 * read again. A TAB waits at most TAB_BUDGET_MS on the injected clock: then, or when the read
 * fails (offline, no credentials), the stale words are offered, or none; a read that outlasts the
 * budget goes on in a process of its own, so a later TAB has the words. The scripts quote each word.
 */
import { defaultVersion, resourceByName, type ResourceSpec } from '../catalogue/index.js';
import { runList, startPoint } from '../api/list-run.js';
import { listPlan } from '../api/paging.js';
import { namedAlone, NameResolver, type Named } from '../cli/names.js';
import type { Context } from '../cli/context.js';
import { openCompletionCache, type CacheScope } from '../config/completion-cache.js';
import { offerable } from '../core/shell.js';

export const TAB_BUDGET_MS = 1000;

export interface WordsRequest {
  /** The cache's name for the list: 'names tags', 'close-reasons'. */
  list: string;
  resource?: string;
  field?: 'names' | 'ids';
}

export async function serviceWords(ctx: Context, request: WordsRequest): Promise<string[]> {
  const filling = ctx.io.env[FILL_VARIABLE] === '1';
  // Unless the user said otherwise, one attempt: a TAB's no longer than the whole budget, one in the
  // background no longer than a request may take, so it ends before another may begin (FILL_FOR_MS).
  if (!filling) ctx.globals.requestTimeout ??= `${TAB_BUDGET_MS}ms`;
  ctx.globals.retries ??= '0';
  const scope = await scopeOf(ctx);
  const cache = openCompletionCache({ ...ctx.io, createFolder: true });
  if (request.resource === undefined) return [...cache.closeReasons(scope)].reverse();
  const cached = cache.words(scope, request.list);
  if (cached?.fresh) return cached.words;
  const read = readWords(ctx, request.resource, request.field ?? 'names').then(async (words) => {
    await cache.storeWords(scope, request.list, words);
    return words;
  });
  // The read in the background: the shell has had its answer, this one waits as long as it takes.
  if (filling) return read.then(() => []);
  const late = new AbortController();
  const deadline = ctx.io.sleep(TAB_BUDGET_MS, late.signal).then(() => undefined);
  try {
    const words = await Promise.race([read, deadline]);
    if (words !== undefined) return words;
    // A service slower than a TAB: the next TAB offers what this read in the background finds.
    if (ctx.io.respawn && (await cache.startFill(scope, request.list))) await ctx.io.respawn({ [FILL_VARIABLE]: '1' });
    return cached?.words ?? [];
  } catch {
    return cached?.words ?? [];
  } finally {
    late.abort();
    read.catch(() => undefined);
    deadline.catch(() => undefined);
  }
}

/** Set in the process a TAB starts to read the words in the background. */
const FILL_VARIABLE = 'CARECTL_COMPLETE_FILL';

async function readWords(ctx: Context, resource: string, field: 'names' | 'ids'): Promise<string[]> {
  const spec = resourceByName(resource);
  if (!spec.names) return spec.sortDates ? recentIds(ctx, spec) : [];
  const resolver = new NameResolver(await ctx.api(), await ctx.scheduler(), defaultVersion(spec));
  const records = await resolver.records(resource);
  const alone = namedAlone(records);
  const names = new Set(records.map((record) => record.name));
  // A name that would not find its record again, or that a list's comma would split, is offered as
  // the id; an id that is also a name says it is the id.
  const id = (record: Named): string => (names.has(record.id) ? `id:${record.id}` : record.id);
  const word = (record: Named): string => (field === 'names' && alone.has(record) && sayable(record.name) ? record.name : id(record));
  return [...new Set(records.map(word).filter(offerable))];
}

/** A name given back as it is: offerable, no comma (lists split at it), no space at its ends (names are matched trimmed). */
function sayable(name: string): boolean {
  return offerable(name) && !name.includes(',') && name.trim() === name;
}

/** Ids to offer for a resource no one names (conversations): those whose sort date moved last, a page of them. */
async function recentIds(ctx: Context, spec: ResourceSpec): Promise<string[]> {
  const dates = spec.sortDates as NonNullable<ResourceSpec['sortDates']>;
  const version = defaultVersion(spec);
  const plan = listPlan(spec, version, [[dates.param, `-${dates.moves ?? dates.default}`]], { pageSize: RECENT, limit: RECENT });
  const ids: string[] = [];
  const write = (record: Record<string, unknown>): Promise<void> => Promise.resolve(void ids.push(String(record.id)));
  const done = (): Promise<void> => Promise.resolve();
  const source = (await ctx.api()).pages(spec, version);
  await runList({ plan, source, writer: { write, endPage: done, end: done }, start: startPoint(plan, undefined), limit: RECENT, notice: () => undefined });
  return ids.filter(offerable);
}

/** How many recent ids a TAB offers: one page. */
const RECENT = 50;

/** Keeps a close reason the service accepted, for completion; a cache that cannot be written is no failure of the update. */
export async function rememberCloseReason(ctx: Context, reason: string): Promise<void> {
  try {
    const scope = await scopeOf(ctx);
    await openCompletionCache({ ...ctx.io, createFolder: false }).addCloseReason(scope, reason);
  } catch {
    // nothing to offer next time, nothing lost now
  }
}

async function scopeOf(ctx: Context): Promise<CacheScope> {
  return { profile: ctx.settings.profileName, base: (await ctx.connection()).baseUrl.href };
}
