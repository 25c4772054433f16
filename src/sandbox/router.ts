/** The API listener's logic without sockets: authentication, routing, method checks, replies. */
import { type Collection, type Route, listReply, singleReply } from './collection.js';
import { API_VERSIONS, type ApiVersion, type RequestContext, type Runtime, type Versions } from './context.js';
import { getConversation, listConversations, patchConversation } from './conversations.js';
import type { FaultPlan } from './faults.js';
import { DEMO_PASSWORD, DEMO_USER } from './fixtures.js';
import { HttpProblem, requestTarget } from './http.js';
import { reports } from './reports.js';
import * as resources from './resources.js';

export interface ApiRequest {
  /** Which listener received it: 'annotations' serves api/1 only, and then 'api' serves no api/1. */
  listener: 'api' | 'annotations';
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

export type Reply = { status: number; body: unknown; headers?: Record<string, string> } | { drop: true };

interface Endpoint extends Route {
  list(ctx: RequestContext): unknown;
  get(ctx: RequestContext, id: string): unknown;
  /** POST on the collection, in the given versions. */
  create?: { versions: Versions; run(ctx: RequestContext, body: string): unknown };
  /** PATCH on a record, in the given versions. */
  update?: { versions: Versions; run(ctx: RequestContext, id: string, body: string): unknown };
}

/**
 * Every collection the sandbox serves, by the name in its path: routes, versions, url building
 * and the by-id lookups all come from here. A plain collection answers through collection.ts;
 * conversations answer with their own functions.
 */
const COLLECTIONS = {
  authors: resources.authors,
  conversations: {
    versions: ['v1.1', 'v1.2', 'v1.3'],
    table: 'conversations',
    list: listConversations,
    get: getConversation,
    update: { versions: ['v1.3'], run: patchConversation },
  },
  channels: resources.channels,
  teams: resources.teams,
  queues: resources.queues,
  tags: resources.tags,
  reports,
  users: resources.users,
  accounts: resources.accounts,
  'annotation-types': resources.annotationTypes,
  annotations: resources.annotations,
} satisfies Readonly<Record<string, Endpoint | Collection<unknown>>>;

export type ResourceName = keyof typeof COLLECTIONS;

function endpoint(name: ResourceName, entry: Endpoint | Collection<unknown>): Endpoint {
  if ('list' in entry) return entry;
  return { ...entry, list: (ctx) => listReply(name, entry, ctx), get: (ctx, id) => singleReply(entry, ctx, id) };
}

/** By path name; a Map, so that no inherited property name (`constructor`) is taken for one. */
const ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map(Object.entries(COLLECTIONS).map(([name, entry]) => [name, endpoint(name as ResourceName, entry)]));

const UNAUTHORIZED = new HttpProblem(401, 'Authentication required: HTTP Basic credentials are missing or wrong', {
  'www-authenticate': 'Basic realm="carectl-sandbox"',
});

function checkCredentials(authorization: string | undefined): void {
  const match = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (!match || Buffer.from(match[1]!, 'base64').toString('utf8') !== `${DEMO_USER}:${DEMO_PASSWORD}`) throw UNAUTHORIZED;
}

function pathSegments(pathname: string): string[] {
  const segments = pathname.split('/').slice(1);
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  try {
    return segments.map((segment) => decodeURIComponent(segment));
  } catch {
    throw new HttpProblem(404, `No such path: ${pathname}`);
  }
}

interface Target {
  endpoint: Endpoint;
  version: ApiVersion | 'api/1';
  id: string | undefined;
}

function resolve(runtime: Runtime, listener: ApiRequest['listener'], pathname: string): Target {
  const segments = pathSegments(pathname);
  const first = segments[0];
  // api/1 on a host of its own (annotationsPort), as the real service has it: each listener
  // answers 404 for the other's paths.
  if (listener === 'annotations' && first !== 'api') throw new HttpProblem(404, `No such path: ${pathname} (this host serves api/1 only)`);
  if (listener === 'api' && first === 'api' && runtime.api1OwnListener) {
    throw new HttpProblem(404, `No such path: ${pathname} (api/1 is served at ${runtime.api1BaseUrl})`);
  }
  return first === 'api' ? resolveApi1(segments, pathname) : resolveVersioned(segments, pathname);
}

const inApi1 = (endpoint: Endpoint): boolean => endpoint.versions[0] === 'api/1';

/** `api/1/ENDPOINT[/ID]`: the annotation endpoints. */
function resolveApi1([, second, third, ...rest]: string[], pathname: string): Target {
  if (second !== '1') throw new HttpProblem(404, `Unknown API version 'api/${second ?? ''}'`);
  const endpoint = ENDPOINTS.get(third ?? '');
  if (!endpoint || !inApi1(endpoint) || rest.length > 1) throw new HttpProblem(404, `No such path: ${pathname}`);
  return { endpoint, version: 'api/1', id: rest[0] };
}

/** `VERSION/RESOURCE[/ID]`: a resource, in a version it exists in. */
function resolveVersioned([first, second, third, ...rest]: string[], pathname: string): Target {
  if (first === '') throw new HttpProblem(404, `No such path: ${pathname}`);
  if (!(API_VERSIONS as readonly string[]).includes(first ?? '')) throw new HttpProblem(404, `Unknown API version '${first ?? ''}'`);
  const version = first as ApiVersion;
  const endpoint = ENDPOINTS.get(second ?? '');
  if (!endpoint || inApi1(endpoint)) throw new HttpProblem(404, `Unknown resource '${second ?? ''}'`);
  const versions = endpoint.versions as readonly ApiVersion[];
  if (!versions.includes(version)) {
    throw new HttpProblem(404, `Resource '${second!}' does not exist in ${version} (it exists in ${versions.join(', ')})`);
  }
  if (rest.length > 0 || third === '') throw new HttpProblem(404, `No such path: ${pathname}`);
  return { endpoint, version, id: third };
}

function methodNotAllowed(method: string, pathname: string, allowed: string[]): HttpProblem {
  return new HttpProblem(405, `Method ${method} is not allowed on ${pathname}; allowed: ${allowed.join(', ')}`, { allow: allowed.join(', ') });
}

/** Authenticates, routes and answers one API request; every failure becomes the JSON error body. */
export function answerApi(runtime: Runtime, faults: FaultPlan, request: ApiRequest, now: number): Reply {
  try {
    checkCredentials(request.authorization);
    const url = requestTarget(request.url);
    const { endpoint, version, id } = resolve(runtime, request.listener, url.pathname);
    const ctx: RequestContext = { runtime, version, query: url.searchParams, now, collections: COLLECTIONS };
    const inVersion = (versions: Versions | undefined): boolean => (versions as readonly string[] | undefined)?.includes(version) === true;
    if (id === undefined) {
      if (request.method === 'GET') {
        if (faults.listPagesExhausted()) throw new HttpProblem(500, 'Internal server error while reading the list (injected fault)');
        const body = endpoint.list(ctx);
        faults.countListPage();
        return { status: 200, body };
      }
      if (request.method === 'POST' && endpoint.create && inVersion(endpoint.create.versions)) {
        const created = endpoint.create.run(ctx, request.body);
        return faults.current.dropPostAfterBody ? { drop: true } : { status: 200, body: created };
      }
      throw methodNotAllowed(request.method, url.pathname, inVersion(endpoint.create?.versions) ? ['GET', 'POST'] : ['GET']);
    }
    if (request.method === 'GET') return { status: 200, body: endpoint.get(ctx, id) };
    if (request.method === 'PATCH' && endpoint.update && inVersion(endpoint.update.versions)) {
      return { status: 200, body: endpoint.update.run(ctx, id, request.body) };
    }
    throw methodNotAllowed(request.method, url.pathname, inVersion(endpoint.update?.versions) ? ['GET', 'PATCH'] : ['GET']);
  } catch (error) {
    const problem = error instanceof HttpProblem ? error : new HttpProblem(500, `Internal sandbox error: ${(error as Error).message}`);
    return { status: problem.status, body: { status: 'error', message: problem.message }, headers: problem.headers };
  }
}
