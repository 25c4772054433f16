/**
 * `conversations update ID…`: PATCH the status of conversations, up to --parallel ids at once, keeping their
 * tags unless told otherwise. The service's tag_ids replaces the whole list, so every PATCH is
 * built from the conversation's current tags (read first) unless --tags gives the new list. Tags
 * are given by name or id (src/cli/names.ts); the rows and when a batch stops: update-results.ts.
 */
import { access, constants, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { stringifyJson } from '../../core/exact-json.js';
import type { ApiClient } from '../../api/client.js';
import { namedAlone, NameResolver, type Named } from '../../cli/names.js';
import { inOrder, type Scheduler, type Slot } from '../../api/scheduler.js';
import type { Throttle } from '../../http/transport.js';
import { PATCH_REFERENCES, PATCH_VERSIONS, resourceByName, UPDATE_STATUSES, type Version } from '../../catalogue/index.js';
import { offerColumns, resolveColumns } from '../../cli/columns.js';
import type { Action, RawOptions } from '../../cli/action.js';
import type { Context } from '../../cli/context.js';
import { addExamples } from '../../cli/help.js';
import { readIds, requireId } from '../../cli/ids.js';
import { rememberCloseReason } from '../completion-words.js';
import { ApiError, CarectlError, InterruptedError, isBrokenPipe, mayHaveBeenApplied, systemReason, UsageError } from '../../core/errors.js';
import { parseEnum, parseList } from '../../core/parse.js';
import { sanitizeForTerminal, writeText, type RecordWriter } from '../../output/index.js';
import { checkKeptStatuses, keptStatus, readCurrent, type SentStatus, type UpdateStatus } from './update-current.js';
import {
  BatchStop,
  notSentKind,
  RESULT_COLUMN,
  RESULT_COLUMNS,
  RESULT_FIELDS,
  resultColumns,
  resultRow,
  type Outcome,
  type PatchBody,
} from './update-results.js';

const conversations = resourceByName('conversations');
const DRY_RUN_COLUMNS = ['id', 'method', 'path', 'body'];

/** What every id gets, checked before anything is sent. Tags as given (names or ids) until resolveTags. */
export interface UpdatePlan {
  /** undefined: each conversation keeps its own (update-current.ts). */
  status: UpdateStatus | undefined;
  closeReason: string | undefined;
  /** How the new tag list follows from the current one. */
  tags: { replace: string[] } | { add: string[]; remove: string[] };
  /** --drop-inactive-tags: the current tags the service deactivated are not kept. */
  dropInactive: boolean;
}

/** The flags and ids as given; planFromOptions checks them. */
export interface UpdateOptions {
  ids: string[];
  status: string | undefined;
  closeReason: string | undefined;
  tags: string | undefined;
  addTags: string | undefined;
  removeTags: string | undefined;
  dropInactiveTags: boolean;
  rest: string | undefined;
  dryRun: boolean;
}

const readOptions = (raw: RawOptions, args: readonly unknown[]): UpdateOptions => ({
  ids: args[0] as string[],
  status: raw.status as string | undefined,
  closeReason: raw.closeReason as string | undefined,
  tags: raw.tags as string | undefined,
  addTags: raw.addTags as string | undefined,
  removeTags: raw.removeTags as string | undefined,
  dropInactiveTags: raw.dropInactiveTags === true,
  rest: raw.rest as string | undefined,
  dryRun: raw.dryRun === true,
});

export function addUpdateVerb(group: Command, action: Action): void {
  const update = group
    .command('update <ids...>')
    .description('set the status or the tags of conversations (ids as arguments or - for stdin), keeping their tags unless told otherwise')
    .option(
      '--status <status>',
      `new status: ${UPDATE_STATUSES.join(' or ')}; without it, a conversation already ${UPDATE_STATUSES.join(' or ')} keeps its own (any other is exit 2, nothing sent)`,
    )
    .option(
      '--close-reason <reason>',
      'close reason (required with --status closing; without --status, a closing conversation keeps its own unless this is given)',
    )
    .option('--tags <list>', "replace the tags with these tags, names or ids, comma-separated ('' removes all)")
    .option('--add-tags <list>', 'tags (names or ids) to add to the current tags')
    .option('--remove-tags <list>', 'tags (names or ids) to remove from the current tags')
    .option('--drop-inactive-tags', "leave the tags the service deactivated out of the conversation's tags carectl keeps (each row says which)")
    .option('--rest <file>', 'when the batch stops early, write the ids it did not send to FILE, one a line, instead of printing them as not_sent rows')
    .option(
      '--dry-run',
      'print each PATCH (method, path, JSON body; records in the output format when one is chosen) instead of sending it; current tags are still read (GET only)',
    );
  addExamples(update, [
    'carectl conversations update 500002 500494 --status on_hold',
    'carectl conversations list --status on_hold --tag order-bug --columns id | carectl conversations update - --add-tags praise-follow-up',
    'carectl conversations update 500002 --status closing --close-reason resolved --add-tags praise-follow-up',
    'carectl conversations list --status unread --tag spam --columns id --no-header | carectl conversations update - --status closing --close-reason spam',
    'carectl conversations update - --status on_hold --drop-inactive-tags --rest rest.txt < ids.txt',
    "carectl conversations update 500002 --status on_hold --tags '' --dry-run",
  ]);
  offerColumns(update, RESULT_COLUMNS).action(action(readOptions, updateConversations, ['parallel', 'query']));
}

/** The flags as an UpdatePlan; every mistake is a UsageError (exit 2, nothing sent). */
export function planFromOptions(opts: UpdateOptions): UpdatePlan {
  const status = opts.status === undefined ? undefined : parseEnum(opts.status, '--status', UPDATE_STATUSES);
  const closeReason = opts.closeReason;
  if (closeReason !== undefined && closeReason.trim() === '') throw new UsageError('--close-reason: needs a value');
  if (status === 'closing' && closeReason === undefined) {
    throw new UsageError('--status closing needs --close-reason R (for example resolved or spam)');
  }
  if (opts.rest !== undefined && opts.rest.trim() === '') throw new UsageError('--rest: needs a file name');
  const replace = opts.tags;
  const add = parseList(opts.addTags ?? '');
  const remove = parseList(opts.removeTags ?? '');
  const dropInactive = opts.dropInactiveTags;
  if (replace !== undefined) {
    if (opts.addTags !== undefined || opts.removeTags !== undefined) {
      throw new UsageError('--tags replaces the whole list; it cannot be combined with --add-tags or --remove-tags');
    }
    if (dropInactive) throw new UsageError('--drop-inactive-tags leaves out current tags; --tags sends the whole list instead (give only active tags)');
    return { status, closeReason: closeReason?.trim(), tags: { replace: unique(parseList(replace)) }, dropInactive };
  }
  refuseBoth(add, remove);
  return { status, closeReason: closeReason?.trim(), tags: { add: unique(add), remove }, dropInactive };
}

function refuseBoth(add: readonly string[], remove: readonly string[]): void {
  const both = add.filter((id) => remove.includes(id));
  if (both.length > 0) throw new UsageError(`--add-tags and --remove-tags both name ${both.join(', ')}`);
}

/** The new tag list: the replacement, or the current tags minus the removed plus the added. */
export function newTagIds(plan: UpdatePlan, current: readonly string[] | undefined): string[] {
  if ('replace' in plan.tags) return plan.tags.replace;
  const { add, remove } = plan.tags;
  const kept = (current ?? []).filter((id) => !remove.includes(id));
  return unique([...kept, ...add]);
}

export function patchBody({ status, closeReason }: SentStatus, tagIds: string[]): PatchBody {
  return { status, tag_ids: tagIds, ...(closeReason !== undefined && { close_reason: closeReason }) };
}

/** The tags a run knows: the plan with tag ids for names, and what the tags list says when it was read. */
interface TagFacts {
  plan: UpdatePlan;
  /** Inactive tags by id, with their names; undefined: the list was not read (not needed). */
  inactive: ReadonlyMap<string, string> | undefined;
  /** The names a person can give back for tag ids (namedAlone), shown in a table; empty when the list was not read. */
  names: ReadonlyMap<string, string>;
}

/** What the tags list says of inactive tags and of names. */
function listFacts(all: readonly Named[]): Omit<TagFacts, 'plan'> {
  const alone = namedAlone(all);
  return {
    inactive: new Map(all.filter((tag) => !tag.active).map((tag) => [tag.id, tag.name])),
    names: new Map(all.filter((tag) => alone.has(tag)).map((tag) => [tag.id, tag.name])),
  };
}

/**
 * The plan's tag names and ids as ids, from one tags list, read only when needed: tags were
 * given, or the current tags' activity matters (--drop-inactive-tags, or a dry run that says
 * which ids the service would refuse). A tag that is unknown, ambiguous or (to add) inactive is
 * exit 2, before any conversation is read.
 */
export async function resolveTags(resolver: NameResolver, plan: UpdatePlan, dryRun: boolean): Promise<TagFacts> {
  const given = 'replace' in plan.tags ? { tags: plan.tags.replace } : { 'add-tags': plan.tags.add, 'remove-tags': plan.tags.remove };
  const keepsCurrent = !('replace' in plan.tags);
  const needed = Object.values(given).some((values) => values.length > 0) || (keepsCurrent && (plan.dropInactive || dryRun));
  if (!needed) return { plan, inactive: undefined, names: new Map() };
  const ids: Record<string, string[]> = {};
  for (const [flag, values] of Object.entries(given) as Array<[keyof typeof PATCH_REFERENCES, string[]]>) {
    const named = await resolver.resolve(`--${flag}`, PATCH_REFERENCES[flag], values);
    const inactive = named.filter((tag) => !tag.active);
    if (flag !== 'remove-tags' && inactive.length > 0) {
      const which = inactive.map((tag) => `${tag.name} (${tag.id})`).join(', ');
      throw new UsageError(
        `--${flag}: ${which} ${inactive.length > 1 ? 'are' : 'is'} inactive; the service takes active tags only (carectl tags list --active)`,
      );
    }
    ids[flag] = unique(named.map((tag) => tag.id));
  }
  const [add, remove] = [ids['add-tags'] ?? [], ids['remove-tags'] ?? []];
  // A name and an id of one tag, one to add and one to remove.
  if (keepsCurrent) refuseBoth(add, remove);
  const tags = keepsCurrent ? { add, remove } : { replace: ids.tags ?? [] };
  return { plan: { ...plan, tags }, ...listFacts(await resolver.records('tags')) };
}

/**
 * resolveTags; where the list cannot be read (the service down, not the user's mistake) the batch
 * stops before any id, so each id still comes as a row a retry loop reads (a dry run has no rows).
 */
async function tagFactsOrStop(resolver: NameResolver, plan: UpdatePlan, dryRun: boolean, stop: BatchStop): Promise<TagFacts> {
  try {
    return await resolveTags(resolver, plan, dryRun);
  } catch (err) {
    if (dryRun || !(err instanceof CarectlError) || err instanceof UsageError || err instanceof InterruptedError) throw err;
    stop.nothingSent(`the tags list could not be read: ${err.message}`, err);
    return { plan, inactive: undefined, names: new Map() };
  }
}

/** A batch's shared state: what it stops on, and the ids it did not send. */
interface Batch {
  stop: BatchStop;
  notSent: string[];
}

async function updateConversations(ctx: Context, opts: UpdateOptions): Promise<void> {
  const { dryRun, ids: args } = opts;
  const proposed = planFromOptions(opts);
  // A real run prints a result record per id. A dry run prints each request: as a record when a
  // format was chosen (-o, CARECTL_OUTPUT or the profile), as kubectl's does, else as a plain line.
  const printer = dryRun ? await ctx.chosenPrinter() : await ctx.printer();
  const dropping = proposed.dropInactive;
  const defaults = dryRun ? [...DRY_RUN_COLUMNS, ...(dropping ? ['dropped'] : [])] : resultColumns(printer?.format === 'table', dropping);
  const known = dryRun ? [...DRY_RUN_COLUMNS, 'dropped'] : RESULT_FIELDS;
  const writer = printer?.writer('list', resolveColumns(known, defaults, ctx.globals.columns, undefined), dryRun ? {} : { computed: [RESULT_COLUMN] });
  const version = await ctx.apiVersion(PATCH_VERSIONS, 'v1.3');
  // Checked here so the message does not offer an --id flag this command lacks.
  if (args.every((id) => id.trim() === '')) throw new UsageError('ids: give at least one conversation id, or - to read them from stdin');
  const ids = (await readIds(ctx, args, '-')).map((id) => requireId(id, conversations));
  const rest = opts.rest === undefined ? undefined : { given: opts.rest, path: resolve(ctx.io.cwd, opts.rest) };
  if (rest) await refuseUnwritable(rest);
  const scheduler = await ctx.scheduler();
  // Ctrl-C stops sending new ids; an id already under way finishes (its GET and its PATCH).
  const api = await ctx.api({ finishInFlight: true });
  const resolver = new NameResolver(api, scheduler, version);
  const batch: Batch = { stop: new BatchStop(), notSent: [] };
  const facts = await tagFactsOrStop(resolver, proposed, dryRun, batch.stop);
  if (proposed.status === undefined) await checkKeptStatuses(api, version, ids, proposed.closeReason, scheduler, batch.stop, ctx.io.signal);
  const names = printer?.format === 'table' ? facts.names : undefined;
  const run: Run = { ctx, api, resolver, version, facts, names, dryRun, writer, batch, rest };
  const outcomes = await runBatch(run, ids, scheduler);
  // a reason the service took is offered by completion next time
  if (!dryRun && proposed.closeReason !== undefined && outcomes.some((outcome) => !outcome.error && !outcome.notSent))
    await rememberCloseReason(ctx, proposed.closeReason);
  await settleRest(run, ids, outcomes.length);
  if (ctx.io.signal.aborted && outcomes.length < ids.length) throw new InterruptedError(interruptedMessage(outcomes.length, ids.length, rest?.given));
  throwIfAnyFailed(outcomes, run);
}

/** What one run's ids share. */
interface Run {
  ctx: Context;
  api: ApiClient;
  resolver: NameResolver;
  version: Version;
  facts: TagFacts;
  /** Tag names a table shows for ids; undefined: rows keep ids (a script's formats). */
  names: ReadonlyMap<string, string> | undefined;
  dryRun: boolean;
  writer: RecordWriter | undefined;
  batch: Batch;
  /** --rest FILE, as given and as a path. */
  rest: { given: string; path: string } | undefined;
}

/** Up to --parallel ids at once, each its own GET then PATCH; rows in input order. The outcomes delivered. */
async function runBatch(run: Run, ids: readonly string[], scheduler: Scheduler): Promise<Outcome[]> {
  const { ctx, writer, batch } = run;
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
  const report = async (delivered: Outcome): Promise<void> => {
    const outcome = await explainRefusal(run, delivered);
    live.stepAside();
    outcomes.push(outcome);
    if (outcome.notSent) batch.notSent.push(outcome.id);
    await reportOne(run, outcome, output, () => live.clear());
    live.tick();
  };
  try {
    await inOrder(scheduler, ids, (id, slot) => updateOne(run, id, slot), report, { stop: ctx.io.signal });
  } finally {
    live.clear();
    // A table holds its rows until the end: the reader may leave only now.
    if (writer) await output(() => writer.end());
  }
  return outcomes;
}

/** One id: its current tags read (unless --tags), then its PATCH sent (unless a dry run); nothing once the batch stopped. */
async function updateOne(run: Run, id: string, slot: Slot): Promise<Outcome> {
  const { stop } = run.batch;
  const outcome = await stop.admit(async () => {
    const result = await tryUpdate(run, id, slot);
    if (!result.notSent) stop.see(result.error);
    return result;
  }, run.ctx.io.signal);
  return outcome ?? { id, notSent: true };
}

async function tryUpdate(run: Run, id: string, slot: Slot): Promise<Outcome> {
  const { api, version, facts, batch } = run;
  let built: Built | undefined;
  try {
    built = await buildPatch(api, version, facts, id, slot.throttle);
    if (run.dryRun) return { id, ...built };
    // Stopped while this id's tags were read: its PATCH would not help either.
    if (batch.stop.reason !== undefined) return { id, notSent: true };
    await api.patchRecord(conversations, version, id, built.body, slot.throttle);
    return { id, ...built };
  } catch (err) {
    if (!(err instanceof CarectlError) || err instanceof InterruptedError) throw err;
    return { id, error: err, ...built };
  }
}

type Output = (write: () => Promise<void>) => Promise<void>;

/**
 * The tag names a table row shows: the tags list's, where it was read (names that find their tag
 * again); else those the service sent with the conversation, as a table of it shows them.
 */
function namesFor(run: Run, outcome: Outcome): ReadonlyMap<string, string> | undefined {
  return run.names && run.facts.inactive === undefined ? (outcome.tagNames ?? run.names) : run.names;
}

async function reportOne(run: Run, outcome: Outcome, output: Output, clearLive: () => void): Promise<void> {
  const { ctx, writer, facts, batch } = run;
  const dropping = facts.plan.dropInactive;
  if (!run.dryRun) {
    if (outcome.notSent && run.rest !== undefined) return;
    if (writer) await output(() => writer.write(resultRow(outcome, dropping, batch.stop, namesFor(run, outcome))));
    return;
  }
  const { id, body, error } = outcome;
  if (outcome.notSent) return;
  if (error || !body) {
    // A dry run prints requests, not result records: the failure goes to stderr.
    clearLive();
    ctx.io.stderr.stream.write(`carectl: ${sanitizeForTerminal(`${id}: ${error?.message ?? 'no request'}`)}\n`);
    return;
  }
  noticeInactive(run, outcome, clearLive);
  const path = run.api.recordUrl(conversations, run.version, id).pathname;
  if (writer) await output(() => writer.write({ id, method: 'PATCH', path, body, ...(dropping && { dropped: outcome.dropped ?? [] }) }));
  else await output(() => writeText(ctx.io.stdout.stream, `PATCH ${path} ${stringifyJson(body)}\n`, ctx.io.signal));
}

/** A dry run says what it knows of the tags the service would refuse: inactive ones kept, or those it leaves out. */
function noticeInactive(run: Run, { id, body, dropped }: Outcome, clearLive: () => void): void {
  const inactive = run.facts.inactive;
  if (!inactive || !body || !body.tag_ids.concat(dropped ?? []).some((tag) => inactive.has(tag))) return;
  // A notice takes the live count's line; the count comes back with the next id.
  clearLive();
  const named = (tagIds: readonly string[]): string => tagIds.map((tag) => `${inactive.get(tag) ?? ''} (${tag})`).join(', ');
  if (dropped && dropped.length > 0) run.ctx.notice(`${id}: leaves out inactive ${named(dropped)}`);
  const kept = body.tag_ids.filter((tag) => inactive.has(tag));
  if (kept.length > 0) {
    run.ctx.notice(`${id}: carries inactive ${named(kept)}, which the service refuses: --drop-inactive-tags leaves ${kept.length > 1 ? 'them' : 'it'} out`);
  }
}

/** --rest FILE must be writable before anything is sent: the ids it would get are otherwise lost. */
async function refuseUnwritable(file: { given: string; path: string }): Promise<void> {
  try {
    await access(dirname(file.path), constants.W_OK);
  } catch (err) {
    throw new UsageError(`--rest ${file.given}: its folder cannot be written (${systemReason(err as Error)})`);
  }
}

/**
 * --rest FILE: the ids not sent (the batch stopped, or Ctrl-C), one a line, written beside FILE and
 * renamed into place; a batch that sent every id removes FILE, so a loop can run until it is gone.
 */
async function settleRest(run: Run, ids: readonly string[], delivered: number): Promise<void> {
  if (run.rest === undefined) return;
  const rest = [...run.batch.notSent, ...ids.slice(delivered)];
  if (rest.length === 0) return rm(run.rest.path, { force: true });
  const partial = `${run.rest.path}.${process.pid}.part`;
  try {
    await writeFile(partial, rest.map((id) => `${id}\n`).join(''));
    await rename(partial, run.rest.path);
  } catch (err) {
    await rm(partial, { force: true });
    throw new CarectlError(
      `--rest ${run.rest.given}: cannot write the ${rest.length} ids not sent (${systemReason(err as Error)}); they are: ${rest.join(' ')}`,
    );
  }
}

/** A PATCH built for one id: its body, the inactive tags left out, the tag names read with the conversation. */
type Built = Pick<Outcome, 'dropped' | 'tagNames'> & { body: PatchBody };

/**
 * The PATCH for one id, from its current tags unless --tags gives them, and its current status
 * without --status; with --drop-inactive-tags, the inactive ones it left out.
 */
async function buildPatch(api: ApiClient, version: Version, facts: TagFacts, id: string, throttle?: Throttle): Promise<Built> {
  const { plan, inactive } = facts;
  const current = await readCurrent(api, version, id, { tags: !('replace' in plan.tags), status: plan.status === undefined }, throttle);
  const sent = plan.status === undefined ? keptStatus(current, plan.closeReason) : { status: plan.status, closeReason: plan.closeReason };
  // Checked before the batch (checkKeptStatuses); it changed since.
  if ('refused' in sent) {
    throw new CarectlError(
      `conversation ${id} ${sent.refused}, which it was not when carectl checked before the batch: nothing was sent for it (--status sets one)`,
    );
  }
  const tagIds = newTagIds(plan, current.tags);
  const names = current.tagNames && { tagNames: current.tagNames };
  if (!plan.dropInactive || !inactive) return { body: patchBody(sent, tagIds), ...names };
  return {
    ...names,
    body: patchBody(
      sent,
      tagIds.filter((tag) => !inactive.has(tag)),
    ),
    dropped: tagIds.filter((tag) => inactive.has(tag)),
  };
}

/** Where the sent tag ids came from: named by the user's flag, or the conversation's own, kept. */
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
 * The service takes only active tags (spec: tag_ids). A refusal says how to proceed, fitted to
 * where the refused tag can have come from (the one the message names, if it names one): the
 * user's flag (its tags were active when carectl read the list), or the conversation's current
 * tags, which carectl keeps rather than dropping one silently. `inactive` (the tags list, by id
 * with names): every kept tag it calls inactive is named, not only the one the service named.
 */
export function refusedTagHint(message: string, sent: TagOrigins, inactive?: ReadonlyMap<string, string>): string | undefined {
  const words = message.split(/[^\w-]+/);
  const named = [...sent.given, ...sent.kept].filter((id) => words.includes(id));
  const suspects = (ids: string[]): string[] => (named.length === 0 ? ids : ids.filter((id) => named.includes(id)));
  const given = suspects(sent.given);
  const kept = suspects(sent.kept);
  const refused = sent.kept.filter((id) => inactive?.has(id) || (named.includes(id) && kept.includes(id)));
  const hints = [
    ...(given.length > 0 ? [`${sent.flag} ${given.join(',')}: the service takes active tags only (carectl tags list --active)`] : []),
    ...(kept.length > 0 ? [keptHint(refused, inactive)] : []),
  ];
  return hints.length > 0 ? hints.join('; or ') : undefined;
}

/** Says what carectl did with the conversation's tags, and which of them the service refuses where that is known. */
function keptHint(refused: readonly string[], inactive: ReadonlyMap<string, string> | undefined): string {
  const kept = "carectl kept the conversation's tags, and the service refuses";
  if (refused.length === 0) return `${kept} one of them: --drop-inactive-tags leaves out those it deactivated`;
  const which = refused.map((id) => (inactive?.get(id) ? `${inactive.get(id)} (${id})` : id)).join(', ');
  return `${kept} ${which}: --drop-inactive-tags leaves ${refused.length > 1 ? 'them' : 'it'} out`;
}

/**
 * A refusal of a tag, with how to proceed (refusedTagHint), from what carectl read: the tags list,
 * read now (once a run) when the run had no need of it before. Runs as the row is reported,
 * outside the id's request slot, which the list's pages would otherwise wait for.
 */
async function explainRefusal(run: Run, outcome: Outcome): Promise<Outcome> {
  const { error, body } = outcome;
  if (!(error instanceof ApiError) || error.status !== 400 || !/\btag/i.test(error.message) || body === undefined) return outcome;
  const inactive =
    run.facts.inactive ??
    (await run.resolver.records('tags').then(
      (all) => listFacts(all).inactive,
      () => undefined,
    ));
  const hint = refusedTagHint(error.message, tagOrigins(run.facts.plan, body.tag_ids), inactive);
  return hint === undefined ? outcome : { ...outcome, error: new ApiError(error.status, `${error.message}; ${hint}`) };
}

/** The exit code of the first failure (or of the one the batch stopped on), with a one-line summary. */
function throwIfAnyFailed(outcomes: Outcome[], run: Run): void {
  const { stop, notSent } = run.batch;
  if (stop.beforeAny && stop.cause) {
    const where = run.rest === undefined ? `rows with error.kind ${notSentKind(stop)}` : `their ids are in ${run.rest.given}`;
    throw new CarectlError(`nothing was sent (${stop.reason}): ${notSent.length} not sent, ${where}`, stop.cause.exitCode);
  }
  const failures = outcomes.filter((o) => o.error !== undefined);
  const first = failures[0];
  if (!first?.error) return;
  const what = run.dryRun ? 'conversations could not be read' : 'updates failed';
  const uncertain = failures.filter((o) => mayHaveBeenApplied(o.error)).length;
  // Those are not known to have failed: repeating the same command is safe and settles them.
  const maybe = uncertain > 0 ? `; ${uncertain} of them may have been applied: the update is safe to repeat, run the same command again` : '';
  const where = run.rest === undefined ? 'rows with error.kind not_sent' : `their ids are in ${run.rest.given}`;
  const stopped = stop.reason === undefined ? '' : `; the batch stopped (${stop.reason}): ${notSent.length} not sent, ${where}`;
  const code = stop.cause?.exitCode ?? first.error.exitCode;
  throw new CarectlError(`${failures.length} of ${outcomes.length} ${what} (first: ${first.id}: ${first.error.message})${maybe}${stopped}`, code);
}

function interruptedMessage(done: number, total: number, rest: string | undefined): string {
  const where = rest === undefined ? '' : `; the ids not done are in ${rest}`;
  return `interrupted after ${done} of ${total} conversations; an update is safe to repeat, so the same command can simply run again${where}`;
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
