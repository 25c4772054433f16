/** From a resource and its query to the first-page addresses of a list (a ListPlan). */
import type { QueryParams } from '../http/transport.js';
import { PAGING_STYLES, type ResourceSpec, type Version } from './catalogue/index.js';
import type { ListPlan } from './paging.js';
import { sliceRule } from './slices.js';

export interface PlanOptions {
  pageSize: number;
  limit?: number | undefined;
  /** The moment relative dates were resolved at (a token carries it: a resumed run asks for the same dates). */
  asOf?: number;
}

/**
 * The first-page addresses of a list: one, a union where the service requires a filter the query
 * lacks (conversations: is_priority true and false), or a list by ids in chunks (authors).
 */
export function listPlan(spec: ResourceSpec, version: Version, query: QueryParams, options: PlanOptions, ids?: string[]): ListPlan {
  const path = `${version}/${spec.path}`;
  const sizeParam = PAGING_STYLES[spec.paging].sizeParam;
  // Pages no larger than --limit needs; a resumed run sets its own (see decodeResumeToken).
  const pageSize = Math.min(options.pageSize, options.limit ?? Infinity);
  const asOf = options.asOf === undefined ? {} : { asOf: options.asOf };
  const base: Array<readonly [string, string]> = sizeParam ? [...query, [sizeParam, String(pageSize)]] : [...query];
  const address = (params: QueryParams): string => `${path}?${new URLSearchParams(params as Array<[string, string]>).toString()}`;
  if (spec.listByIds && ids) {
    // Chunks are phases, so not sized by --limit: a --limit run's token must fit the run continuing it.
    const chunk = Math.min(spec.listByIds.max, options.pageSize);
    const chunks: string[] = [];
    for (let i = 0; i < ids.length; i += chunk) chunks.push(address([[spec.listByIds.param, ids.slice(i, i + chunk).join(',')], ...base]));
    return { phases: chunks, sameCommand: 'the same ids, filters and --page-size', ...asOf };
  }
  const slicing = sliceRule(spec, query);
  const sliced = { ...(slicing && { slicing }), ...asOf };
  const required = spec.requireOneOf;
  if (required && !query.some(([key]) => required.params.includes(key))) {
    return { phases: required.union.values.map((value) => address([[required.union.param, value], ...base])), union: true, ...sliced };
  }
  return { phases: [address(base)], ...sliced };
}
