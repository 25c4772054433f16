/**
 * How a parallel list balances its parts: where a part whose chain of pages would outlast the
 * others' is cut, and which part asks first. The whole runs are tested end to end in
 * parallel.test.ts; these pin the policy on parts whose days and records are known.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newPart, type Part } from '../src/api/part.js';
import { PartSpans } from '../src/api/part-spans.js';
import { goesAfter } from '../src/api/scheduler.js';
import { dayOf, dayText, type SliceRule } from '../src/api/slices.js';

const day = (text: string): number => dayOf(Date.parse(`${text}T00:00:00Z`));
const PHASE = 'v1.3/conversations?is_priority=false&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lte=2026-04-10&page_size=50';

/** Spans of a service known to keep to the bound a cut adds (the check itself: list-properties.test.ts, near bound ignored). */
class KeptSpans extends PartSpans {
  override nearKept(): boolean {
    return true;
  }
}

function spansOf(rule: SliceRule, phases = [PHASE]): PartSpans {
  return new KeptSpans(rule, { plan: { phases, slicing: rule }, pageSize: 50, probe: async () => null, pump: () => undefined });
}

/** A slice of days lo..hi of phase 0; under way when it has read `read` records up to the keyset bound `at`. */
function slice(rule: SliceRule, lo: string, hi: string, underWay?: { read: number; at: string }): Part {
  const address = `v1.3/conversations?is_priority=false&oldest_sort_date_gte=${lo}&oldest_sort_date_lte=${hi}&page_size=50`;
  const part = newPart(0, day(lo), day(hi), address, rule);
  if (underWay) {
    const bound = rule.descending
      ? `oldest_sort_date_gte=${lo}&oldest_sort_date_lte=${underWay.at}`
      : `oldest_sort_date_gte=${underWay.at}&oldest_sort_date_lte=${hi}`;
    Object.assign(part, { pagesRead: 1, recordsRead: underWay.read, next: `v1.3/conversations?is_priority=false&${bound}&page_size=50&skip=1` });
  }
  return part;
}

const texts = (cuts: { part: Part; cuts: number[] }[]): string[][] => cuts.map(({ cuts }) => cuts.map(dayText));

describe('PartSpans.balancingCuts', () => {
  const rule: SliceRule = { field: 'oldest_sort_date', descending: false, sortParam: 'sort', sizeParam: 'page_size' };
  // 50 records over Jan 1–5: 10 a day. Left: Jan 5–30 (260 records) and Jan 31–Apr 10 (700).
  const parts = (): Part[] => [slice(rule, '2026-01-01', '2026-01-30', { read: 50, at: '2026-01-05T10:00:00' }), slice(rule, '2026-01-31', '2026-04-10')];

  it('cuts a part expected to give more than two shares of the window (960 records over 4 slots: 240) into a share and the rest', () => {
    const [first, second] = parts();
    const spans = spansOf(rule);
    const cuts = spans.balancingCuts([first!, second!], 4, spans.rates([first!, second!]), Infinity);
    assert.equal(cuts.length, 1);
    assert.equal(cuts[0]?.part, second);
    // 240 records at 10 a day: Jan 31–Feb 23 is kept; 460 left, less than two shares.
    assert.deepEqual(texts(cuts), [['2026-02-23']]);
  });

  it('cuts the rest again while more than two shares would be left, listing the cuts from the far end', () => {
    const [first, second] = parts();
    const spans = spansOf(rule);
    // 8 slots: a share is 120 records, 12 days.
    const cuts = spans.balancingCuts([first!, second!], 8, spans.rates([first!, second!]), Infinity);
    assert.deepEqual(texts(cuts), [['2026-01-16'], ['2026-03-19', '2026-03-07', '2026-02-23', '2026-02-11']]);
  });

  it('keeps a share to `longest` records however few the slots, and cuts a part into at most as many shares as the window has slots', () => {
    const [first, second] = parts();
    const spans = spansOf(rule);
    // 960 records over 4 slots would be shares of 240; at most 100 (10 days) a share.
    const cuts = spans.balancingCuts([first!, second!], 4, spans.rates([first!, second!]), 100);
    // The first keeps Jan 5–14, and Jan 15–30 (160, not more than two shares) is left whole; the
    // second is cut every 10 days from Jan 31, into at most 4 shares (the window) and the rest,
    // Mar 12–Apr 10, cut in its turn when it comes first.
    assert.deepEqual(texts(cuts), [['2026-01-14'], ['2026-03-11', '2026-03-01', '2026-02-19', '2026-02-09']]);
  });

  it('never cuts a part in flight, nor any part before a rate is known', () => {
    const [first, second] = parts();
    second!.inFlight = true;
    const spans = spansOf(rule);
    assert.deepEqual(texts(spans.balancingCuts([first!, second!], 8, spans.rates([first!, second!]), Infinity)), [['2026-01-16']]);
    const fresh = [slice(rule, '2026-01-01', '2026-02-14'), slice(rule, '2026-02-15', '2026-04-10')];
    assert.deepEqual(spans.balancingCuts(fresh, 8, spans.rates(fresh), Infinity), []);
  });

  it('descending, keeps the newest days and cuts towards the oldest', () => {
    const down: SliceRule = { field: 'oldest_sort_date', descending: true, sortParam: 'sort', sizeParam: 'page_size' };
    // 50 records over Apr 10 back to Apr 6: 10 a day; Jan 1–Apr 6 left (960 records).
    const part = slice(down, '2026-01-01', '2026-04-10', { read: 50, at: '2026-04-06T10:00:00' });
    const spans = spansOf(down);
    const cuts = spans.balancingCuts([part], 4, spans.rates([part]), Infinity);
    // A share is 240 records: Mar 14–Apr 6, then Feb 18–Mar 13; 480 left is not more than two shares.
    assert.deepEqual(texts(cuts), [['2026-02-17', '2026-03-13']]);
  });
});

