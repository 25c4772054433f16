/**
 * Where the work queue cuts a slice about to read (planCut, src/api/work-queue.ts), on its own.
 * Whole runs: parallel.test.ts and the properties of list-properties.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planCut, type CutStats } from '../src/api/work-queue.js';

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
