/**
 * `list` and `get` for every resource, generated from its description in src/resources.ts.
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import type { Context } from '../context.js';
import type { Transport } from '../http/transport.js';
import { runList, startPoint } from '../list-run.js';
import { nextPageLink, PAGING_STYLES, resumeAsOf, type ListPlan, type PageSource } from '../paging.js';
import { BOTH_GIVEN, fieldsParam, filterParams, knownFields, offFlagOf, optionKey, parseFieldsFlag, resolveColumns } from '../query.js';
import { defaultVersion, RESOURCES, unwrapList, unwrapSingle, type FilterSpec, type ResourceSpec, type Version } from '../resources.js';
import { repeatable } from '../repeats.js';
import { readIds } from './ids.js';
import { LIST_USES, type Action } from './action.js';

type Options = Record<string, unknown>;

export function addResourceCommands(program: Command, action: Action): void {
  for (const spec of RESOURCES) {
    const group = program.command(spec.name).description(`read ${spec.noun}s`);
    if (spec.verbs.includes('list')) {
      const list = group
        .command(spec.listByIds ? 'list [ids...]' : 'list')
        .description(spec.listByIds ? `list ${spec.noun}s by id (ids as arguments, --id LIST, or - for stdin)` : `list ${spec.noun}s, all pages`);
      if (spec.listByIds) list.option('--id <list>', 'comma-separated ids');
      addFilterOptions(list, spec.filters);
      list.option('--fields <list>', `fields to fetch and show: ${spec.fields.join(', ')}`);
      addExamples(list, spec.examples.list);
      list.action(action((ctx, opts, args) => listResource(ctx, spec, opts, args[0] as string[] | undefined), LIST_USES));
    }
    if (spec.verbs.includes('get')) {
      const get = group.command('get <id>').description(`show one ${spec.noun}`);
      addFilterOptions(get, spec.filters.filter((f) => f.onGet));
      get.option('--fields <list>', `fields to fetch and show: ${[...spec.fields, ...(spec.singleFields ?? [])].join(', ')}`);
      addExamples(get, spec.examples.get);
      get.action(action((ctx, opts, args) => getResource(ctx, spec, opts, args[0] as string), ['columns']));
    }
  }
}

export function addExamples(command: Command, examples: readonly string[] | undefined): void {
  if (examples?.length) command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}

function addFilterOptions(command: Command, filters: readonly FilterSpec[]): void {
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
          filter.kind === 'enum' ? ` (${filter.values.join(', ')}${filter.repeat ? '; comma-separated' : ''})` : filter.examples ? ` (such as ${filter.examples.join(', ')})` : '';
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
function checkedFilterParams(ctx: Context, spec: ResourceSpec, version: Version, opts: Options, filters: readonly FilterSpec[], now = ctx.io.now()): Array<[string, string]> {
  for (const filter of filters) {
    if (filter.versions && !filter.versions.includes(version) && opts[optionKey(filter.flag)] !== undefined) {
      throw new UsageError(`--${filter.flag} needs --api-version ${filter.versions.join(' or ')} (using ${version})`);
    }
  }
  return filterParams(spec, opts, now, filters);
}

export async function listResource(ctx: Context, spec: ResourceSpec, opts: Options, args: string[] | undefined): Promise<void> {
  const format = await ctx.outputFormat();
  const version = await ctx.apiVersion(spec.versions, defaultVersion(spec));
  const fields = parseFieldsFlag(spec, 'list', opts.fields as string | undefined);
  const columns = resolveColumns([...knownFields(spec, 'list'), ...(spec.sideColumns ?? [])], spec.defaultColumns, ctx.globals.columns, fields);
  // A resumed list resolves `today` and `7d` as the run it continues did.
  const asOf = resumeAsOf(ctx.globals.resume) ?? ctx.io.now();
  const query = [...checkedFilterParams(ctx, spec, version, opts, spec.filters, asOf), ...fieldsParam(spec, 'list', isWhole(format), columns, fields)];
  const limit = ctx.limit;
  const ids = spec.listByIds ? await readIds(ctx, [...(args ?? []), ...((opts.id as string | undefined)?.split(',') ?? [])], '--id') : undefined;
  const plan = { ...listPlan(spec, version, query, { pageSize: ctx.pageSize, limit }, ids), asOf };
  const start = startPoint(plan, ctx.globals.resume);
  // csv and tsv are made to be continued with >>: a run that continues one leaves its header out.
  const header = (format === 'csv' || format === 'tsv') && ctx.globals.header ? format : undefined;

  const transport = await ctx.transport();
  const written = await runList({
    plan,
    source: pageSource(transport, spec),
    writer: ctx.writer(format, 'list', columns, { header: header === undefined || start.header !== header }),
    start,
    ...(header !== undefined && { header }),
    ...(limit !== undefined && { limit }),
    notice: (message) => ctx.notice(message),
  });
  if (written === 0) ctx.notice(`no ${spec.noun}s found`);
}

export async function getResource(ctx: Context, spec: ResourceSpec, opts: Options, id: string): Promise<void> {
  const format = await ctx.outputFormat();
  const version = await ctx.apiVersion(spec.versions, defaultVersion(spec));
  const fields = parseFieldsFlag(spec, 'single', opts.fields as string | undefined);
  const columns = resolveColumns([...knownFields(spec, 'single'), ...(spec.sideColumns ?? [])], spec.defaultColumns, ctx.globals.columns, fields);
  const onGet = spec.filters.filter((f) => f.onGet);
  const query = [...checkedFilterParams(ctx, spec, version, opts, onGet), ...fieldsParam(spec, 'single', isWhole(format), columns, fields)];
  const record = await fetchSingle(await ctx.transport(), spec, version, requireId(id, spec), query);
  const writer = ctx.writer(format, 'single', columns);
  await writer.write(record);
  await writer.end();
}

/** An id that goes into a path: `.` and `..` would name another address (`tags/..` is the API root). */
export function requireId(id: string, spec: { noun: string }): string {
  const trimmed = id.trim();
  if (trimmed === '') throw new UsageError(`the ${spec.noun} id is required`);
  if (trimmed === '.' || trimmed === '..') throw new UsageError(`"${trimmed}" is not a ${spec.noun} id`);
  return trimmed;
}

