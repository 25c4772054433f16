/** From a resource and its query to the first-page addresses of a list (a ListPlan). */
import type { QueryParams } from '../http/transport.js';
import { PAGING_STYLES, type ResourceSpec, type Version } from './catalogue/index.js';
import type { ListPlan } from './paging.js';
import { sliceRule } from './slices.js';

export interface PlanOptions {
  pageSize: number;
  limit?: number | undefined;
  /** The moment relative dates were resolved at; slices bound their open side by its next day. */
  asOf?: number;
}

/**
 * The first-page addresses of a list. A conversation list with neither status nor priority
 * becomes the union of the is_priority=true and is_priority=false lists; an authors list
 * becomes one request per chunk of ids.
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
    // Chunks are the plan's phases, so they must not depend on --limit: a token printed by a
    // --limit run would not fit the plan of the run continuing it.
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
