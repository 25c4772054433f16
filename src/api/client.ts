/**
 * The API client: every request carectl makes to the service goes through here, addressed by
 * the resource catalogue (path, version, envelope, side-loads), never by hand in a command. It
 * knows nothing of the command line; the transport below it knows nothing of resources.
 */
import { BadReplyError, UsageError } from '../core/errors.js';
import { idText, stringifyJson } from '../core/exact-json.js';
import type { QueryParams, Throttle, Transport } from '../http/transport.js';
import { linkElsewhereMessage } from '../http/link-elsewhere.js';
import { unwrapList, unwrapSingle, type ResourceSpec, type Version } from './catalogue/index.js';
import { PagingError } from './page-guard.js';
import { nextPageLink, nextStep, type PageSource } from './paging.js';

export type ApiRecord = Record<string, unknown>;

export class ApiClient {
  /**
   * `annotations`: the transport to the api/1 form's own address (the real service serves it
   * from a host of its own); its paging links are checked against that origin.
   */
  constructor(
    readonly transport: Transport,
    private readonly annotations: Transport = transport,
    /** Says on stderr what a reply left out (see attachSideloads). */
    private readonly notice?: (line: string) => void,
  ) {}

  /** Where a version's requests go. */
  private transportFor(version: Version): Transport {
    return version === 'api/1' ? this.annotations : this.transport;
  }

  /** The address of one record (`v1.3/conversations/500001`). */
  recordUrl(spec: ResourceSpec, version: Version, id: string, query: QueryParams = []): URL {
    return this.transportFor(version).url(`${version}/${spec.path}/${encodeURIComponent(id)}`, query);
  }

  /** One record, unwrapped, with its side-loaded items attached; `deadline`: see RequestOptions. */
  async fetchRecord(
    spec: ResourceSpec,
    version: Version,
    id: string,
    query: QueryParams,
    limits: { throttle?: Throttle; deadline?: number } = {},
  ): Promise<ApiRecord> {
    // The check inside the transport's retries unwraps the reply once; its record is kept.
    const transport = this.transportFor(version);
    let record: ApiRecord = {};
    const check = (reply: unknown): void => {
      record = unwrapSingle(spec, reply);
      // Another record than the one asked for (a proxy's cache, a service's redirect) would be
      // printed, or updated with its tags, as if it were this one.
      if (!spec.idless && !sameId(transport, record.id, id))
        throw new BadReplyError(`unexpected reply: the service sent ${spec.noun} ${idText(record.id)} for ${spec.noun} ${id}`);
    };
    const body = await transport.request('GET', this.recordUrl(spec, version, id, query), { idempotent: true, check, ...limits });
    return attachSideloads(spec, body, [record], this.notice)[0] as ApiRecord;
  }

  /**
   * PATCH of one record; the body is absolute (it replaces), so it may be repeated. Only the
   * documented success, the record's envelope naming that id, says it was applied: a 200 with
   * the spec's error body, an empty 202, another record, are failures in the service's words.
   */
  async patchRecord(spec: ResourceSpec, version: Version, id: string, body: unknown, throttle?: Throttle): Promise<ApiRecord> {
    const transport = this.transportFor(version);
    const reply = await transport.request('PATCH', this.recordUrl(spec, version, id), { body, idempotent: true, ...(throttle && { throttle }) });
    const record = isObject(reply) ? reply[spec.envelope.single] : undefined;
    // The spec's error body ({status: "error", message}) is a failure even beside a record naming the id.
    if (isObject(record) && sameId(transport, record.id, id) && isObject(reply) && reply.status !== 'error') return record;
    throw new BadReplyError(`the service did not confirm the update: ${unconfirmedReason(spec, reply, record)}`);
  }

  /** POST of a new record: never repeated once it may have arrived (it would create twice). */
  async createRecord(spec: ResourceSpec, version: Version, body: unknown): Promise<ApiRecord | undefined> {
    const transport = this.transportFor(version);
    const reply = await transport.request('POST', transport.url(`${version}/${spec.path}`), { body, idempotent: false });
    return reply === null ? undefined : unwrapSingle(spec, reply);
  }

  /** Pages of a list, each page's next address found by the resource's paging style. */
  pages(spec: ResourceSpec, version: Version): PageSource {
    const rules = { style: spec.paging, ...(spec.sortDates && { sort: { param: spec.sortDates.param, default: spec.sortDates.default } }) };
    const transport = this.transportFor(version);
    return {
      fetch: async (url, base, throttle) => {
        // The check inside the transport's retries unwraps (and checks) each record once; they are kept.
        let unwrapped: ApiRecord[] = [];
        const check = (reply: unknown): void => void (unwrapped = unwrapList(spec, reply));
        const body = await transport.request('GET', transport.url(url), { idempotent: true, check, ...(throttle && { throttle }) });
        const link = nextPageLink(body);
        const records = attachSideloads(spec, body, unwrapped, this.notice);
        const next = link === null ? null : relativeLink(transport.baseUrl, link);
        // Another origin: never sent our credentials; the list ends with a token, its pages so far written.
        if (next !== null && /^[a-z][a-z0-9+.-]*:/i.test(next)) {
          return { records, next: null, refusal: new PagingError(linkElsewhereMessage(new URL(next), transport.baseUrl)) };
        }
        return { records, ...nextStep(rules, base, url, next, records.length) };
      },
    };
  }
}

/** A paging link as an address relative to the base; a link to another origin stays absolute. */
function relativeLink(baseUrl: URL, link: string): string {
  const url = new URL(link, baseUrl);
  if (url.origin !== baseUrl.origin) return url.href;
  const basePath = baseUrl.pathname.replace(/\/?$/, '/');
  const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) : url.pathname.replace(/^\//, '');
  return path + url.search;
}