export async function fetchSingle(transport: Transport, spec: ResourceSpec, version: Version, id: string, query: ReadonlyArray<readonly [string, string]>): Promise<Record<string, unknown>> {
  const body = await transport.get(transport.url(`${version}/${spec.path}/${encodeURIComponent(id)}`, query));
  const record = unwrapSingle(spec, body);
  return attachSideloads(spec, body, [record])[0] as Record<string, unknown>;
}

function isWhole(format: string): boolean {
  return format === 'json' || format === 'ndjson';
}

/**
 * The first-page addresses of a list. A conversation list with neither status nor priority
 * becomes the union of the is_priority=true and is_priority=false lists; an authors list
 * becomes one request per chunk of ids.
 */
export function listPlan(
  spec: ResourceSpec,
  version: Version,
  query: ReadonlyArray<readonly [string, string]>,
  size: { pageSize: number; limit?: number | undefined },
  ids?: string[],
): ListPlan {
  const path = `${version}/${spec.path}`;
  const sizeParam = PAGING_STYLES[spec.paging].sizeParam;
  // Pages no larger than --limit needs; a resumed run sets its own (see decodeResumeToken).
  const pageSize = Math.min(size.pageSize, size.limit ?? Infinity);
  const base: Array<readonly [string, string]> = sizeParam ? [...query, [sizeParam, String(pageSize)]] : [...query];
  const address = (params: ReadonlyArray<readonly [string, string]>): string => `${path}?${new URLSearchParams(params as Array<[string, string]>).toString()}`;
  if (spec.listByIds && ids) {
    // Chunks are the plan's phases, so they must not depend on --limit: a token printed by a
    // --limit run would not fit the plan of the run continuing it.
    const chunk = Math.min(spec.listByIds.max, size.pageSize);
    const chunks: string[] = [];
    for (let i = 0; i < ids.length; i += chunk) chunks.push(address([[spec.listByIds.param, ids.slice(i, i + chunk).join(',')], ...base]));
    return { phases: chunks, sameCommand: 'the same ids, filters and --page-size' };
  }
  const required = spec.requireOneOf;
  if (required && !query.some(([key]) => required.params.includes(key))) {
    return { phases: required.union.values.map((value) => address([[required.union.param, value], ...base])) };
  }
  return { phases: [address(base)] };
}

export function pageSource(transport: Transport, spec: ResourceSpec): PageSource {
  const style = PAGING_STYLES[spec.paging];
  return {
    async fetch(url) {
      const body = await transport.get(transport.url(url));
      const link = nextPageLink(body);
      const records = attachSideloads(spec, body, unwrapList(spec, body));
      return { records, next: style.next(url, link === null ? null : relativeLink(transport, link), records.length) };
    },
  };
}

/**
 * A paging link as an address relative to the base. A link to another origin stays absolute:
 * the transport refuses it when it is followed, after the page that carried it is written.
 */
function relativeLink(transport: Transport, link: string): string {
  const url = new URL(link, transport.baseUrl);
  if (url.origin !== transport.baseUrl.origin) return url.href;
  const basePath = transport.baseUrl.pathname.replace(/\/?$/, '/');
  const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) : url.pathname.replace(/^\//, '');
  return path + url.search;
}

/** With include=content (notes, actions), each record carries its own items, found by id. */
export function attachSideloads(spec: ResourceSpec, body: unknown, records: Record<string, unknown>[]): Record<string, unknown>[] {
  if (!spec.sideloads || !body || typeof body !== 'object' || Array.isArray(body)) return records;
  for (const { key, ids } of spec.sideloads) {
    const items = (body as Record<string, unknown>)[key];
    if (!Array.isArray(items)) continue;
    const byId = new Map<string, unknown>();
    for (const item of items as Array<{ id?: unknown }>) byId.set(String(item.id), item);
    for (const record of records) {
      const wanted = record[ids];
      if (Array.isArray(wanted)) record[key] = wanted.map((id) => byId.get(String(id))).filter((item) => item !== undefined);
    }
  }
  return records;
}
