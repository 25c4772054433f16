/**
 * `--state FILE` and `--watch` on a list (src/cli/incremental-state.ts holds the logic): one incremental
 * run whose state is committed once the output is whole, or a watch that lists, then polls and
 * prints each record that appears or moves, committing the state after each poll.
 */
import { resolve } from 'node:path';
import type { Context } from './context.js';
import { openStateFile, type StateFile } from './state-file.js';
import { incrementalParams, IncrementalRun, queryText, stateField, type ListState } from './incremental-state.js';
import type { ResourceSpec, Version } from '../catalogue/index.js';
import type { PageSource } from '../api/paging.js';
import { ApiError, exchangeFailed, InterruptedError, ListStoppedError, UsageError } from '../core/errors.js';
import { PagingError } from '../api/page-guard.js';
import { parseDuration } from '../core/parse.js';
import { writeText } from '../core/stream-sink.js';
import type { QueryParams } from '../http/transport.js';
import type { RecordWriter } from '../output/index.js';

/** What an incremental run adds to a list: parameters, and its page source's wrapper. */
export interface IncrementalHooks {
  params: Array<[string, string]>;
  /** The list's page source wrapped; `phases`: its queries' first-page addresses (the plan's). */
  source(inner: PageSource, phases: readonly string[]): PageSource;
}

/** Runs the list once with `hooks`, into `writer` when given (a watch keeps one open): how it ended. */
export type ListOnce<End> = (hooks: IncrementalHooks, writer: RecordWriter | undefined) => Promise<End>;

/** The list an incremental run follows: its filters' parameters (what its state is kept for), and the flags it cannot take. */
export interface IncrementalQuery {
  spec: ResourceSpec;
  version: Version;
  query: QueryParams;
  limit?: number | undefined;
  resume?: string | undefined;
}

const DEFAULT_INTERVAL = '30s';
const MIN_INTERVAL_MS = 5_000;
/** The longest a run of failed polls waits between tries. */
const MAX_BACKOFF_MS = 5 * 60_000;

/** Whether the list is incremental (--state or --watch), checked before anything is sent. */
export function isIncremental(ctx: Context): boolean {
  const { state, watch, interval } = ctx.globals;
  if (interval !== undefined && watch !== true) throw new UsageError('--interval: goes with --watch');
  return state !== undefined || watch === true;
}

/**
 * An incremental list of `spec` with `query` (its filters): --state alone runs once, and says how
 * it ended; --watch runs until Ctrl-C or SIGTERM. `list` runs the list with the hooks given.
 */
export async function incrementalList<End>(ctx: Context, asked: IncrementalQuery, list: ListOnce<End>, makeWriter: () => RecordWriter): Promise<End> {
  const { globals } = ctx;
  const { spec, version, query } = asked;
  const flag = globals.watch ? '--watch' : '--state';
  const field = stateField(spec, flag);
  // A state is committed only for a whole list: a cut or continued one would record a point it never reached.
  for (const [given, name] of [
    [asked.limit, '--limit'],
    [asked.resume, '--resume'],
  ] as const) {
    if (given !== undefined) throw new UsageError(`${flag}: cannot be combined with ${name}; ${flag} lists every record past where the last run ended`);
  }
  const intervalMs = globals.watch ? watchInterval(ctx) : 0;
  incrementalParams(spec, field, query, undefined, flag);
  const path = `${version}/${spec.path}`;
  const qtext = queryText(path, query);
  const base = globals.sandbox ? 'sandbox' : (await ctx.connection()).baseUrl.href;
  const output =
    globals.outputFile === undefined || globals.outputFile === '-' ? undefined : { path: resolve(ctx.io.cwd, globals.outputFile), shown: globals.outputFile };
  const file = globals.state === undefined ? undefined : await openStateFile(ctx.io, globals.state, base, qtext, output);
  if (file) ctx.onClose(() => file.release());
  const sortParam = (spec.sortDates as NonNullable<ResourceSpec['sortDates']>).param;
  const once: Once<End> = async (prior, writer) => {
    const run = new IncrementalRun(field, sortParam, prior, ctx.io.now());
    const hooks: IncrementalHooks = { params: incrementalParams(spec, field, query, prior, flag), source: (inner, phases) => run.source(inner, phases) };
    const ended = await list(hooks, writer).catch((err: unknown) => {
      throw withoutResumeAdvice(err, flag);
    });
    return { ended, state: run.next(base, qtext) };
  };
  if (!globals.watch) {
    const { ended, state } = await once(file?.prior, undefined);
    ctx.afterOutput(() => (file as StateFile).save(state));
    return ended;
  }
  return watch(ctx, intervalMs, file, once, makeWriter);
}

