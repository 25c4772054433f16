/**
 * The API client: every request carectl makes to the service goes through here, addressed by
 * the resource catalogue (path, version, envelope, side-loads), never by hand in a command. It
 * knows nothing of the command line; the transport below it knows nothing of resources.
 */
import { UsageError } from '../core/errors.js';
import type { QueryParams, Throttle, Transport } from '../http/transport.js';
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
  ) {}

  /** Where a version's requests go. */
  private transportFor(version: Version): Transport {
    return version === 'api/1' ? this.annotations : this.transport;
  }

  /** The address of one record (`v1.3/conversations/500001`). */
  recordUrl(spec: ResourceSpec, version: Version, id: string, query: QueryParams = []): URL {
    return this.transportFor(version).url(`${version}/${spec.path}/${encodeURIComponent(id)}`, query);
  }

  /** One record, unwrapped, with its side-loaded items attached. */
  async fetchRecord(spec: ResourceSpec, version: Version, id: string, query: QueryParams, throttle?: Throttle): Promise<ApiRecord> {
    // The check inside the transport's retries unwraps the reply once; its record is kept.
    let record: ApiRecord = {};
    const check = (reply: unknown): void => void (record = unwrapSingle(spec, reply));
    const body = await this.transportFor(version).request('GET', this.recordUrl(spec, version, id, query), { idempotent: true, check, ...(throttle && { throttle }) });
    return attachSideloads(spec, body, [record])[0] as ApiRecord;
  }

  /** PATCH of one record; the body is absolute (it replaces), so it may be repeated. */
  async patchRecord(spec: ResourceSpec, version: Version, id: string, body: unknown, throttle?: Throttle): Promise<unknown> {
    return this.transportFor(version).request('PATCH', this.recordUrl(spec, version, id), { body, idempotent: true, ...(throttle && { throttle }) });
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
        const records = attachSideloads(spec, body, unwrapped);
        const next = link === null ? null : relativeLink(transport.baseUrl, link);
        // Another origin: never sent our credentials; the list ends with a token, its pages so far written.
        if (next !== null && /^[a-z][a-z0-9+.-]*:/i.test(next)) {
          return { records, next: null, refusal: new PagingError(`refusing to follow a link to ${new URL(next).origin}: credentials are only sent to ${transport.baseUrl.origin}`) };
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

/** An id that goes into a path: `.` and `..` would name another address (`tags/..` is the API root). */
export function requireId(id: string, spec: { noun: string }): string {
  const trimmed = id.trim();
  if (trimmed === '') throw new UsageError(`the ${spec.noun} id is required`);
  if (trimmed === '.' || trimmed === '..') throw new UsageError(`"${trimmed}" is not a ${spec.noun} id`);
  return trimmed;
}

/** With include=content (notes, actions), each record carries its own items, found by id. */
export function attachSideloads(spec: ResourceSpec, body: unknown, records: ApiRecord[]): ApiRecord[] {
  if (!spec.sideloads || !body || typeof body !== 'object' || Array.isArray(body)) return records;
  for (const { key, ids } of spec.sideloads) {
    const items = (body as ApiRecord)[key];
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
