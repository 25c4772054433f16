/**
 * A live conversation list whose data changes with every request it serves (not every second):
 * records created, closed, deleted and re-dated, under the three readings of the spec's next_page
 * (keyset: a bound at the page's last sort date plus a skip; a snapshot pinned at the first page by
 * a newest_sort_date bound; a plain skip over the live set). Its oracle: the stable records (unread
 * the whole run, never changed) and every record that ever matched.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NOW, prng } from './model-server.js';

export type Reading = 'keyset' | 'snapshot' | 'plain';

interface LiveRecord {
  id: string;
  status: 'unread' | 'closed';
  /** The sort date (oldest_sort_date), whole seconds. */
  date: number;
  /** When it was created (newest_sort_date): a snapshot lists those created up to its pin. */
  created: number;
  /** Never changed by the service: the oracle's records when unread. */
  stable: boolean;
  /** Its sort date moved: it may come again after a resume has passed it, as on any service. */
  moved?: boolean;
  /** On a page served: a change to it now could shift a skip the service already counted (a loss no client can avoid). */
  served?: boolean;
}

const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

export class LiveServer {
  private records: LiveRecord[] = [];
  private readonly random: () => number;
  private clock = NOW;
  private nextId = 700000;
  private server: Server | undefined;
  /** Ids that matched status=unread at any moment. */
  readonly everUnread = new Set<string>();
  /** Every request's path and query, in arrival order. */
  readonly requests: string[] = [];
  baseUrl = '';

  /** `spread`: the sort dates lie in its `hours` from its `days` back. */
  constructor(
    readonly reading: Reading,
    seed: number,
    count = 160,
    private readonly spread = { days: 30, hours: 40 },
  ) {
    this.random = prng(seed);
    for (let i = 0; i < count; i++) {
      const kind = this.random();
      // A tenth at the spread's first second: a burst that keyset skips count through.
      const hour = this.someDate();
      const date = kind < 0.1 ? this.firstDate : hour;
      this.add({ status: kind < 0.8 ? 'unread' : 'closed', date, created: this.firstDate, stable: kind < 0.6 });
    }
  }

  private get firstDate(): number {
    return NOW - this.spread.days * 86_400_000;
  }

  /** A sort date on a whole hour of the spread (records share seconds often, so keyset skips count records at one second). */
  private someDate(): number {
    return this.firstDate + Math.floor(this.random() * this.spread.hours) * 3_600_000;
  }

  /** The stable records: unread and never changed, so every run of a chain must print each once. */
  stableIds(): Set<string> {
    return new Set(this.records.filter((r) => r.stable && r.status === 'unread').map((r) => r.id));
  }

  /** Closes the records `ids`: a client closing what it printed (`… | carectl conversations update - --status closed`). */
  closeIds(ids: readonly string[]): void {
    const closing = new Set(ids);
    for (const record of this.records) if (closing.has(record.id)) record.status = 'closed';
  }

  /** Records whose sort date moved (they may come again, passed already). */
  movedIds(): Set<string> {
    return new Set(this.records.filter((r) => r.moved).map((r) => r.id));
  }

  private add(record: Omit<LiveRecord, 'id'>): void {
    const id = String(this.nextId++);
    this.records.push({ id, ...record });
    if (record.status === 'unread') this.everUnread.add(id);
  }

  /**
   * One change of the live data, per request served: a record created anywhere in the order, or one
   * still ahead of the cursor closed, deleted or re-dated. (One behind the cursor that leaves shifts a
   * skip the service counted already: what any client loses there is the service's to answer for.)
   */
  private change(): void {
    this.clock += 1000;
    // Only records the list held at the start, not served, not moved: those lie ahead of every cursor.
    const volatile = this.records.filter((r) => !r.stable && !r.served && !r.moved && r.created < NOW);
    const pick = volatile[Math.floor(this.random() * volatile.length)];
    const roll = this.random();
    const date = this.someDate();
    if (roll < 0.4 || !pick) this.add({ status: 'unread', date, created: this.clock, stable: false });
    else if (roll < 0.6) pick.status = 'closed';
    else if (roll < 0.8) this.records = this.records.filter((r) => r !== pick);
    else Object.assign(pick, { date, moved: true });
  }

  private answer(params: URLSearchParams): unknown {
    const size = Math.min(Number(params.get('page_size') ?? 25), 50);
    const skip = Number(params.get('skip') ?? 0);
    const sort = params.get('sort') ?? 'oldest_sort_date';
    const descending = sort.startsWith('-');
    // A date-only bound is that day's midnight (lte: up to it); a date-time, that second.
    const bound = (name: string): number | undefined => {
      const value = params.get(name);
      return value === null ? undefined : Date.parse(value.length === 10 ? `${value}T00:00:00Z` : `${value}Z`);
    };
    const lo = Math.max(bound('oldest_sort_date_gte') ?? -Infinity, (bound('oldest_sort_date_gt') ?? -Infinity) + 1);
    const hi = Math.min(bound('oldest_sort_date_lte') ?? Infinity, (bound('oldest_sort_date_lt') ?? Infinity) - 1);
    const pin = bound('newest_sort_date_lte') ?? (this.reading === 'snapshot' ? this.clock : Infinity);
    const list = this.records
      .filter((r) => r.status === params.get('status') && r.date >= lo && r.date <= hi && r.created <= pin)
      .sort((a, b) => (descending ? b.date - a.date || b.id.localeCompare(a.id) : a.date - b.date || a.id.localeCompare(b.id)));
    const page = list.slice(skip, skip + size);
    for (const record of page) record.served = true;
    let next: string | null = null;
    if (skip + size < list.length) {
      const link = new URLSearchParams(params);
      link.set('sort', sort);
      if (this.reading === 'keyset') {
        const last = (page.at(-1) as LiveRecord).date;
        link.set(`oldest_sort_date_${descending ? 'lte' : 'gte'}`, iso(last));
        link.set('skip', String(list.slice(0, skip + size).filter((r) => r.date === last).length));
      } else {
        if (this.reading === 'snapshot') link.set('newest_sort_date_lte', iso(pin));
        link.set('skip', String(skip + size));
      }
      next = `${this.baseUrl}/v1.3/conversations?${link.toString()}`;
    }
    return { conversations: page.map((r) => ({ id: r.id, status: r.status })), paging: { next_page: next, prev_page: null } };
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume();
      this.requests.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://live');
      const body = this.answer(url.searchParams);
      this.change();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}
