/**
 * Where the work queue cuts a slice about to read (planCut, src/api/work-queue.ts), on its own; whole runs against the model
 * server with the scheduler's window pinned. More whole runs: parallel.test.ts and the properties of list-properties.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiClient } from '../src/api/client.js';
import { resourceByName } from '../src/catalogue/index.js';
import { runList, startPoint } from '../src/api/list-run.js';
import { listPlan, type PageSource } from '../src/api/paging.js';
import { Scheduler } from '../src/api/scheduler.js';
import { planCut, type CutStats } from '../src/api/work-queue.js';
import type { RecordWriter } from '../src/output/index.js';
import { fakeClock } from './helpers.js';
import { ModelServer, modelData } from './model-server.js';
import { testTransport } from './scripted-server.js';

describe('planCut', () => {
  const page = { pageSize: 50 };
  const cases: Array<[string, CutStats, number | undefined]> = [
    ['no slot idle: two shares (400 records) or fewer stay whole', { lo: 0, hi: 9, records: 400, idleSlots: 0, ...page }, undefined],
    ['no slot idle: more than two shares keep one share of the days', { lo: 0, hi: 9, records: 1000, idleSlots: 0, ...page }, 1],
    ['no slot idle: a share of few days keeps a day at least', { lo: 100, hi: 109, records: 100_000, idleSlots: 0, ...page }, 100],
    ['one day left: nothing to cut', { lo: 5, hi: 5, records: 100_000, idleSlots: 3, ...page }, undefined],
    ['slots idle: two pages or fewer (100 records) stay whole', { lo: 0, hi: 9, records: 100, idleSlots: 3, ...page }, undefined],
    ['slots idle: the records spread over them, a page at least', { lo: 0, hi: 9, records: 101, idleSlots: 3, ...page }, 4],
    ['slots idle: an even spread over them and itself', { lo: 0, hi: 99, records: 400, idleSlots: 3, ...page }, 24],
    ['slots idle: a share at most', { lo: 0, hi: 99, records: 10_000, idleSlots: 3, ...page }, 1],
    ['days in the sort order: a descending list counts down as negative days', { lo: -200, hi: -101, records: 400, idleSlots: 1, ...page }, -151],
  ];
  for (const [name, stats, expected] of cases) it(name, () => assert.equal(planCut(stats), expected));
});

/** A scheduler of --parallel 8 whose window in force is pinned (as the limiter may hold it): what the engine may use of it. */
class Pinned extends Scheduler {
  constructor(private readonly pinned: number) {
    const clock = fakeClock();
    super({ parallel: 8, adaptive: true, now: clock.now, sleep: clock.sleep });
  }

  override get window(): number {
    return this.pinned;
  }
}

describe('the work queue follows the window in force, not the ceiling', () => {
  /** A conversation list (the union of both priorities, sliceable by its sort date) of the model's records; its ids and the requests it sent. */
  async function list(scheduler: Scheduler): Promise<{ ids: string[]; requests: number; mostAtOnce: number }> {
    const model = new ModelServer(modelData(2000, ['year', 'burst'], 46), { reading: 'whole-day', links: 'keyset', delayMs: 1 });
    await model.start();
    try {
      const spec = resourceByName('conversations');
      const plan = listPlan(spec, 'v1.3', [], { pageSize: 50 });
      const api = new ApiClient(testTransport(model.baseUrl, fakeClock()));
      const ids: string[] = [];
      const writer: RecordWriter = { write: async (record) => void ids.push(String(record.id)), endPage: async () => undefined, end: async () => undefined };
      let inFlight = 0;
      let mostAtOnce = 0;
      const pages = api.pages(spec, 'v1.3');
      const source: PageSource = {
        fetch: async (...args) => {
          mostAtOnce = Math.max(mostAtOnce, ++inFlight);
          try {
            return await pages.fetch(...args);
          } finally {
            inFlight--;
          }
        },
      };
      await runList({ plan, source, writer, start: startPoint(plan, undefined), scheduler, notice: () => undefined });
      return { ids, requests: model.requests.length, mostAtOnce };
    } finally {
      await model.close();
    }
  }

  it('with the window at 1 the run sends the requests of --parallel 1, one at a time, and writes the same records', async () => {
    const clock = fakeClock();
    const one = await list(new Scheduler({ parallel: 1, now: clock.now, sleep: clock.sleep }));
    const pinned = await list(new Pinned(1));
    assert.deepEqual(pinned.ids, one.ids);
    assert.equal(pinned.mostAtOnce, 1);
    assert.equal(pinned.requests, one.requests);
  });

  it('with the window at 8 it cuts the days and reads them at once (what the pin holds back)', async () => {
    const clock = fakeClock();
    const one = await list(new Scheduler({ parallel: 1, now: clock.now, sleep: clock.sleep }));
    const eight = await list(new Pinned(8));
    assert.deepEqual(eight.ids, one.ids);
    assert.ok(eight.mostAtOnce > 2 && eight.requests > one.requests, JSON.stringify({ eight: eight.requests, one: one.requests, atOnce: eight.mostAtOnce }));
  });
});