/**
 * A list that failed part-way says how to continue with --resume, which an incremental list does
 * not take: it continues by itself, its state being left as it was.
 */
function withoutResumeAdvice(err: unknown, flag: string): unknown {
  if (!(err instanceof ListStoppedError) || err.resumeToken === undefined) return err;
  const again = flag === '--watch' ? 'the next poll lists them again' : 'the state is unchanged, so the same command lists them again';
  return new ListStoppedError(err.cause, `${err.stopped}: ${again}`, undefined);
}

function watchInterval(ctx: Context): number {
  const { interval, outputFile } = ctx.globals;
  if (outputFile !== undefined)
    throw new UsageError('--watch: cannot be combined with -O/--output-file, which is renamed into place only once whole; redirect stdout instead');
  const ms = parseDuration(interval ?? DEFAULT_INTERVAL, '--interval');
  if (ms < MIN_INTERVAL_MS) throw new UsageError(`--interval: at least 5s (got ${interval})`);
  return ms;
}

type Once<End> = (prior: ListState | undefined, writer: RecordWriter | undefined) => Promise<{ ended: End; state: ListState }>;

/**
 * The watch: the list, then a poll every interval; each record that appears or moves printed once
 * as it arrives, into one output kept open (json, a single array, cannot stream forever: refused).
 * A failed poll is said on stderr and tried again later, less often the longer failures run.
 */
async function watch<End>(ctx: Context, intervalMs: number, file: StateFile | undefined, once: Once<End>, makeWriter: () => RecordWriter): Promise<never> {
  const printer = await ctx.printer();
  const whole = ctx.globals.query !== undefined ? '--query reads the whole list' : printer.format === 'json' ? '-o json is one array' : undefined;
  if (whole) throw new UsageError(`--watch: ${whole}, which a watch never closes; use -o ndjson`);
  const { io } = ctx;
  const writer = makeWriter();
  // On a terminal, a line before the rows of each poll that found any.
  const stamp = printer.format === 'table' && io.stdout.isTTY ? () => writeText(io.stdout.stream, `${stampText(io.now())}\n`, io.signal) : undefined;
  let state = file?.prior;
  let failures = 0;
  for (let poll = 0; ; poll++) {
    try {
      state = (await once(state, keptOpen(writer, poll > 0 ? stamp : undefined))).state;
      await file?.save(state);
      failures = 0;
    } catch (err) {
      if (!transient(err) || io.signal.aborted) throw err;
      failures++;
      ctx.notice(`--watch: poll failed (${failures} in a row): ${(err as Error).message}; still watching`);
    }
    // After failures, longer waits (doubling, at most 5 minutes or the interval) so an outage is not hammered.
    const wait = failures === 0 ? intervalMs : Math.min(intervalMs * 2 ** Math.min(failures, 10), Math.max(MAX_BACKOFF_MS, intervalMs));
    await io.sleep(wait, io.signal).catch(() => {
      throw new InterruptedError();
    });
  }
}

/** `writer` for one poll: end() ends the poll's page, not the output, which the next poll goes on with. */
function keptOpen(writer: RecordWriter, before: (() => Promise<void>) | undefined): RecordWriter {
  let started = false;
  return {
    write: async (record) => {
      if (before && !started) await before();
      started = true;
      await writer.write(record);
    },
    endPage: () => writer.endPage(),
    end: () => writer.endPage(),
  };
}

const stampText = (ms: number): string => `-- ${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** A failure the next poll may not meet (the list's, had it begun): the network, the service's 5xx and 429 (after retries), paging it could not follow. */
function transient(err: unknown): boolean {
  const cause = err instanceof ListStoppedError ? err.cause : err;
  return exchangeFailed(cause) || cause instanceof PagingError || (cause instanceof ApiError && (cause.status >= 500 || cause.status === 429));
}
