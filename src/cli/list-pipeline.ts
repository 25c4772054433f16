/**
 * A list's one trip below its command: the command maps its options into a ListRequest once, and
 * runListRequest runs the pipeline: the query (with --state's or --watch's hooks), the names it
 * gives resolved, the plan and its start, the pages through the engine (runList) into the writer
 * with the live count. How the list ended comes back as a value; a failure as its error.
 */
import type { ResourceSpec, Version } from '../catalogue/index.js';
import { runList, startPoint, type ListEnd } from '../api/list-run.js';
import { checkResumeToken, isTokenOf } from '../api/resume-token.js';
import { listPlan, type ListPlan } from '../api/paging.js';
import { NameResolver, resolveQuery } from './names.js';
import { offFlagOf } from './query-params.js';
import { UsageError } from '../core/errors.js';
import type { QueryParams } from '../http/transport.js';
import type { RecordWriter } from '../output/index.js';
import type { Printer } from '../output/printer.js';
import type { Context } from './context.js';
import { readIds, refuseMissingIds, watchIds, type IdWatch } from './ids.js';
import { incrementalList, isIncremental, type IncrementalHooks } from './incremental.js';
import { refuseAnotherToken } from './resume-file.js';

/** The global options a list goes by, checked, and the header its output starts with. */
export interface ListSettings {
  limit?: number | undefined;
  /** Records per page asked for (--page-size). */
  pageSize: number;
  /** --resume's token. */
  resume?: string | undefined;
  /** The header (csv, tsv) the output starts with, which a run continuing it leaves out: a token keeps it. */
  header?: string | undefined;
}

/** One list, as its command asks for it. */
export interface ListRequest extends ListSettings {
  spec: ResourceSpec;
  version: Version;
  /** The filters' parameters, checked before anything is sent: what a --state is kept for. */
  query: QueryParams;
  /** What the output needs besides (`fields`, `include=content`). */
  shown: QueryParams;
  /** When relative dates were read (a resumed list's: when the run it continues read them). */
  asOf: number;
  /** A list by ids: as given (`-` reads them from stdin). */
  ids?: string[] | undefined;
  /** What carectl filters itself (ListPlan.local). */
  local?: string | undefined;
  /** The writer, given the header the output being continued already has. */
  writerFor(continues: string | undefined): RecordWriter;
}

/** How the list ended, and which tokens are this list's: --resume-file removes only such a one. */
export type ListOutcome = ListEnd & { owns(token: string): boolean };

/** The list options of the command line as a ListRequest takes them. */
export function listSettings(ctx: Context, printer: Printer): ListSettings {
  return { limit: ctx.limit, pageSize: ctx.pageSize, resume: ctx.globals.resume, header: printer.continuableHeader };
}

/**
 * The list `request` asks for: once, or as --state or --watch runs it; the ids asked for that
 * did not come named, an empty list said.
 */
export async function runListRequest(ctx: Context, request: ListRequest): Promise<ListOutcome> {
  const incremental = isIncremental(ctx);
  const ids = request.ids && (await readIds(ctx, request.ids, '--id'));
  let watch: IdWatch | undefined;
  const writerFor = (continues: string | undefined): RecordWriter => {
    const writer = request.writerFor(continues);
    watch = ids && watchIds(writer, ids);
    return watch?.writer ?? writer;
  };
  const once = (hooks?: IncrementalHooks, writer?: RecordWriter): Promise<ListOutcome> =>
    listOnce(ctx, { ...request, ids }, (continues) => writer ?? writerFor(continues), hooks);
  const outcome = incremental ? await incrementalList(ctx, request, once, () => writerFor(undefined)) : await once();
  const { noun } = request.spec;
  // A look-up by ids names those the service did not return; a resumed or --limit-cut run cannot tell.
  if (ids && request.resume === undefined && outcome.written < (request.limit ?? Infinity)) refuseMissingIds(noun, watch?.missing());
  if (outcome.written === 0) ctx.notice(`no ${noun}s found`);
  return outcome;
}

/**
 * The list once through the engine (runList): its plan, the point a --resume token continues
 * from, up to --parallel requests, a live count, into the writer `writerFor` makes (given the
 * header the output being continued already has); `hooks`: an incremental run's.
 */
async function listOnce(
  ctx: Context,
  request: ListRequest,
  writerFor: (continues: string | undefined) => RecordWriter,
  hooks: IncrementalHooks | undefined,
): Promise<ListOutcome> {
  const { spec, version, limit, resume } = request;
  const query = [...request.query, ...request.shown, ...(hooks?.params ?? [])];
  // The sandbox's address changes per run: its tokens belong to the sandbox, not a port.
  const origin = ctx.globals.sandbox ? 'the sandbox' : (await ctx.connection()).baseUrl.origin;
  const named = spec.filters.filter((filter) => filter.refers).map((filter) => filter.param);
  const planOf = (params: QueryParams): ListPlan => ({
    ...listPlan(spec, version, params, { pageSize: request.pageSize, limit, asOf: request.asOf }, request.ids),
    origin,
    named,
    ...(request.local !== undefined && { local: request.local }),
  });
  const given = planOf(query);
  // An incremental run's order is its own, not the query's.
  if (!hooks) refuseUnionSort(spec, given, query);
  if (resume !== undefined) checkResumeToken(given, resume);
  const scheduler = await ctx.scheduler();
  const api = await ctx.api();
  // A channel or tag given by name or id becomes what the service takes (one list request each).
  const plan = planOf(await resolveQuery(new NameResolver(api, scheduler, version), spec.filters, query));
  const start = startPoint(plan, resume);
  const owns = (token: string): boolean => isTokenOf(plan, token);
  if (ctx.resumeFile) refuseAnotherToken(ctx.io, ctx.resumeFile, owns);
  const live = ctx.liveCount(writerFor(start.header), spec.noun);
  try {
    const ended = await runList({
      plan,
      source: hooks ? hooks.source(api.pages(spec, version), plan.phases) : api.pages(spec, version),
      writer: live.writer,
      start,
      scheduler,
      signal: ctx.io.signal,
      pageSize: Math.min(request.pageSize, limit ?? Infinity),
      ...(request.header !== undefined && { header: request.header }),
      ...(limit !== undefined && { limit }),
      ...(ctx.io.stdout.onlyIfWhole !== undefined && { onlyIfWhole: ctx.io.stdout.onlyIfWhole }),
      // A notice takes the live line's place; the count comes back with the next records.
      notice: (message) => {
        live.clear();
        ctx.notice(message);
      },
    });
    return { ...ended, owns };
  } finally {
    // Before the error line, should the list have failed.
    live.clear();
  }
}

/**
 * A list that is the union of two queries (conversations without --status or --priority) comes
 * out as the first query, then the second: sorting it would need a merge by a date the service
 * does not return.
 */
function refuseUnionSort(spec: ResourceSpec, plan: ListPlan, query: QueryParams): void {
  const { requireOneOf: required, sortDates } = spec;
  if (!plan.union || !required || !sortDates || !query.some(([key]) => key === sortDates.param)) return;
  const flags = spec.filters
    .filter((f) => required.params.includes(f.param))
    .map((f) => (f.kind === 'switch' ? `--${f.flag}/--${offFlagOf(f)}` : `--${f.flag}`));
  const sortFlag = spec.filters.find((f) => f.param === sortDates.param)?.flag ?? sortDates.param;
  throw new UsageError(
    `--${sortFlag}: add ${flags.join(' or ')}; without them the list joins two queries, one after the other, which cannot be merged by a date the service does not return`,
  );
}
