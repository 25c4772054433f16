/**
 * The plain planner (src/api/plan.ts) by tables of cases: a state and an event in, the state and the requests out. A failing
 * case prints the whole state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resourceByName } from '../src/catalogue/index.js';
import { listPlan } from '../src/api/paging.js';
import { initialState, plan, type PlanEvent, type PlanState } from '../src/api/plan.js';
import { PlanPump } from '../src/api/plan-pump.js';
import type { Scheduler } from '../src/api/scheduler.js';

const NOW = Date.UTC(2026, 5, 30);
const spec = resourceByName('conversations');
const listOf = (...query: Array<[string, string]>): ReturnType<typeof listPlan> =>
  listPlan(spec, 'v1.3', [['status', 'unread'], ...query], { pageSize: 50, asOf: NOW });
const link = (day: string, skip = 1): string =>
  `v1.3/conversations?status=unread&page_size=50&oldest_sort_date_gte=${day}T10%3A00%3A00&skip=${skip}&sort=oldest_sort_date`;
const records = (from: number, count: number): Record<string, unknown>[] => Array.from({ length: count }, (_, i) => ({ id: String(from + i) }));

function start(window: number, limit = Infinity, list = listOf()): PlanState {
  return initialState(list, { phase: 0, url: list.phases[0] as string, writtenBefore: 0 }, { pageSize: 50, limit, window });
}

/** The state after the events in turn, and the last event's requests. */
function run(state: PlanState, events: PlanEvent[]): { state: PlanState; requests: ReturnType<typeof plan>['requests'] } {
  let result = { state, requests: [] as ReturnType<typeof plan>['requests'] };
  for (const event of events) result = plan(result.state, event);
  return result;
}

const firstPage = (next: string | null): PlanEvent => ({ kind: 'page', slice: 0, page: { url: listOf().phases[0] as string, records: records(1, 50), next } });
const dump = (state: PlanState): string => JSON.stringify({ ...state, config: undefined }, (_, value: unknown) => (value === Infinity ? 'Infinity' : value), 1);

type Case = { name: string; window: number; limit?: number; events: PlanEvent[]; pages: number; far?: number; slices: number; held?: boolean };

