/**
 * The read verbs, `list` and `get`, generated for any resource from its description in the
 * catalogue; a group with verbs of its own (conversations, reports) adds them to its group.
 */
import { Option, type Command } from 'commander';
import { defaultVersion, type FilterSpec, type ResourceSpec, type Version } from '../catalogue/index.js';
import { resumeAsOf } from '../api/resume-token.js';
import { BOTH_GIVEN, fieldsParam, filterParams, offFlagOf, type FilterValues } from '../cli/query-params.js';
import { columnNames, offerColumns, parseFieldsFlag, resolveColumns, resourceColumns, withPaths } from '../cli/columns.js';
import { CarectlError, ExitCode, UsageError } from '../core/errors.js';
import { inOrder } from '../api/scheduler.js';
import { LIST_USES, type Action, type RawOptions } from '../cli/action.js';
import type { Context } from '../cli/context.js';
import { addExamples } from '../cli/help.js';
import { readIds, refuseMissingIds, requireId } from '../cli/ids.js';
import { listSettings, runListRequest, type ListOutcome } from '../cli/list-pipeline.js';
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
  offerColumns(list, { ...resourceColumns(spec), offered: () => withPaths(columnNames(spec, 'list')) });
  list.action(action(read, (ctx, opts) => listResource(ctx, spec, opts), [...LIST_USES, 'state', 'watch']));
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
  offerColumns(get, resourceColumns(spec)).action(action(read, (ctx, opts) => getResource(ctx, spec, opts), ['query']));
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

async function listResource(ctx: Context, spec: ResourceSpec, opts: ListOptions): Promise<ListOutcome> {
  const { printer, version, picked, columns, fieldsQuery } = await readShape(ctx, spec, 'list', opts.fields);
  const { query, asOf } = listQuery(ctx, spec, version, opts.filters);
  noticeIncludedElsewhere(ctx, spec, printer, opts.filters, columns);
  const settings = listSettings(ctx, printer);
  const choices = { computed: spec.computed, picked, known: knownValues(spec, query), most: settings.limit };
  return runListRequest(ctx, {
    ...settings,
    spec,
    version,
    query,
    shown: fieldsQuery,
    asOf,
    ...(spec.listByIds && { ids: opts.ids }),
    writerFor: (continues) => printer.writer('list', columns, { continues, ...choices }),
  });
}

/** The filters' parameters, checked before anything is sent; a resumed list resolves `today` and `7d` as the run it continues did. */
export function listQuery(ctx: Context, spec: ResourceSpec, version: Version, filters: FilterValues): { query: Array<[string, string]>; asOf: number } {
  const asOf = resumeAsOf(ctx.globals.resume) ?? ctx.io.now();
  return { query: checkedFilterParams(spec, version, filters, spec.filters, asOf), asOf };
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
