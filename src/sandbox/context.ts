/** What a request handler sees: the shared runtime, the version segment and the query. */
import type { LiveNight } from './live.js';
import type { SandboxData } from './model.js';
import type { ResourceName } from './router.js';

export type { ResourceName };

export const API_VERSIONS = ['v1', 'v1.1', 'v1.2', 'v1.3'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

/** Where a collection is served: the versions it exists in (the spec's Versioning table), or api/1. */
export type Versions = readonly ApiVersion[] | readonly ['api/1'];

/** State shared by all requests of one sandbox. */
export interface Runtime {
  data: SandboxData;
  baseUrl: string;
  /** The origin serving api/1: baseUrl, or the annotations listener's when it has one. */
  api1BaseUrl: string;
  /** api/1 has a listener of its own (annotationsPort): the main listener answers 404 there. */
  api1OwnListener: boolean;
  downloadBaseUrl: string;
  now(): number;
  reportDelayMs: number;
  /** Download addresses go through the listener's redirect (the redirectDownloads fault). */
  redirectDownloads(): boolean;
  /** The live night (the live option), caught up with the clock before each API request is answered. */
  live?: LiveNight;
}

export interface RequestContext {
  runtime: Runtime;
  /** 'api/1' for the annotation endpoints. */
  version: ApiVersion | 'api/1';
  query: URLSearchParams;
  /** now() read once per request, so one reply is consistent. */
  now: number;
  /** Every collection's versions, for the urls of records (router.ts's list). */
  collections: Readonly<Record<ResourceName, { versions: Versions }>>;
}

export interface Reference {
  id: string | number;
  url: string;
}

/**
 * Absolute URL of a record (or of a collection when id is omitted): in the request's version
 * when the resource exists there, else in the newest version that has it (accounts only in v1,
 * users only in v1.2, ...); api/1 collections at the api/1 origin.
 */
export function resourceUrl(ctx: RequestContext, resource: ResourceName, id?: string | number): string {
  const versions: readonly string[] = ctx.collections[resource].versions;
  const collection =
    versions[0] === 'api/1'
      ? `${ctx.runtime.api1BaseUrl}/api/1/${resource}`
      : `${ctx.runtime.baseUrl}/${versions.includes(ctx.version) ? ctx.version : versions[versions.length - 1]}/${resource}`;
  return id === undefined ? collection : `${collection}/${encodePathId(String(id))}`;
}

/** Author ids keep their colon readable (`authors/f:123`); everything else is escaped. */
function encodePathId(id: string): string {
  return encodeURIComponent(id).replace(/%3A/gi, ':');
}

export function ref(ctx: RequestContext, resource: ResourceName, id: string | number): Reference {
  return { id, url: resourceUrl(ctx, resource, id) };
}
