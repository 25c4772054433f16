/**
 * `conversations update ID…`: PATCH the status of conversations, up to --parallel ids at once, keeping their
 * tags unless told otherwise. The service's tag_ids replaces the whole list, so every PATCH is
 * built from the conversation's current tags (read first) unless --tags gives the new list.
 */
import type { Command } from 'commander';
import { stringifyJson } from '../../core/exact-json.js';
import type { ApiClient } from '../../api/client.js';
import { inOrder, type Slot } from '../../api/scheduler.js';
import type { Throttle } from '../../http/transport.js';
import { PATCH_VERSIONS, resourceByName, UPDATE_STATUSES, type Version } from '../../api/catalogue/index.js';
import { resolveColumns } from '../../cli/columns.js';
import type { Action, RawOptions } from '../../cli/action.js';
import type { Context } from '../../cli/context.js';
import { addExamples } from '../../cli/help.js';
import { readIds, requireId } from '../../cli/ids.js';
import { ApiError, CarectlError, InterruptedError, isBrokenPipe, mayHaveBeenApplied, UsageError } from '../../core/errors.js';
import { parseEnum, parseList } from '../../core/parse.js';
import { sanitizeForTerminal, writeText } from '../../output/index.js';

const conversations = resourceByName('conversations');
const RESULT_COLUMNS = ['id', 'status', 'tags', 'result'];
const DRY_RUN_COLUMNS = ['id', 'method', 'path', 'body'];

/** What every id gets, checked before anything is sent. */
export interface UpdatePlan {
  status: (typeof UPDATE_STATUSES)[number];
  closeReason: string | undefined;
  /** How the new tag list follows from the current one. */
  tags: { replace: string[] } | { add: string[]; remove: string[] };
}

export interface PatchBody {
  status: string;
  tag_ids: string[];
  close_reason?: string;
}

/** The flags and ids as given; planFromOptions checks them. */
export interface UpdateOptions {
  ids: string[];
  status: string;
  closeReason: string | undefined;
  tags: string | undefined;
  addTags: string | undefined;
  removeTags: string | undefined;
  dryRun: boolean;
}

const readOptions = (raw: RawOptions, args: readonly unknown[]): UpdateOptions => ({
  ids: args[0] as string[],
  status: raw.status as string,
  closeReason: raw.closeReason as string | undefined,
  tags: raw.tags as string | undefined,
  addTags: raw.addTags as string | undefined,
  removeTags: raw.removeTags as string | undefined,
  dryRun: raw.dryRun === true,
});

export function addUpdateVerb(group: Command, action: Action): void {
  const update = group
    .command('update <ids...>')
    .description('set the status of conversations (ids as arguments or - for stdin), keeping their tags unless told otherwise')
    .requiredOption('--status <status>', `new status: ${UPDATE_STATUSES.join(' or ')}`)
    .option('--close-reason <reason>', 'close reason (required with --status closing)')
    .option('--tags <list>', "replace the tags with these tag ids, comma-separated ('' removes all)")
    .option('--add-tags <list>', 'tag ids to add to the current tags')
    .option('--remove-tags <list>', 'tag ids to remove from the current tags')
    .option(
      '--dry-run',
      'print each PATCH (method, path, JSON body; records in the output format when one is chosen) instead of sending it; current tags are still read (GET only)',
    );
  addExamples(update, [
    'carectl conversations update 500002 500494 --status on_hold',
    'carectl conversations update 500002 --status closing --close-reason resolved --add-tags 7005',
    'carectl conversations list --status unread --tag spam --columns id --no-header | carectl conversations update - --status closing --close-reason spam',
    "carectl conversations update 500002 --status on_hold --tags '' --dry-run",
  ]);
  update.action(action(readOptions, updateConversations, ['columns', 'parallel']));
}

/** The flags as an UpdatePlan; every mistake is a UsageError (exit 2, nothing sent). */
export function planFromOptions(opts: UpdateOptions): UpdatePlan {
  const status = parseEnum(opts.status, '--status', UPDATE_STATUSES);
  const closeReason = opts.closeReason;
  if (closeReason !== undefined && closeReason.trim() === '') throw new UsageError('--close-reason: needs a value');
  if (status === 'closing' && closeReason === undefined) {
    throw new UsageError('--status closing needs --close-reason R (for example resolved or spam)');
  }
  const replace = opts.tags;
  const add = parseList(opts.addTags ?? '');
  const remove = parseList(opts.removeTags ?? '');
  if (replace !== undefined) {
    if (opts.addTags !== undefined || opts.removeTags !== undefined) {
      throw new UsageError('--tags replaces the whole list; it cannot be combined with --add-tags or --remove-tags');
    }
    return { status, closeReason: closeReason?.trim(), tags: { replace: unique(parseList(replace)) } };
  }
  const both = add.filter((id) => remove.includes(id));
  if (both.length > 0) throw new UsageError(`--add-tags and --remove-tags both name ${both.join(', ')}`);
  return { status, closeReason: closeReason?.trim(), tags: { add: unique(add), remove } };
}

