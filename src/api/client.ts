/** Every request carectl makes, addressed by the resource catalogue (never by hand in a command); the transport knows no resources. */
import { ApiError, BadReplyError } from '../core/errors.js';
import { LONE_SURROGATE, idText, isObject } from '../core/exact-json.js';
import type { QueryParams, RequestOptions, Throttle, Transport } from '../http/transport.js';
import { linkElsewhereMessage } from '../http/link-elsewhere.js';
import { attachSideloads, unwrapList, unwrapSingle, type ResourceSpec, type Version } from '../catalogue/index.js';
import { PagingError } from './page-guard.js';
import { nextPageLink, nextStep, type PageSource } from './paging.js';

export type ApiRecord = Record<string, unknown>;

/** A read's 429 throttle and its deadline, as the transport takes them. */
type ReadLimits = Pick<RequestOptions, 'throttle' | 'deadline'>;

export class ApiClient {
  /** What replies left out, said once each: every page of a list may leave out the same. */
  private readonly said = new Set<string>();

  /** `annotations`: the transport to api/1's own host; `notice`: says on stderr what a reply left out. */
  constructor(
    private readonly transport: Transport,
    private readonly annotations: Transport = transport,
    private readonly notice?: (line: string) => void,
  ) {}

  private readonly tell = (line: string): void => {
    if (this.said.has(line)) return;
    this.said.add(line);
    this.notice?.(line);
  };

  private transportFor(version: Version): Transport {
    return version === 'api/1' ? this.annotations : this.transport;
  }

  /** The address of one record (`v1.3/conversations/500001`). */
  recordUrl(spec: ResourceSpec, version: Version, id: string, query: QueryParams = []): URL {
    // Only the service sends such an id (argv and stdin are decoded text): refused, shown escaped, not a crash of encodeURIComponent.
    if (id.search(LONE_SURROGATE) >= 0)
      throw new BadReplyError(`unexpected reply: the service's ${spec.noun} id ${JSON.stringify(id)} holds a lone UTF-16 surrogate; no address can name it`);
    return this.transportFor(version).url(`${version}/${spec.path}/${encodeURIComponent(id)}`, query);
  }

  /** One record, unwrapped, with its side-loaded items attached. */
  async fetchRecord(spec: ResourceSpec, version: Version, id: string, query: QueryParams, limits: ReadLimits = {}): Promise<ApiRecord> {
    const transport = this.transportFor(version);
    let record: ApiRecord = {};
    // Checked inside the transport's retries. Another record (a proxy's cache, a redirect) would pass for this one.
    const check = (reply: unknown): void => {
      record = unwrapSingle(spec, reply);
      if (!spec.idless && !sameId(transport, record.id, id))
        throw new BadReplyError(`unexpected reply: the service sent ${spec.noun} ${idText(record.id)} for ${spec.noun} ${id}`);
    };
    const body = await transport.request('GET', this.recordUrl(spec, version, id, query), { idempotent: true, check, ...limits });
    return attachSideloads(spec, body, [record], this.tell)[0] as ApiRecord;
  }

  /**
   * PATCH of one record: the body replaces, so it may be repeated. Only the record's envelope naming
   * that id confirms it; a 200 with the spec's error body, an empty 202 or another record do not.
   */
  async patchRecord(spec: ResourceSpec, version: Version, id: string, body: unknown, throttle?: Throttle): Promise<ApiRecord> {
    const transport = this.transportFor(version);
    let confirmed: ApiRecord = {};
    // A reply that came and does not confirm is the service's answer: refused, with its status (never sent again).
    const check = (reply: unknown, status: number): void => {
      const record = isObject(reply) ? reply[spec.envelope.single] : undefined;
      if (isObject(record) && sameId(transport, record.id, id) && isObject(reply) && reply.status !== 'error') confirmed = record;
      else throw new ApiError(status, `the service did not confirm the update: ${unconfirmedReason(spec, reply, record)}`);
    };
    await transport.request('PATCH', this.recordUrl(spec, version, id), { body, idempotent: true, throttle, check });
    return confirmed;
  }

  /** POST of a new record: never repeated once it may have arrived (it would create twice); undefined for an empty 2xx. */
  async createRecord(spec: ResourceSpec, version: Version, body: unknown): Promise<ApiRecord | undefined> {
    const transport = this.transportFor(version);
    const reply = await transport.request('POST', transport.url(`${version}/${spec.path}`), { body, idempotent: false });
    try {
      return reply === null ? undefined : unwrapSingle(spec, reply);
    } catch (err) {
      // A 2xx came: the record may have been made, whatever its reply lacks.
      throw err instanceof BadReplyError ? new BadReplyError(err.message, { mayHaveBeenApplied: true }) : err;
    }
  }

  /** Pages of a list, each page's next address found by the resource's paging style. */
  pages(spec: ResourceSpec, version: Version): PageSource {
    const transport = this.transportFor(version);
    const rules = { style: spec.paging, sort: spec.sortDates };
    return {
      fetch: async (url, base, throttle) => {
        let unwrapped: ApiRecord[] = [];
        const check = (reply: unknown): void => void (unwrapped = unwrapList(spec, reply));
        const address = transport.url(url);
        const body = await transport.request('GET', address, { idempotent: true, check, throttle });
        const link = nextPageLink(body);
        const records = attachSideloads(spec, body, unwrapped, this.tell);
        // A relative link is resolved against the page it came on (RFC 3986 section 5), not the base address.
        const next = link === null ? null : new URL(link, address);
        // Another origin (or a scheme) is never sent our credentials: the list ends there, with a token.
        if (next !== null && next.origin !== transport.baseUrl.origin)
          return { records, next: null, refusal: new PagingError(linkElsewhereMessage(next, transport.baseUrl), next.origin) };
        return { records, ...nextStep(rules, base, url, next && relativeLink(transport.baseUrl, next), records.length) };
      },
    };
  }
}

/** A paging link on the base's origin as an address relative to the base. */
function relativeLink(baseUrl: URL, url: URL): string {
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

/** Whether a record's id is the one asked for; an id equal to a short password comes back [redacted]. */
function sameId(transport: Transport, sent: unknown, asked: string): boolean {
  const text = idText(sent);
  return text !== undefined && (text === asked || text === transport.redact(asked));
}
