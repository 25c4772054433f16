/**
 * The read verbs, `list` and `get`, generated for any resource from its description in the
 * catalogue; a group with verbs of its own (conversations, reports) adds them to its group.
 */
import { Option, type Command } from 'commander';
import { defaultVersion, type FilterSpec, type ResourceSpec, type Version } from '../catalogue/index.js';
import { runList, startPoint } from '../api/list-run.js';
import { checkResumeToken, isTokenOf, resumeAsOf } from '../api/resume-token.js';
import { listPlan, type ListPlan, type PageSource } from '../api/paging.js';
import { NameResolver, resolveQuery } from '../api/names.js';
import { incrementalList, isIncremental } from './incremental.js';
import { BOTH_GIVEN, fieldsParam, filterParams, offFlagOf, type FilterValues } from '../api/query.js';
import { columnNames, parseFieldsFlag, resolveColumns, resourceColumns } from '../cli/columns.js';
import { CarectlError, ExitCode, UsageError } from '../core/errors.js';
import { inOrder } from '../api/scheduler.js';
import { LIST_USES, type Action, type RawOptions } from '../cli/action.js';
import type { Context } from '../cli/context.js';
import { addExamples } from '../cli/help.js';
import { readIds, refuseMissingIds, requireId, watchIds, type IdWatch } from '../cli/ids.js';
import type { RecordWriter } from '../output/index.js';
import type { Printer } from '../output/printer.js';
import { repeatable } from '../cli/repeats.js';

/** A resource group with verbs beyond list and get: what the root help says of it, and its verbs. */
export interface OwnGroup {
  description: string;
  addVerbs(group: Command, action: Action): void;
}

/** The read verbs a resource's description names, for its group. */
export function addReadVerbs(group: Command, spec: ResourceSpec, action: Action): void {
  if (spec.verbs.includes('list')) addListVerb(group, spec, action);
  if (spec.verbs.includes('get')) addGetVerb(group, spec, action);
}

/** `list`'s options: the resource's filters by flag, --fields, and the ids of a list by ids. */
export interface ListOptions {
  filters: FilterValues;
  fields: string | undefined;
  /** Ids as arguments and --id values, in order (lists by ids only). */
  ids: string[];
}

/** `get`'s options: the filters that shape a single reply (include), --fields, the id. */
export interface GetOptions {
  filters: FilterValues;
  fields: string | undefined;
  /** One id, several, or `-` for stdin. */
  ids: string[];
}