/** The new tag list: the replacement, or the current tags minus the removed plus the added. */
export function newTagIds(plan: UpdatePlan, current: readonly string[] | undefined): string[] {
  if ('replace' in plan.tags) return plan.tags.replace;
  const { add, remove } = plan.tags;
  const kept = (current ?? []).filter((id) => !remove.includes(id));
  return unique([...kept, ...add]);
}

export function patchBody(plan: UpdatePlan, tagIds: string[]): PatchBody {
  return { status: plan.status, tag_ids: tagIds, ...(plan.closeReason !== undefined && { close_reason: plan.closeReason }) };
}

interface Outcome {
  id: string;
  /** Set when this id failed. */
  error?: CarectlError;
}

async function updateConversations(ctx: Context, opts: UpdateOptions): Promise<void> {
  const plan = planFromOptions(opts);
  const { dryRun, ids: args } = opts;
  // A real run prints a result record per id. A dry run prints each request: as a record when a
  // format was chosen (-o, CARECTL_OUTPUT or the profile), as kubectl's does, else as a plain line.
  const printer = dryRun ? await ctx.chosenPrinter() : await ctx.printer();
  const columnSet = dryRun ? DRY_RUN_COLUMNS : RESULT_COLUMNS;
  const writer = printer?.writer('list', resolveColumns(columnSet, columnSet, ctx.globals.columns, undefined));
  const results = dryRun ? undefined : writer;
  const version = await ctx.apiVersion(PATCH_VERSIONS, 'v1.3');
  // Checked here so the message does not offer an --id flag this command lacks.
  if (args.every((id) => id.trim() === '')) throw new UsageError('ids: give at least one conversation id, or - to read them from stdin');
  const ids = (await readIds(ctx, args, '-')).map((id) => requireId(id, conversations));
  const scheduler = await ctx.scheduler();
  // Ctrl-C stops sending new ids; an id already under way finishes (its GET and its PATCH).
  const api = await ctx.api({ finishInFlight: true });

  // Up to --parallel ids at once, each its own GET then PATCH; rows in input order.
  const update = async (id: string, slot: Slot): Promise<Outcome & { body?: PatchBody }> => {
    let body: PatchBody | undefined;
    try {
      body = await buildPatch(api, version, plan, id, slot.throttle);
      if (results) await sendPatch(api, version, id, body, tagOrigins(plan, body.tag_ids), slot.throttle);
      return { id, body };
    } catch (err) {
      if (!(err instanceof CarectlError) || err instanceof InterruptedError) throw err;
      // A PATCH that may have been applied keeps what it sent in its row: it may be the state now.
      return { id, error: err, ...(body && mayHaveBeenApplied(err) && { body }) };
    }
  };
  // A reader that leaves (`| head -1`, `| grep -q`) does not stop a batch half-way: every id given
  // is still updated (or, in a dry run, read), its row going nowhere, and a failure still sets the
  // exit code and is said.
  let readerGone = false;
  const output = async (write: () => Promise<void>): Promise<void> => {
    if (readerGone) return;
    try {
      await write();
    } catch (err) {
      if (!isBrokenPipe(err)) throw err;
      readerGone = true;
    }
  };
  const outcomes: Outcome[] = [];
  // ids done of all, live on a terminal's stderr, as a list's count
  const live = ctx.liveTicker('conversation', ids.length);
  const report = async (outcome: Outcome & { body?: PatchBody }): Promise<void> => {
    live.stepAside();
    await reportOne(outcome);
    live.tick();
  };
  const reportOne = async ({ id, body, error }: Outcome & { body?: PatchBody }): Promise<void> => {
    outcomes.push({ id, ...(error && { error }) });
    const path = api.recordUrl(conversations, version, id).pathname;
    if (error) {
      // A dry run prints requests, not result records: the failure goes to stderr.
      if (results) await output(() => results.write({ id, status: body?.status ?? null, tags: body?.tag_ids ?? null, result: error.message }));
      else {
        live.clear();
        ctx.io.stderr.stream.write(`carectl: ${sanitizeForTerminal(`${id}: ${error.message}`)}\n`);
      }
    } else if (results) await output(() => results.write({ id, status: body?.status, tags: body?.tag_ids, result: 'ok' }));
    else if (writer) await output(() => writer.write({ id, method: 'PATCH', path, body }));
    else await output(() => writeText(ctx.io.stdout.stream, `PATCH ${path} ${stringifyJson(body)}\n`, ctx.io.signal));
  };
  let done: number;
  try {
    done = await inOrder(scheduler, ids, update, report, { stop: ctx.io.signal });
  } finally {
    live.clear();
    // A table holds its rows until the end: the reader may leave only now.
    if (writer) await output(() => writer.end());
  }
  if (ctx.io.signal.aborted && done < ids.length) throw new InterruptedError(interruptedMessage(done, ids.length));
  throwIfAnyFailed(outcomes, dryRun);
}

