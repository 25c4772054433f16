/** The generic list and single-record replies shared by all plain resources. */
import { type RequestContext, type ResourceName, resourceUrl } from './context.js';
import { type Wire, parseFields, project } from './fields.js';
import { HttpProblem } from './http.js';
import type { SandboxData } from './model.js';
import { type Paging, type SkipOptions, offsetPage, skipPage, tokenPage } from './paging.js';

export type Api1Endpoint = 'annotation-types' | 'annotations';

export interface Collection<R> {
  /** A versioned resource, or an api/1 endpoint. */
  resource: ResourceName | Api1Endpoint;
  plural: string;
  singular: string;
  listFields: readonly string[];
  /** Single replies may accept more (users: is_active, account; teams: is_active). */
  singleFields: readonly string[];
  paging: 'skip' | 'offset' | 'token' | 'none';
  /** Variations of skip paging (queues drop prev_page on their last page). */
  skipOptions?: SkipOptions;
  /** reference: id+url unless fields asks for more; full: full record unless fields is sent (authors); always: api/1, no fields parameter. */
  defaultOutput: 'reference' | 'full' | 'always';
  /** v1 channel and account replies have no wrapper key. */
  bareInV1?: boolean;
  find(data: SandboxData, id: string): R | undefined;
  /** Validates the list filters and returns the matching records in order. */
  select(ctx: RequestContext): readonly R[];
  wire(record: R, ctx: RequestContext): Wire;
}

export function collectionUrl(ctx: RequestContext, resource: ResourceName | Api1Endpoint): string {
  return resource === 'annotation-types' || resource === 'annotations' ? `${ctx.runtime.api1BaseUrl}/api/1/${resource}` : resourceUrl(ctx, resource);
}

function readFields(ctx: RequestContext, collection: Collection<unknown>, allowed: readonly string[]): string[] | undefined {
  return collection.defaultOutput === 'always' ? undefined : parseFields(ctx.query, allowed, collection.plural);
}

export function listReply<R>(collection: Collection<R>, ctx: RequestContext): unknown {
  const fields = readFields(ctx, collection as Collection<unknown>, collection.listFields);
  const records = collection.select(ctx);
  const url = collectionUrl(ctx, collection.resource);
  let page: { items: readonly R[]; paging?: Paging };
  if (collection.paging === 'skip') page = skipPage(ctx, records, url, collection.skipOptions);
  else if (collection.paging === 'offset') page = offsetPage(ctx, records, url);
  else if (collection.paging === 'token') page = tokenPage(ctx, records, collection.resource);
  else page = { items: records };
  const items = page.items.map((record) => project(collection.wire(record, ctx), fields, collection.defaultOutput !== 'reference'));
  if (collection.bareInV1 && ctx.version === 'v1') return items;
  return page.paging ? { [collection.plural]: items, paging: page.paging } : { [collection.plural]: items };
}

export function findOr404<R>(collection: Collection<R>, ctx: RequestContext, id: string): R {
  const record = collection.find(ctx.runtime.data, id);
  if (record === undefined) throw new HttpProblem(404, `No ${collection.singular} with id '${id}'`);
  return record;
}

export function singleReply<R>(collection: Collection<R>, ctx: RequestContext, id: string): unknown {
  const fields = readFields(ctx, collection as Collection<unknown>, collection.singleFields);
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