/** Commander's property name for a long flag (`assigned-to` → `assignedTo`). */
function optionKey(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

export function readFilters(raw: RawOptions, filters: readonly FilterSpec[]): FilterValues {
  const values: Record<string, unknown> = {};
  for (const filter of filters) {
    for (const flag of [filter.flag, ...(filter.kind === 'switch' && filter.offFlag ? [filter.offFlag] : [])]) {
      const value = raw[optionKey(flag)];
      if (value !== undefined) values[flag] = value;
    }
  }
  return values as FilterValues;
}

export function addListVerb(group: Command, spec: ResourceSpec, action: Action): void {
  const list = group
    .command(spec.listByIds ? 'list [ids...]' : 'list')
    .description(spec.listByIds ? `list ${spec.noun}s by id (ids as arguments, --id LIST, or - for stdin)` : `list ${spec.noun}s, all pages`);
  if (spec.listByIds) list.option('--id <list>', 'comma-separated ids');
  addFilterOptions(list, spec.filters);
  list.option('--fields <list>', `fields to fetch and show: ${spec.fields.join(', ')}`);
  addExamples(list, spec.examples.list);
  const read = (raw: RawOptions, args: readonly unknown[]): ListOptions => ({
    filters: readFilters(raw, spec.filters),
    fields: raw.fields as string | undefined,
    ids: spec.listByIds ? [...((args[0] as string[] | undefined) ?? []), ...((raw.id as string | undefined)?.split(',') ?? [])] : [],
  });
  list.action(action(read, (ctx, opts) => listResource(ctx, spec, opts), [...LIST_USES, 'state', 'watch'], resourceColumns(spec)));
}

export function addGetVerb(group: Command, spec: ResourceSpec, action: Action): void {
  const onGet = spec.filters.filter((f) => f.onGet);
  const get = group.command('get <ids...>').description(`show one ${spec.noun}, or several (ids, or - for stdin) as rows of a list`);
  addFilterOptions(get, onGet);
  get.option('--fields <list>', `fields to fetch and show: ${[...spec.fields, ...(spec.singleFields ?? [])].join(', ')}`);
  addExamples(get, spec.examples.get);
  const read = (raw: RawOptions, args: readonly unknown[]): GetOptions => ({
    filters: readFilters(raw, onGet),
    fields: raw.fields as string | undefined,
    ids: args[0] as string[],
  });
  get.action(action(read, (ctx, opts) => getResource(ctx, spec, opts), ['query'], resourceColumns(spec)));
}

export function addFilterOptions(command: Command, filters: readonly FilterSpec[]): void {
  for (const filter of filters) {
    switch (filter.kind) {
      case 'switch': {
        command.addOption(new Option(`--${filter.flag}`, filter.help));
        command.addOption(new Option(`--${offFlagOf(filter)}`, filter.offHelp));
        // `--x` and `--no-x` share one commander value (the last wins); both given is a conflict.
        const seen = new Set<string>();
        for (const name of [filter.flag, offFlagOf(filter)]) {
          command.on(`option:${name}`, () => {
            seen.add(name);
            if (seen.size === 2 && !filter.offFlag) command.setOptionValue(optionKey(filter.flag), BOTH_GIVEN);
          });
        }
        break;
      }
      case 'text':
      case 'enum': {
        const values =
          filter.kind === 'enum'
            ? ` (${filter.values.join(', ')}${filter.repeat ? '; comma-separated' : ''})`
            : filter.examples
              ? ` (such as ${filter.examples.join(', ')})`
              : '';
        const option = new Option(`--${filter.flag} <${filter.valueName}>`, `${filter.help}${values}`);
        if (filter.repeat) repeatable(option).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
        command.addOption(option);
        break;
      }
      case 'range':
        command.addOption(new Option(`--${filter.flag} <range>`, filter.help));
        break;
    }
  }
}

/** Parameters of the filters given, after the checks that must precede any request. */
function checkedFilterParams(spec: ResourceSpec, version: Version, values: FilterValues, filters: readonly FilterSpec[], now: number): Array<[string, string]> {
  for (const filter of filters) {
    if (filter.versions && !filter.versions.includes(version) && values[filter.flag] !== undefined) {
      throw new UsageError(`--${filter.flag} needs --api-version ${filter.versions.join(' or ')} (using ${version})`);
    }
  }
  return filterParams(spec, values, now, filters);
}

/** What a read asks for and shows: the printer, the version, and the columns and fields of its output. */
async function readShape(ctx: Context, spec: ResourceSpec, shape: 'list' | 'single', fieldsFlag: string | undefined) {
  const printer = await ctx.printer();
  const version = await ctx.apiVersion(spec.versions, defaultVersion(spec));
  const fields = parseFieldsFlag(spec, shape, fieldsFlag);
  const picked = ctx.globals.columns !== undefined || fields !== undefined;
  const columns = resolveColumns(columnNames(spec, shape), spec.defaultColumns, ctx.globals.columns, fields);
  const fieldsQuery = fieldsParam(spec, shape, printer.needsAllFields(shape, picked), columns, fields);
  return { printer, version, picked, columns, fieldsQuery };
}

/**
 * The values an enum filter on a field names are the values that field can hold (a conversation's
 * status); with the filter given, the values it asked for (`--status unread`: a status column as
 * wide as `unread`; a reply that holds others anyway still gets each record on one line).
 */
export function knownValues(spec: ResourceSpec, query: ReadonlyArray<readonly [string, string]>): Record<string, readonly string[]> {
  const known: Record<string, readonly string[]> = {};
  for (const filter of spec.filters) {
    if (filter.kind !== 'enum' || !spec.fields.includes(filter.param)) continue;
    const asked = query.filter(([param]) => param === filter.param).map(([, value]) => value);
    known[filter.param] = asked.length > 0 ? asked : filter.values;
  }
  return known;
}

async function listResource(ctx: Context, spec: ResourceSpec, opts: ListOptions): Promise<void> {
  const { printer, version, picked, columns, fieldsQuery } = await readShape(ctx, spec, 'list', opts.fields);
  const { query, asOf } = listQuery(ctx, spec, version, opts.filters);
  noticeIncludedElsewhere(ctx, spec, printer, opts.filters, columns);
  const incremental = isIncremental(ctx);
  const ids = spec.listByIds ? await readIds(ctx, opts.ids, '--id') : undefined;
  let watch: IdWatch | undefined;
  const writerFor = (continues: string | undefined): RecordWriter => {
    const writer = printer.writer('list', columns, { continues, computed: spec.computed, picked, known: knownValues(spec, query), most: ctx.limit });
    watch = ids && watchIds(writer, ids);
    return watch?.writer ?? writer;
  };
  const run: ListRun = { version, query: [...query, ...fieldsQuery], asOf, ids, noun: spec.noun };
  const written = incremental
    ? await incrementalList(
        ctx,
        spec,
        version,
        query,
        (hooks, writer) =>
          streamList(ctx, spec, { ...run, query: [...run.query, ...hooks.params], source: hooks.source }, (continues) => writer ?? writerFor(continues)),
        () => writerFor(undefined),
      )
    : await streamList(ctx, spec, run, writerFor);
  // A look-up by ids names those the service did not return; a resumed or --limit-cut run cannot tell.
  if (ids && ctx.globals.resume === undefined && written < (ctx.limit ?? Infinity)) refuseMissingIds(spec.noun, watch?.missing());
  if (written === 0) ctx.notice(`no ${spec.noun}s found`);
}

/** The filters' parameters, checked before anything is sent; a resumed list resolves `today` and `7d` as the run it continues did. */
export function listQuery(ctx: Context, spec: ResourceSpec, version: Version, filters: FilterValues): { query: Array<[string, string]>; asOf: number } {
  const asOf = resumeAsOf(ctx.globals.resume) ?? ctx.io.now();
  return { query: checkedFilterParams(spec, version, filters, spec.filters, asOf), asOf };
}

export interface ListRun {
  version: Version;
  query: ReadonlyArray<readonly [string, string]>;
  asOf: number;
  ids?: string[] | undefined;
  /** What the live count counts. */
  noun: string;
  /** What carectl filters itself (ListPlan.local). */
  local?: string | undefined;
  /** An incremental list's page source around the client's (src/api/incremental.ts); its order is its own, not the query's. */
  source?: (inner: PageSource, phases: readonly string[]) => PageSource;
}

/**
 * A list of `spec` through the list engine (runList): its plan, the point a --resume token
 * continues from, up to --parallel requests, a live count, into the writer `writerFor` makes (given
 * the header the output being continued already has). How many records were written.
 */
export async function streamList(ctx: Context, spec: ResourceSpec, run: ListRun, writerFor: (continues: string | undefined) => RecordWriter): Promise<number> {
  const printer = await ctx.printer();
  const limit = ctx.limit;
  // The sandbox's address changes per run: its tokens belong to the sandbox, not a port.
  const origin = ctx.globals.sandbox ? 'the sandbox' : (await ctx.connection()).baseUrl.origin;
  const named = spec.filters.filter((filter) => filter.refers).map((filter) => filter.param);
  const planOf = (query: ReadonlyArray<readonly [string, string]>): ListPlan => ({
    ...listPlan(spec, run.version, query, { pageSize: ctx.pageSize, limit, asOf: run.asOf }, run.ids),
    origin,
    named,
    ...(run.local !== undefined && { local: run.local }),
  });
  const given = planOf(run.query);
  if (!run.source) refuseUnionSort(spec, given, run.query);
  if (ctx.globals.resume !== undefined) checkResumeToken(given, ctx.globals.resume);
  const scheduler = await ctx.scheduler();
  const api = await ctx.api();
  // A channel or tag given by name or id becomes what the service takes (one list request each).
  const plan = planOf(await resolveQuery(new NameResolver(api, scheduler, run.version), spec.filters, run.query));
  const start = startPoint(plan, ctx.globals.resume);
  ctx.claimTokens((token) => isTokenOf(plan, token));
  const header = printer.continuableHeader;
  const live = ctx.liveCount(writerFor(start.header), run.noun);
  try {
    return await runList({
      plan,
      source: run.source ? run.source(api.pages(spec, run.version), plan.phases) : api.pages(spec, run.version),
      writer: live.writer,
      start,
      scheduler,
      signal: ctx.io.signal,
      pageSize: Math.min(ctx.pageSize, limit ?? Infinity),
      ...(header !== undefined && { header }),
      ...(limit !== undefined && { limit }),
      stoppedAt: (token) => {
        ctx.listStoppedAt = token;
      },
      ...(ctx.io.stdout.onlyIfWhole !== undefined && { onlyIfWhole: ctx.io.stdout.onlyIfWhole }),
      // A notice takes the live line's place; the count comes back with the next records.
      notice: (message) => {
        live.clear();
        ctx.notice(message);
      },
    });
  } finally {
    // Before the error line, should the list have failed.
    live.clear();
  }
}

/**
 * `--include` in a row format (table, csv, tsv): a row holds the record's own fields, so the
 * included items would silently be missing; the notice says where they are.
 */
function noticeIncludedElsewhere(ctx: Context, spec: ResourceSpec, printer: Printer, filters: FilterValues, columns: readonly string[]): void {
  const included = (filters as Record<string, unknown>).include as string[] | undefined;
  if (printer.wholeRecords || !included?.length) return;
  // Those the columns show (--columns id,content.text) are not missing.
  const missing = included
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '' && !columns.some((column) => column.split('.')[0] === value));
  if (missing.length === 0) return;
  const content = missing.includes('content') ? `, or one row per content item with carectl ${spec.name} content and the same filters` : '';
  ctx.notice(
    `--include ${missing.join(',')}: ${printer.format} rows hold each ${spec.noun}'s own fields; the included items are in -o json or -o ndjson${content}`,
  );
}

