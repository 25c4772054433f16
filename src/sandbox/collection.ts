/** The generic list and single-record replies shared by all plain collections. */
import { type RequestContext, type ResourceName, type Versions, resourceUrl } from './context.js';
import { type Wire, parseFields, project } from './fields.js';
import { HttpProblem } from './http.js';
import type { Table } from './model.js';
import { type Paging, type SkipOptions, offsetPage, skipPage, tokenPage } from './paging.js';

/** Where a collection is served and which table of SandboxData holds its records. */
export interface Route {
  versions: Versions;
  table: Table;
}

export interface Collection<R> extends Route {
  plural: string;
  singular: string;
  listFields: readonly string[];
  /** When single replies accept more (users: is_active, account; teams: is_active). */
  singleFields?: readonly string[];
  paging: 'skip' | 'offset' | 'token' | 'none';
  /** Variations of skip paging (queues drop prev_page on their last page). */
  skipOptions?: SkipOptions;
  /** reference: id+url unless fields asks for more; full: full record unless fields is sent (authors); always: api/1, no fields parameter. */
  defaultOutput: 'reference' | 'full' | 'always';
  /** v1 channel and account replies have no wrapper key. */
  bareInV1?: boolean;
  /** Validates the list filters and returns the matching records in order; without it, the whole table. */
  select?(ctx: RequestContext): readonly R[];
  wire(record: R, ctx: RequestContext): Wire;
  /** POST on the collection, in the given versions: the reply. */
  create?: { versions: Versions; run(ctx: RequestContext, body: string): unknown };
}

function readFields(ctx: RequestContext, collection: Collection<unknown>, allowed: readonly string[]): string[] | undefined {
  return collection.defaultOutput === 'always' ? undefined : parseFields(ctx.query, allowed, collection.plural);
}

function recordsOf<R>(collection: Collection<R>, ctx: RequestContext): readonly R[] {
  return collection.select ? collection.select(ctx) : (ctx.runtime.data[collection.table] as readonly unknown[] as readonly R[]);
}

export function listReply<R>(name: ResourceName, collection: Collection<R>, ctx: RequestContext): unknown {
  const fields = readFields(ctx, collection as Collection<unknown>, collection.listFields);
  const records = recordsOf(collection, ctx);
  const url = resourceUrl(ctx, name);
  let page: { items: readonly R[]; paging?: Paging };
  if (collection.paging === 'skip') page = skipPage(ctx, records, url, collection.skipOptions);
  else if (collection.paging === 'offset') page = offsetPage(ctx, records, url);
  else if (collection.paging === 'token') page = tokenPage(ctx, records, name);
  else page = { items: records };
  const items = page.items.map((record) => project(collection.wire(record, ctx), fields, collection.defaultOutput !== 'reference'));
  if (collection.bareInV1 && ctx.version === 'v1') return items;
  return page.paging ? { [collection.plural]: items, paging: page.paging } : { [collection.plural]: items };
}

function findOr404<R>(collection: Collection<R>, ctx: RequestContext, id: string): R {
  const record = ctx.runtime.data.byId[collection.table].get(id) as R | undefined;
  if (record === undefined) throw new HttpProblem(404, `No ${collection.singular} with id '${id}'`);
  return record;
}

export function singleReply<R>(collection: Collection<R>, ctx: RequestContext, id: string): unknown {
  const fields = readFields(ctx, collection as Collection<unknown>, collection.singleFields ?? collection.listFields);
  const record = findOr404(collection, ctx, id);
  const out = project(collection.wire(record, ctx), fields, collection.defaultOutput !== 'reference');
  return collection.bareInV1 && ctx.version === 'v1' ? out : { [collection.singular]: out };
}

/** A true/false query parameter, or undefined when absent. */
export function readBoolean(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (raw !== 'true' && raw !== 'false') throw new HttpProblem(400, `${name} must be true or false, got '${raw}'`);
  return raw === 'true';
}

/** Values of a parameter that may be repeated and/or comma-separated. */
export function readList(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
}
