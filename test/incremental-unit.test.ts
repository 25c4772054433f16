/**
 * src/cli/incremental-state.ts without a server: the state file's text, and IncrementalRun over page
 * sources that answer as scripted (keyset links that place records, skip-only links that do not).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IncrementalRun, parseState, queryText, stateText, type ListState } from '../src/cli/incremental-state.js';
import type { PageSource } from '../src/api/paging.js';

const T = Date.UTC(2026, 5, 30, 12, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19);
const prior: ListState = {
  base: 'https://x/',
  query: 'v1.3/conversations?status=unread',
  field: 'newest_sort_date',
  watermark: T - 300_000,
  since: T,
  ids: ['1', '2'],
  dates: {},
  outputs: [],
};
const QUERY = `v1.3/conversations?status=unread&sort=newest_sort_date&newest_sort_date_gte=${iso(T - 300_000)}&newest_sort_date_lt=9999-12-31&page_size=50`;

/** A source answering each address from `pages` (records' ids and the next link), and the probes with nothing to tell. */
function source(pages: Record<string, { ids: string[]; next: string | null }>): PageSource & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    fetch: async (url) => {
      asked.push(url);
      const page = pages[url] ?? { ids: [], next: null };
      return { records: page.ids.map((id) => ({ id })), next: page.next };
    },
  };
}

async function listed(run: IncrementalRun, inner: PageSource, first: string): Promise<string[]> {
  const wrapped = run.source(inner, [first]);
  const ids: string[] = [];
  for (let url: string | null = first; url !== null;) {
    const page = await wrapped.fetch(url, first);
    ids.push(...page.records.map((r) => String(r.id)));
    url = page.next;
  }
  return ids;
}

describe('the state file', () => {
  it('reads back what it writes, in whole seconds; a state written before dates were kept; anything else is exit 2', () => {
    assert.deepEqual(parseState(stateText(prior), 's.json'), prior);
    const dated = { ...prior, dates: { '2': T + 2_000 } };
    assert.match(stateText(dated), /"dates": \{\n {2}"2": "2026-06-30T12:00:02"\n \}/);
    assert.deepEqual(parseState(stateText(dated), 's.json'), dated);
    const older = JSON.parse(stateText(prior)) as Record<string, unknown>;
    delete older.dates;
    assert.deepEqual(parseState(JSON.stringify(older), 's.json'), prior);
    assert.throws(() => parseState(stateText(prior).replace('"dates": {}', '"dates": {"2": "never"}'), 's.json'), { exitCode: 2 });
    assert.throws(() => parseState('{"format":"carectl-state/1"}', 's.json'), { exitCode: 2 });
    assert.throws(() => parseState('[]', 's.json'), { exitCode: 2 });
  });

  it('names a query by its filters in a fixed order', () => {
    assert.equal(
      queryText('v1.3/conversations', [
        ['tag', 'b'],
        ['status', 'unread'],
        ['tag', 'a'],
      ]),
      'v1.3/conversations?status=unread&tag=a&tag=b',
    );
  });
});

describe('IncrementalRun', () => {
  it('leaves out an id delivered before whose keyset position lies before the last start, and delivers one past it', async () => {
    const second = `v1.3/conversations?status=unread&sort=newest_sort_date&newest_sort_date_lt=9999-12-31&page_size=50&newest_sort_date_gte=${iso(T - 60_000)}&skip=1`;
    const inner = source({ [QUERY]: { ids: ['1', '9'], next: second }, [second]: { ids: ['2'], next: null } });
    const run = new IncrementalRun('newest_sort_date', 'sort', prior, T + 3_600_000);
    // '2' sits on the last page (no link after it): its place is asked of the list the other way round, which says nothing here.
    assert.deepEqual(await listed(run, inner, QUERY), ['9', '2']);
  });

  it('skip-only links place nothing: an id delivered before comes again (at-least-once)', async () => {
    const second = `${QUERY}&skip=50`;
    const inner = source({ [QUERY]: { ids: ['1', '9'], next: second }, [second]: { ids: ['2'], next: null } });
    const run = new IncrementalRun('newest_sort_date', 'sort', prior, T + 3_600_000);
    assert.deepEqual(await listed(run, inner, QUERY), ['1', '9', '2']);
  });

  it('keeps for the next run the ids that may lie past its watermark’s midnight, and none placed before it', async () => {
    const first = 'v1.3/conversations?status=unread&sort=newest_sort_date&page_size=50';
    const second = `${first}&newest_sort_date_gte=2026-06-29T08:00:00&skip=1`;
    const inner = source({ [first]: { ids: ['1', '2'], next: second }, [second]: { ids: ['3'], next: null } });
    const run = new IncrementalRun('newest_sort_date', 'sort', undefined, T);
    assert.deepEqual(await listed(run, inner, first), ['1', '2', '3']);
    const next = run.next('https://x/', 'v1.3/conversations?status=unread');
    assert.deepEqual([iso(next.since), iso(next.watermark), next.ids], [iso(T), iso(T - 300_000), ['3']]);
  });
});

describe('IncrementalRun over a union of two queries', () => {
  const phases = [
    'v1.3/conversations?is_priority=true&sort=newest_sort_date&page_size=50',
    'v1.3/conversations?is_priority=false&sort=newest_sort_date&page_size=50',
  ];
  /** The probe of `phase` (its newest record below our clock, the list the other way round), answered with a record dated `at`. */
  const probe = (phase: string, at: number): [string, { ids: string[]; next: string }] => {
    const below = `newest_sort_date_gte=1900-01-01&newest_sort_date_lt=${encodeURIComponent(iso(T))}`;
    const address = phase.replace('sort=newest_sort_date&page_size=50', `sort=-newest_sort_date&page_size=1&${below}`);
    return [address, { ids: ['p'], next: `${address}&newest_sort_date_lte=${iso(at)}&skip=1` }];
  };

  it('probes both queries before the first page of either, and starts the next run after the newest of them', async () => {
    const [one, two] = [probe(phases[0] as string, T - 2 * 86_400_000), probe(phases[1] as string, T - 60_000)];
    const inner = source(Object.fromEntries([one, two, [phases[0], { ids: ['1'], next: null }], [phases[1], { ids: ['2'], next: null }]]));
    const run = new IncrementalRun('newest_sort_date', 'sort', undefined, T);
    const wrapped = run.source(inner, phases);
    for (const phase of phases) await wrapped.fetch(phase, phase);
    assert.deepEqual(inner.asked.slice(0, 3), [one[0], two[0], phases[0]]);
    // Not the priority query's newest, two days old: the other query's newest records would count as moved in every run.
    assert.equal(iso(run.next('https://x/', 'v1.3/conversations').since), iso(T - 59_000));
  });
});
