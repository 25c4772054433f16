/**
 * The days of a sliced list (src/api/slices.ts), in the sort order: the bounds a cut sends, where
 * a chain has got to, the far end's probe and what its answer tells. Whole runs: parallel.test.ts and the
 * properties of list-properties.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linkChanges, splitAddress, withParam, withQueryBack } from '../src/api/links.js';
import { SliceDays, dayOfMs, type SliceRule } from '../src/api/slices.js';

const day = (text: string): number => dayOfMs(Date.parse(`${text}T00:00:00Z`));
const ascending: SliceRule = { field: 'oldest_sort_date', descending: false, sortParam: 'sort' };
const descending: SliceRule = { ...ascending, descending: true };
const params = (address: string): string[][] => [...new URLSearchParams(address.split('?')[1])].sort();

function daysOf(rule: SliceRule, phase: string, asOf?: number) {
  return { days: new SliceDays({ phases: [phase], slicing: rule, ...(asOf !== undefined && { asOf }) }, rule) };
}

describe('SliceDays', () => {
  const open = 'v1.3/conversations?is_priority=true&page_size=50';

  it('narrows to half-open days, closing a side left open with a bound no record passes', () => {
    const { days } = daysOf(ascending, open);
    assert.deepEqual(
      params(days.narrowed(open, day('2026-01-01'), day('2026-01-31'))),
      params(`${open}&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01`),
    );
    assert.deepEqual(
      params(days.narrowed(open, day('2026-02-01'), undefined)),
      params(`${open}&oldest_sort_date_gte=2026-02-01&oldest_sort_date_lt=9999-12-31`),
    );
    assert.deepEqual(
      params(days.narrowed(open, undefined, day('2026-01-31'))),
      params(`${open}&oldest_sort_date_gte=1900-01-01&oldest_sort_date_lt=2026-02-01`),
    );
  });

  it("keeps the user's own bound where the slice ends with it (its reading holds)", () => {
    const ranged = `${open}&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lte=2026-03-01`;
    const { days } = daysOf(ascending, ranged);
    const last = days.narrowed(ranged, day('2026-02-01'), day('2026-03-01'));
    assert.deepEqual(params(last), params(`${open}&oldest_sort_date_lte=2026-03-01&oldest_sort_date_gte=2026-02-01`));
    assert.equal(days.farBound(0), day('2026-03-01'));
    assert.equal(days.lastDay(0, undefined), day('2026-03-01'));
  });

  it('counts a descending list in days of its own order: its first day is the latest', () => {
    const ranged = `${open}&sort=-oldest_sort_date&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-03-01`;
    const { days } = daysOf(descending, ranged);
    assert.equal(days.toCalendar(days.farBound(0)), day('2026-01-01'));
    assert.equal(days.toCalendar(days.lastDay(0, undefined)), day('2026-01-01'));
    // The ordered days -Feb 10 .. -Feb 1: Feb 1 to Feb 10.
    const slice = days.narrowed(ranged, days.toOrdered(day('2026-02-10')), days.toOrdered(day('2026-02-01')));
    assert.deepEqual(params(slice), params(`${open}&sort=-oldest_sort_date&oldest_sort_date_gte=2026-02-01&oldest_sort_date_lt=2026-02-11`));
  });

  it('reads a position only from a keyset bound tighter than the chain, with a skip below the records read', () => {
    const { days } = daysOf(ascending, open);
    const next = `${open}&oldest_sort_date_gte=2026-01-05T10:00:00&skip=2`;
    assert.equal(days.positionOf(next, open, 50), day('2026-01-05'));
    assert.equal(days.positionOf(next, open, 2), undefined, 'a skip counting every record read');
    assert.equal(days.positionOf(`${open}&skip=50`, open, 50), undefined, 'a plain skip link');
    const { days: down } = daysOf(descending, open);
    assert.equal(down.toCalendar(down.positionOf(`${open}&oldest_sort_date_lte=2026-01-05T10:00:00&skip=1`, open, 50)), day('2026-01-05'));
  });

  it('reads a keyset date-time in the ISO 8601 forms services write, zones included', () => {
    const { days } = daysOf(ascending, open);
    for (const [at, expected] of [
      ['2026-01-05T10:00:00Z', '2026-01-05'],
      ['2026-01-05T10:00:00.000000+00:00', '2026-01-05'],
      ['2026-01-05 10:00:00', '2026-01-05'],
      ['2026-01-05T01:00:00+02:00', '2026-01-04'],
      ['2026-01-04T23:30:00-01:00', '2026-01-05'],
    ]) {
      const next = `${open}&oldest_sort_date_gte=${encodeURIComponent(at as string)}&skip=1`;
      assert.equal(days.positionOf(next, open, 50), day(expected as string), at);
      assert.deepEqual(linkChanges(open, next, { style: 'skip' }), [], at);
    }
  });

  it('ascending, takes the later of the far end and the day the dates were resolved at; the probe asks for the last record', () => {
    const asOf = Date.parse('2026-11-26T12:00:00Z');
    const { days } = daysOf(ascending, open, asOf);
    assert.equal(days.lastDay(0, undefined), dayOfMs(asOf), 'before the answer');
    assert.deepEqual(params(days.farProbe(0)), params(`${open.replace('50', '1')}&sort=-oldest_sort_date`));
    const far = days.farEndOf(`${open}&oldest_sort_date_lte=2027-06-01T00:00:00&skip=1`);
    assert.equal(far, day('2027-06-01'));
    assert.equal(days.lastDay(0, far), day('2027-06-01'), 'records dated after today count');
    assert.equal(days.lastDay(0, day('2026-01-01')), dayOfMs(asOf), 'never before the day the dates were resolved at');
    assert.equal(days.farEndOf(`${open}&skip=1`), undefined, 'a link without a keyset bound tells no day');
    assert.equal(days.farEndOf(null), undefined);
  });

  it('descending, its far end is the oldest record, unknown until the probe answers', () => {
    const { days } = daysOf(descending, open, Date.now());
    assert.equal(days.lastDay(0, undefined), undefined);
    assert.deepEqual(params(days.farProbe(0)), params(`${open.replace('50', '1')}&sort=oldest_sort_date`));
    const far = days.farEndOf(`${open}&oldest_sort_date_gte=2024-02-03T00:00:00&skip=1`);
    assert.equal(days.toCalendar(days.lastDay(0, far)), day('2024-02-03'));
  });
});

describe('splitAddress', () => {
  it('gives each caller a query of its own: one changed leaves the next split of the address as it was', () => {
    const address = 'v1.3/conversations?is_priority=true&skip=50&fields=a%2Cb';
    const [path, query] = splitAddress(address);
    query.set('skip', '100');
    query.append('sort', 'oldest_sort_date');
    assert.equal(path, 'v1.3/conversations');
    assert.equal(splitAddress(address)[1].toString(), 'is_priority=true&skip=50&fields=a%2Cb');
    assert.equal(withParam(address, 'skip', '100'), 'v1.3/conversations?is_priority=true&skip=100&fields=a%2Cb');
    assert.equal(withQueryBack(address, 'v1.3/conversations?skip=100', 'skip'), 'v1.3/conversations?skip=100&is_priority=true&fields=a%2Cb');
    assert.deepEqual(splitAddress('v1.3/tags'), ['v1.3/tags', new URLSearchParams()]);
  });
});