describe('the plain planner', () => {
  const opening = { kind: 'take', slice: 0, written: 0 } as const;
  const cases: Case[] = [
    { name: 'window 1: the first page only, no probe, no cut', window: 1, events: [opening], pages: 1, slices: 1 },
    { name: 'window 8: the first page; ascending, today ends the span: no probe', window: 8, events: [opening], pages: 1, slices: 1 },
    {
      // Nothing tells the pace of the days left yet (the first page's first day is unknown): a cut in two, whose slice tells it.
      name: 'window 8, the first page links on: cut in two, the first held until the cut slice tells the bound',
      window: 8,
      events: [opening, firstPage(link('2025-07-01'))],
      pages: 1,
      slices: 2,
      held: true,
    },
    {
      name: 'window 1 after the first page: one page held ahead, nothing more until it is taken, nothing cut',
      window: 1,
      events: [opening, firstPage(link('2025-07-01'))],
      pages: 0,
      slices: 1,
    },
    { name: 'the first page is the last: nothing more', window: 8, events: [opening, firstPage(null)], pages: 0, slices: 1 },
    { name: '--limit: read on as one chain, nothing cut', window: 8, limit: 500, events: [opening, firstPage(link('2025-07-01'))], pages: 1, slices: 1 },
    {
      // The pump sends what a window event returns (it once dropped them, and waited for those pages forever).
      name: 'window 1 grown to 8 after the first page: the request of the cut it allows',
      window: 1,
      events: [opening, firstPage(link('2025-07-01')), { kind: 'window', window: 8 }],
      pages: 1,
      slices: 2,
      held: true,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const { state, requests } = run(start(c.window, c.limit), c.events);
      const pages = requests.filter((request) => request.kind === 'page').length;
      assert.equal(pages, c.pages, dump(state));
      assert.equal(state.slices.length, c.slices, dump(state));
      assert.equal(state.slices[0]?.status.kind === 'held', c.held === true, dump(state));
    });

  const cut = (): PlanState => run(start(8), [opening, firstPage(link('2025-07-01'))]).state;
  const cutPage = (state: PlanState, ids: number, count: number, next: string | null): PlanEvent => {
    const slice = state.slices[1];
    return { kind: 'page', slice: slice?.id ?? -1, page: { url: slice?.first ?? '', records: records(ids, count), next } };
  };
  // The cut slice's days: the second half of those from the first page's position (2025-07-01) to the span's end (NOW), from 2025-12-31.
  const verdicts: Array<{ name: string; ids: number; count: number; next: string | null; verdict: string; slices: number; firstReads: boolean }> = [
    {
      name: 'a cut slice brings new records, a page a month: the bound holds, the first slice reads on, the slots idle are cut for',
      ids: 1000,
      count: 50,
      next: link('2026-01-30'),
      verdict: 'kept',
      slices: 8,
      firstReads: true,
    },
    {
      name: 'a cut slice brings all its few records: the bound holds, the first slice reads on, nothing more is cut (no page is expected)',
      ids: 1000,
      count: 5,
      next: null,
      verdict: 'kept',
      slices: 2,
      firstReads: true,
    },
    {
      name: "it brings back the phase's first records: ignored, the cut slices leave the order",
      ids: 1,
      count: 5,
      next: null,
      verdict: 'ignored',
      slices: 1,
      firstReads: true,
    },
  ];
  for (const v of verdicts)
    it(v.name, () => {
      const before = cut();
      const { state, requests } = plan(before, cutPage(before, v.ids, v.count, v.next));
      assert.equal(state.phases[0]?.verdict, v.verdict, dump(state));
      assert.equal(state.slices.length, v.slices, dump(state));
      assert.equal(
        requests.some((request) => request.kind === 'page' && request.slice === 0),
        v.firstReads,
        dump(state),
      );
    });

  it("a range's first day tells no pace (it may lie years before the first record): its first cut is in two too", () => {
    const list = listOf(['oldest_sort_date_gte', '1970-01-01'], ['oldest_sort_date_lt', '2026-07-01']);
    const state = start(8, Infinity, list);
    const page: PlanEvent = { kind: 'page', slice: 0, page: { url: list.phases[0] as string, records: records(1, 50), next: link('2025-07-10') } };
    const after = run(state, [opening, page]).state;
    assert.equal(after.slices.length, 2, dump(after));
    assert.equal(after.phases[0]?.pace, undefined, dump(after));
  });

  it('a page past its slice last day: the later slices of the phase leave the order, it reads on open', () => {
    const kept = plan(cut(), cutPage(cut(), 1000, 5, null)).state;
    const first = kept.slices[0];
    const past = plan(kept, { kind: 'page', slice: 0, page: { url: first?.next ?? '', records: records(60, 50), next: link('2026-06-20') } }).state;
    assert.equal(past.slices.length, 1, dump(past));
    assert.equal(past.slices[0]?.hi, undefined, dump(past));
  });

  it('a descending list asks for its far end with its first page', () => {
    const { requests } = plan(start(8, Infinity, listOf(['sort', '-oldest_sort_date'])), opening);
    assert.deepEqual(
      requests.map((request) => request.kind),
      ['far', 'page'],
    );
  });
});

describe('the plain planner: an event it does not expect is a fault, never a quiet end', () => {
  const opening = { kind: 'take', slice: 0, written: 0 } as const;
  const cases: Array<{ name: string; events: PlanEvent[]; fault: RegExp }> = [
    { name: 'a page of a slice with none asked for', events: [opening, firstPage(link('2025-07-01')), firstPage(null)], fault: /slice 0 is held, not reading/ },
    { name: 'a failure of a slice with none asked for', events: [{ kind: 'failed', slice: 0, error: new Error('x') }], fault: /slice 0 is ready, not reading/ },
    { name: 'a far end never asked for', events: [{ kind: 'far', phase: 0, answer: { kind: 'known', day: 1 } }], fault: /far end of phase 0 is unasked/ },
    { name: 'the consumer takes a slice not in the order', events: [{ kind: 'take', slice: 7, written: 0 }], fault: /slice 7 is not in the order/ },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.throws(() => run(start(8), c.events), c.fault);
    });
});