/** Why a write's reply is not its documented success, in the service's words where it has some. */
function unconfirmedReason(spec: ResourceSpec, reply: unknown, record: unknown): string {
  if (reply === null) return 'it answered with an empty body';
  if (isObject(reply) && typeof reply.message === 'string' && reply.message !== '') {
    return `${reply.status === 'error' ? 'it answered with an error: ' : ''}${reply.message}`;
  }
  if (isObject(record) && idText(record.id) !== undefined) return `it answered with ${spec.noun} ${idText(record.id)}`;
  return `its reply holds no "${spec.envelope.single}" record with an id`;
}

/**
 * Whether a record's id names the id asked for. The reply was redacted: an id equal to a short
 * password came back as [redacted], which is still the record asked for.
 */
function sameId(transport: Transport, sent: unknown, asked: string): boolean {
  const text = idText(sent);
  return text !== undefined && (text === asked || text === transport.redact(asked));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An id typed by the user, trimmed, that goes into a path (see idProblem). */
export function requireId(id: string, spec: { noun: string }): string {
  const trimmed = id.trim();
  const problem = idProblem(trimmed, spec);
  if (problem !== undefined) throw new UsageError(problem);
  return trimmed;
}

/**
 * Why a text cannot be an id that goes into a path, for ids typed by the user and ids the
 * service names alike: `.` and `..` would name another address (`tags/..` is the API root), and
 * an id is one segment of a path, so it holds no `/`.
 */
export function idProblem(id: string, spec: { noun: string }): string | undefined {
  if (id === '') return `the ${spec.noun} id is required`;
  // A leading - would read as an option in a command printed with it, a control character show as another id.
  if (id === '.' || id === '..' || id.includes('/') || id.startsWith('-') || /\p{Cc}/u.test(id)) return `"${id}" is not a ${spec.noun} id`;
  return undefined;
}

/**
 * With include=content (notes, actions), each record carries its own items, found by its id list,
 * or by the items' parents where it has none. An item that is not an object or has no id (a
 * null in the array), an id in the list that the reply does not hold, or a side-load that is not
 * a list is left out, not a failure of the whole page: `notice` says so, once for the reply.
 */
export function attachSideloads(spec: ResourceSpec, body: unknown, records: ApiRecord[], notice?: (line: string) => void): ApiRecord[] {
  if (!spec.sideloads || !isObject(body)) return records;
  const problems: string[] = [];
  for (const { key, ids, parent } of spec.sideloads) {
    const array = body[key];
    if (array === undefined) continue;
    if (!Array.isArray(array)) {
      problems.push(`its "${key}" is not a list`);
      continue;
    }
    const items = array.filter((item): item is ApiRecord => isObject(item) && idText(item.id) !== undefined);
    if (items.length < array.length) problems.push(`${array.length - items.length} of its ${key} items are not objects with an id`);
    const byId = new Map(items.map((item) => [idText(item.id)!, item]));
    let byOwner: Map<string, ApiRecord[]> | undefined;
    for (const record of records) {
      const wanted = record[ids];
      if (Array.isArray(wanted)) {
        const absent = wanted.filter((id) => !byId.has(idText(id) ?? ''));
        if (absent.length > 0)
          problems.push(
            `${spec.noun} ${idText(record.id) ?? ''} names ${absent.length} ${key} items it does not hold (${shortList(absent.map((id) => idText(id) ?? String(stringifyJson(id))))})`,
          );
        record[key] = wanted.flatMap((id) => byId.get(idText(id) ?? '') ?? []);
      } else if (parent !== undefined) {
        byOwner ??= itemsByOwner(items, byId, parent, new Set(records.map((one) => idText(one.id) ?? '')));
        record[key] = byOwner.get(idText(record.id) ?? '') ?? [];
      }
    }
  }
  if (problems.length > 0) notice?.(`carectl: the service's reply left out content: ${problems.join('; ')}`);
  return records;
}

/** At most three values, then how many more. */
function shortList(values: string[]): string {
  return values.length <= 3 ? values.join(', ') : `${values.slice(0, 3).join(', ')} and ${values.length - 3} more`;
}

/**
 * Items by the record they belong to: an item's parent is that record, or an earlier item whose
 * own parent leads there. A chain that loops or ends nowhere belongs to no record. Records and
 * items are different id spaces: a parent naming one of `owners` is that record, even where an
 * item has the same id.
 */
function itemsByOwner(
  items: readonly ApiRecord[],
  byId: ReadonlyMap<string, ApiRecord>,
  parent: string,
  owners: ReadonlySet<string>,
): Map<string, ApiRecord[]> {
  const ownerOf = new Map<ApiRecord, string | undefined>();
  const owner = (item: ApiRecord): string | undefined => {
    const chain = new Set<ApiRecord>();
    let current: ApiRecord | undefined = item;
    let found: string | undefined;
    while (current !== undefined) {
      if (ownerOf.has(current)) {
        found = ownerOf.get(current);
        break;
      }
      if (chain.has(current)) break;
      chain.add(current);
      const up = idText(current[parent]);
      if (up === undefined) break;
      if (owners.has(up)) {
        found = up;
        break;
      }
      const next = byId.get(up);
      if (next === undefined) found = up;
      current = next;
    }
    for (const link of chain) ownerOf.set(link, found);
    return found;
  };
  const byOwner = new Map<string, ApiRecord[]>();
  for (const item of items) {
    const id = owner(item);
    if (id === undefined) continue;
    const owned = byOwner.get(id);
    if (owned) owned.push(item);
    else byOwner.set(id, [item]);
  }
  return byOwner;
}