/**
 * A list that is the union of two queries (conversations without --status or --priority) comes
 * out as the first query, then the second: sorting it would need a merge by a date the service
 * does not return.
 */
function refuseUnionSort(spec: ResourceSpec, plan: ListPlan, query: ReadonlyArray<readonly [string, string]>): void {
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

async function getResource(ctx: Context, spec: ResourceSpec, opts: GetOptions): Promise<void> {
  const [first] = opts.ids;
  if (opts.ids.length === 1 && first !== undefined && first !== '-') return getOne(ctx, spec, opts, first);
  // Several: each record as `get` reads it, written as the rows of a list in the order given; an unknown id is named at the end, the others printed.
  const { printer, version, picked, columns, fieldsQuery } = await readShape(ctx, spec, 'single', opts.fields);
  const query = [
    ...checkedFilterParams(
      spec,
      version,
      opts.filters,
      spec.filters.filter((f) => f.onGet),
      ctx.io.now(),
    ),
    ...fieldsQuery,
  ];
  const ids = (await readIds(ctx, opts.ids, '-')).map((id) => requireId(id, spec));
  const api = await ctx.api();
  const writer = printer.writer('list', columns, { computed: spec.computed, picked });
  const missing: string[] = [];
  try {
    await inOrder(
      await ctx.scheduler(),
      ids,
      (id, slot) => api.fetchRecord(spec, version, id, query, { throttle: slot.throttle }).then((record) => ({ id, record }), unlessNotFound(id)),
      async ({ id, record }) => (record ? writer.write(record) : void missing.push(id)),
      { stop: ctx.io.signal },
    );
  } finally {
    await writer.end();
  }
  refuseMissingIds(spec.noun, missing);
}

/** A 404 for one id of several is that id missing, not the end of the run. */
function unlessNotFound(id: string): (error: unknown) => { id: string; record: undefined } {
  return (error) => {
    if (error instanceof CarectlError && error.exitCode === ExitCode.notFound) return { id, record: undefined };
    throw error;
  };
}

async function getOne(ctx: Context, spec: ResourceSpec, opts: GetOptions, id: string): Promise<void> {
  const { printer, version, picked, columns, fieldsQuery } = await readShape(ctx, spec, 'single', opts.fields);
  const onGet = spec.filters.filter((f) => f.onGet);
  const query = [...checkedFilterParams(spec, version, opts.filters, onGet, ctx.io.now()), ...fieldsQuery];
  const record = await (await ctx.api()).fetchRecord(spec, version, requireId(id, spec), query);
  const writer = printer.writer('single', columns, { computed: spec.computed, picked });
  await writer.write(record);
  await writer.end();
}