describe('the plain pump', () => {
  type FakeScheduler = Scheduler & { window: number; lowestLatencyMs: number | undefined; clock: number };
  /** A scheduler that runs each task at once; its window, lowest latency (undefined: no limiter) and clock are set by the test. */
  const scheduler = (window: number, lowestLatencyMs?: number): FakeScheduler => {
    const fake = {
      window,
      lowestLatencyMs,
      clock: 0,
      now: () => fake.clock,
      run: <T>(_: number, task: (slot: { throttle: undefined }) => Promise<T>) => task({ throttle: undefined }),
    };
    return fake as unknown as FakeScheduler;
  };
  const pages = 6;
  const urls = [listOf().phases[0] as string, ...Array.from({ length: pages - 1 }, (_, i) => link(`2025-07-0${i + 1}`))];
  const source = { fetch: (url: string) => Promise.resolve({ records: records(urls.indexOf(url) * 50, 50), next: urls[urls.indexOf(url) + 1] ?? null }) };

  /** A pump over `from`'s pages of one list, the start of its first query, no --limit. */
  const pumpOf = (on: Scheduler, from: typeof source = source): PlanPump =>
    new PlanPump({ plan: listOf(), source: from, scheduler: on, start: { phase: 0, url: urls[0] as string, writtenBefore: 0 }, pageSize: 50, limit: 10_000 });

  /** The consumer's loop of list-run.ts over one slice; `between` runs after each page taken. */
  async function takeAll(pump: PlanPump, between: () => void): Promise<number> {
    const slice = pump.next() as number;
    let written = 0;
    for (let page = await pump.take(slice, written); page !== null; page = await pump.take(slice, written)) {
      written += page.records.length;
      between();
    }
    return written;
  }

  it('a window grown between two takes: the pages of its new slots come, and the slice ends with every page', async () => {
    const window = scheduler(1);
    // --limit above the list: nothing is cut, the grown window reads ahead on the one chain.
    const pump = pumpOf(window);
    const written = await takeAll(pump, () => (window.window = 8));
    assert.equal(written, pages * 50, dump(pump.snapshot));
    // A slice that ended keeps nothing of its chain: a long export ends thousands of slices.
    assert.equal(pump.chainsGuarded, 0);
  });

  // Little's law: slots past the lowest latency ÷ the consumer's time a page (here 2 ms) only hold pages waiting for it.
  const usable = [
    { name: 'no limiter (a --parallel the user named)', lowest: undefined, window: 8 },
    { name: 'no answer yet', lowest: Infinity, window: 8 },
    { name: 'a service answering in 1 ms, under a page of writing', lowest: 1, window: 1 },
    { name: 'a service answering in 7 ms: 3 pages of writing', lowest: 7, window: 3 },
    { name: 'a service 50 ms away', lowest: 50, window: 8 },
  ];
  for (const c of usable)
    it(`the planner's window with the limiter, the consumer 2 ms a page: ${c.name}, ${c.window}`, async () => {
      const fake = scheduler(8, c.lowest);
      const pump = pumpOf(fake);
      const written = await takeAll(pump, () => (fake.clock += 2));
      assert.equal(written, pages * 50, dump(pump.snapshot));
      assert.equal(pump.snapshot.window, c.window, dump(pump.snapshot));
    });

  it('the slice after one not in the plan: a fault, never the first slice again (a list that starts over)', () => {
    const pump = pumpOf(scheduler(8));
    assert.equal(pump.next(), 0);
    assert.throws(() => pump.next(7), /slice 7 is not in the plan/);
  });

  it('a source that fails to send: the take fails, never ends the slice', async () => {
    const pump = pumpOf(scheduler(8), { fetch: () => Promise.reject(new Error('refused by the test')) });
    await assert.rejects(
      takeAll(pump, () => undefined),
      /refused by the test/,
    );
    assert.equal(pump.chainsGuarded, 0);
  });
});