describe('PartSpans.priorityOf', () => {
  const rule: SliceRule = { field: 'oldest_sort_date', descending: false, sortParam: 'sort', sizeParam: 'page_size' };

  it('puts the part with the most records still expected first, and a part not known yet before all', () => {
    const first = slice(rule, '2026-01-01', '2026-01-30', { read: 50, at: '2026-01-05T10:00:00' });
    const second = slice(rule, '2026-01-31', '2026-04-10');
    const spans = spansOf(rule);
    const rates = spans.rates([first, second]);
    assert.ok(goesAfter(spans.priorityOf(first, rates), spans.priorityOf(second, rates)), 'the 700 records expected go before the 260');
    const unknown = slice(rule, '2026-01-01', '2026-01-30');
    assert.ok(goesAfter(spans.priorityOf(second, rates), spans.priorityOf(unknown, new Map())));
  });

  it("orders parts expected to give as much by the writer's order", () => {
    const spans = spansOf(rule);
    const early = slice(rule, '2026-01-01', '2026-01-10', { read: 50, at: '2026-01-05T10:00:00' });
    const late = slice(rule, '2026-02-01', '2026-02-10', { read: 50, at: '2026-02-05T10:00:00' });
    const rates = spans.rates([early, late]);
    assert.ok(goesAfter(spans.priorityOf(late, rates), spans.priorityOf(early, rates)));
  });
});

describe('PartSpans.widest (a slot is spare)', () => {
  const rule: SliceRule = { field: 'oldest_sort_date', descending: false, sortParam: 'sort', sizeParam: 'page_size' };
  const anyRoom = (): boolean => true;

  it('cuts a part with more than one page left at the middle of its days: two requests side by side instead of one after the other', () => {
    // 10 records a day; Jan 5–12 left: 80 records, a page and a half.
    const part = slice(rule, '2026-01-01', '2026-01-12', { read: 50, at: '2026-01-05T10:00:00' });
    const cut = spansOf(rule).widest([part], new Map(), 8, anyRoom, undefined);
    assert.equal(cut?.part, part);
    assert.equal(dayText(cut!.mid), '2026-01-08');
  });

  it('leaves a part whose last page holds what is left', () => {
    // Jan 5–9 left: 50 records.
    const part = slice(rule, '2026-01-01', '2026-01-09', { read: 50, at: '2026-01-05T10:00:00' });
    assert.equal(spansOf(rule).widest([part], new Map(), 8, anyRoom, undefined), undefined);
  });
});
