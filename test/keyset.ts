/**
 * A conversation list served with keyset links, as the sandbox will serve them:
 * `oldest_sort_date_gte=<last record's sort date>` (`_lte` when descending) and `skip` = the
 * records at exactly that date already returned. Its own data: sort dates to the second, many
 * of them shared, spread over the year before 2026-06-30; filters is_priority and status.
 */
import type { ServerResponse } from 'node:http';
import { scriptedApi, type ScriptedApi, type ScriptedReply, type ScriptedRequest } from './scripted-server.js';

export interface KeysetRecord {
  id: string;
  is_priority: boolean;
  status: string;
  /** The sort date, ms. */
  at: number;
}

const END = Date.UTC(2026, 5, 30);
const YEAR = 365 * 86_400_000;
const STATUSES = ['unread', 'assigned', 'closed'];

/** `count` records: a fixed pseudo-random spread over the year before `end`, every fifth one sharing the date of the one before. */
export function keysetData(count: number, end = END): KeysetRecord[] {
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const records: KeysetRecord[] = [];
  for (let i = 0; i < count; i++) {
    const at = i % 5 === 4 ? (records[i - 1] as KeysetRecord).at : end - Math.floor((next() * YEAR) / 1000) * 1000;
    records.push({ id: String(700000 + i), is_priority: next() < 0.25, status: STATUSES[Math.floor(next() * 3)] as string, at });
  }
  return records;
}

const text = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

function bound(value: string, op: string): number {
  const dateOnly = value.length === 10;
  const ms = Date.parse(`${value}${dateOnly ? 'T00:00:00' : ''}Z`);
  const span = dateOnly ? 86_400_000 : 1000;
  return op === 'gte' ? ms : op === 'gt' ? ms + span : op === 'lt' ? ms - 1 : ms + span - 1;
}

/** The reply to a `v1.3/conversations` request, with links of the keyset form. */
export function keysetReply(data: readonly KeysetRecord[], request: ScriptedRequest, baseUrl: string): ScriptedReply {
  const url = new URL(request.url, 'http://x');
  const q = url.searchParams;
  if (!q.has('is_priority') && !q.has('status')) return { status: 400, json: { status: 'error', message: 'Either is_priority or status must be supplied' } };
  let lo = -Infinity;
  let hi = Infinity;
  for (const op of ['gte', 'gt', 'lte', 'lt']) {
    for (const value of q.getAll(`oldest_sort_date_${op}`)) {
      if (op.startsWith('g')) lo = Math.max(lo, bound(value, op));
      else hi = Math.min(hi, bound(value, op));
    }
  }
  const descending = q.get('sort') === '-oldest_sort_date';
  const list = data
    .filter(
      (r) =>
        (!q.has('is_priority') || String(r.is_priority) === q.get('is_priority')) &&
        (!q.has('status') || r.status === q.get('status')) &&
        r.at >= lo &&
        r.at <= hi,
    )
    .sort((a, b) => (descending ? b.at - a.at || b.id.localeCompare(a.id) : a.at - b.at || a.id.localeCompare(b.id)));
  const size = Math.min(Number(q.get('page_size') ?? 25), 50);
  const skip = Number(q.get('skip') ?? 0);
  const page = list.slice(skip, skip + size);
  let next: string | null = null;
  if (skip + size < list.length && page.length > 0) {
    const last = (page[page.length - 1] as KeysetRecord).at;
    const atLast = list.slice(0, skip + size).filter((r) => r.at === last).length;
    const link = new URLSearchParams(q);
    const side = descending ? 'lte' : 'gte';
    for (const op of descending ? ['lte', 'lt'] : ['gte', 'gt']) link.delete(`oldest_sort_date_${op}`);
    link.set(`oldest_sort_date_${side}`, text(last));
    link.set('skip', String(atLast));
    next = `${baseUrl}${url.pathname}?${link}`;
  }
  return {
    json: { conversations: page.map((r) => ({ id: r.id, status: r.status, is_priority: r.is_priority })), paging: { next_page: next, prev_page: null } },
  };
}

/** A scripted service answering every request with keysetReply over `data`. */
export async function keysetApi(data: readonly KeysetRecord[]): Promise<ScriptedApi> {
  let base = '';
  const api = await scriptedApi((request) => keysetReply(data, request, base));
  base = api.baseUrl;
  return api;
}

/** Answers through `reply` after `delayMs` of real time, so that requests overlap; undefined for scriptedApi. */
export function later(res: ServerResponse, delayMs: number, reply: () => ScriptedReply, onDone?: () => void): undefined {
  setTimeout(() => {
    const answer = reply();
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.text ?? JSON.stringify(answer.json ?? {}));
    onDone?.();
  }, delayMs);
  return undefined;
}