async function buildPatch(api: ApiClient, version: Version, plan: UpdatePlan, id: string, throttle?: Throttle): Promise<PatchBody> {
  const current = 'replace' in plan.tags ? undefined : await currentTagIds(api, version, id, throttle);
  return patchBody(plan, newTagIds(plan, current));
}

/** Where the sent tag ids came from: named by the user's flag, or the conversation's own sent back. */
export interface TagOrigins {
  flag: '--tags' | '--add-tags';
  given: string[];
  kept: string[];
}

function tagOrigins(plan: UpdatePlan, tagIds: readonly string[]): TagOrigins {
  const [flag, named] = 'replace' in plan.tags ? (['--tags', plan.tags.replace] as const) : (['--add-tags', plan.tags.add] as const);
  return { flag, given: tagIds.filter((id) => named.includes(id)), kept: tagIds.filter((id) => !named.includes(id)) };
}

/**
 * The service takes only active tags, by id (a name, as `list --tag` takes, is refused). A refusal
 * says how to proceed, fitted to where the refused tag can have come from (the one the message
 * names, if it names one): the user's flag, or the conversation's current tags, which carectl
 * sends back rather than dropping one silently.
 */
export function refusedTagHint(message: string, sent: TagOrigins): string | undefined {
  const words = message.split(/[^\w-]+/);
  const named = [...sent.given, ...sent.kept].filter((id) => words.includes(id));
  const suspects = (ids: string[]): string[] => (named.length === 0 ? ids : ids.filter((id) => named.includes(id)));
  const given = suspects(sent.given);
  const hints = [
    ...(given.length > 0 ? [`${sent.flag} ${given.join(',')}: it takes the ids of active tags, not names (carectl tags list --active shows both)`] : []),
    ...(suspects(sent.kept).length > 0 ? ["the conversation's current tags were sent back: drop a refused one with --remove-tags ID"] : []),
  ];
  return hints.length > 0 ? hints.join('; or ') : undefined;
}

async function sendPatch(api: ApiClient, version: Version, id: string, body: PatchBody, origins: TagOrigins, throttle?: Throttle): Promise<void> {
  try {
    await api.patchRecord(conversations, version, id, body, throttle);
  } catch (err) {
    if (err instanceof ApiError && err.status === 400 && /\btag/i.test(err.message)) {
      const hint = refusedTagHint(err.message, origins);
      if (hint !== undefined) throw new ApiError(err.status, `${err.message}; ${hint}`);
    }
    throw err;
  }
}

/** The current tags of a conversation, as ids (the single reply carries {id, url} references). */
async function currentTagIds(api: ApiClient, version: Version, id: string, throttle?: Throttle): Promise<string[]> {
  const record = await api.fetchRecord(conversations, version, id, [['fields', 'tags']], { ...(throttle && { throttle }) });
  const tags: unknown = record.tags;
  // tag_ids replaces the whole list: guessing at a reply we cannot read would wipe the tags.
  const usable = Array.isArray(tags) && tags.every((tag) => typeof (tag as { id?: unknown } | null)?.id === 'string' && (tag as { id: string }).id !== '');
  if (!usable) {
    throw new CarectlError(
      `the service sent no usable tags list for conversation ${id} (tags: ${describeValue(tags)}); nothing was sent, so its tags are kept: set the list explicitly with --tags LIST`,
    );
  }
  return (tags as Array<{ id: string }>).map((tag) => tag.id);
}

/** A short description of an unexpected value, for messages (never the whole value). */
function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list with entries that have no string id';
  return `a ${typeof value}`;
}

/** The exit code of the first failure, with a one-line summary. */
function throwIfAnyFailed(outcomes: Outcome[], dryRun: boolean): void {
  const failures = outcomes.filter((o) => o.error !== undefined);
  const first = failures[0];
  if (!first?.error) return;
  const what = dryRun ? 'conversations could not be read' : 'updates failed';
  const uncertain = failures.filter((o) => mayHaveBeenApplied(o.error)).length;
  // Those are not known to have failed: repeating the same command is safe and settles them.
  const maybe = uncertain > 0 ? `; ${uncertain} of them may have been applied: the update is safe to repeat, run the same command again` : '';
  throw new CarectlError(`${failures.length} of ${outcomes.length} ${what} (first: ${first.id}: ${first.error.message})${maybe}`, first.error.exitCode);
}

function interruptedMessage(done: number, total: number): string {
  return `interrupted after ${done} of ${total} conversations; an update is safe to repeat, so the same command can simply run again`;
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
