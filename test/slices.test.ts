/**
 * The days of a sliced list (src/api/slices.ts), in the sort order: the bounds a cut sends, where
 * a chain has got to, the far end and the near-bound probe. Whole runs: parallel.test.ts and the
 * properties of list-properties.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linkChanges, splitAddress, withParam, withQueryBack } from '../src/api/links.js';
import { SliceDays, dayOfMs, type Probed, type SliceRule } from '../src/api/slices.js';

const day = (text: string): number => dayOfMs(Date.parse(`${text}T00:00:00Z`));
const ascending: SliceRule = { field: 'oldest_sort_date', descending: false, sortParam: 'sort' };
const descending: SliceRule = { ...ascending, descending: true };
const params = (address: string): string[][] => [...new URLSearchParams(address.split('?')[1])].sort();

function daysOf(rule: SliceRule, phase: string, answers: Probed[] = [], asOf?: number) {
  const probes: string[] = [];
  let changed = 0;
  const days = new SliceDays({ phases: [phase], slicing: rule, ...(asOf !== undefined && { asOf }) }, rule, {
    probe: async (address) => (probes.push(address), answers.shift() ?? null),
    changed: () => changed++,
  });
  return { days, probes, changed: () => changed };
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
    assert.equal(days.bound(0, 'near'), day('2026-01-01'));
    assert.equal(days.lastDay(0), day('2026-03-01'));
  });

  it('counts a descending list in days of its own order: its first day is the latest', () => {
    const ranged = `${open}&sort=-oldest_sort_date&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-03-01`;
    const { days } = daysOf(descending, ranged);
    assert.equal(days.toCalendar(days.bound(0, 'near')), day('2026-02-28'));
    assert.equal(days.toCalendar(days.lastDay(0)), day('2026-01-01'));
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

  it('ascending, takes the day the dates were resolved at for the far end until a long chain reads past it', async () => {
    const asOf = Date.parse('2026-11-26T12:00:00Z');
    const { days, probes, changed } = daysOf(ascending, open, [{ ids: ['9'], next: `${open}&oldest_sort_date_lte=2027-06-01T00:00:00&skip=1` }], asOf);
    assert.equal(days.lastDay(0), dayOfMs(asOf));
    assert.equal(days.farEndWanted(0, day('2026-10-01'), true), false, 'the estimate holds');
    assert.equal(days.farEndWanted(0, day('2026-12-06'), false), false, 'nor for a chain as short as a short list');
    assert.equal(days.farEndWanted(0, day('2026-12-06'), true), true);
    assert.deepEqual(probes, [], 'asking is not a check');
    days.probeFarEnd(0);
    days.probeFarEnd(0);
    assert.equal(days.farEndWanted(0, day('2026-12-06'), true), false, 'asked once');
    assert.equal(days.lastDay(0), dayOfMs(asOf), 'until the answer comes');
    assert.deepEqual(probes.map(params), [params(`${open.replace('50', '1')}&sort=-oldest_sort_date`)]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(changed(), 1);
    assert.equal(days.lastDay(0), day('2027-06-01'), 'records dated after today count');
  });

  it('descending, asks for its far end (the oldest record) once', async () => {
    const { days, probes } = daysOf(descending, open, [{ ids: ['9'], next: `${open}&oldest_sort_date_gte=2024-02-03T00:00:00&skip=1` }], Date.now());
    assert.equal(days.farEndWanted(0, days.toOrdered(day('2026-10-01')), false), true);
    assert.equal(days.lastDay(0), undefined);
    days.probeFarEnd(0);
    days.probeFarEnd(0);
    assert.deepEqual(probes.map(params), [params(`${open.replace('50', '1')}&sort=oldest_sort_date`)]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(days.toCalendar(days.lastDay(0)), day('2024-02-03'));
  });

  it('reads the last 30 days as far as cuts go on their own, where the days are known and hold more than twice that', () => {
    const asOf = Date.parse('2026-06-30T12:00:00Z');
    const cases: Array<[string, SliceRule, number | undefined, string | undefined]> = [
      [open, ascending, asOf, '2026-06-01'],
      [`${open}&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lte=2026-03-31`, ascending, undefined, '2026-03-02'],
      [`${open}&oldest_sort_date_lte=2026-03-31`, ascending, undefined, '2026-03-02'],
      // 59 days: the recent days would be half of them.
      [`${open}&oldest_sort_date_gte=2026-05-02&oldest_sort_date_lte=2026-06-29`, ascending, asOf, undefined],
      // Descending, the recent days are the oldest: known only from a bound.
      [`${open}&sort=-oldest_sort_date`, descending, asOf, undefined],
      [`${open}&sort=-oldest_sort_date&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lte=2026-03-31`, descending, undefined, '2026-01-30'],
      // Ascending without the day the dates were resolved at: the end is unknown until probed.
      [open, ascending, undefined, undefined],
    ];
    for (const [phase, rule, when, from] of cases) {
      const { days } = daysOf(rule, phase, [], when);
      assert.equal(days.toCalendar(days.recentFrom(0)), from === undefined ? undefined : day(from), phase);
    }
  });

  it('tells from the recent days whether the service keeps the bound a cut adds: no record of the start may come back', () => {
    const from = day('2026-06-01');
    const first = ['1', '2', '3', '4'].map((id) => ({ id }));
    const records = (...ids: string[]) => ids.map((id) => ({ id }));
    const cases: Array<[string, number, Array<{ id: string }>, Array<{ id: string }>, boolean | undefined]> = [
      ['the first page ends before them, none came back', day('2026-03-01'), first, records('7', '8'), true],
      ['the first page ends before them, one came back', day('2026-03-01'), first, records('4', '8'), false],
      ['the first page reaches into them: its later records may come back', day('2026-06-03'), first, records('3', '4'), true],
      ['the first page reaches into them: its first came back', day('2026-06-03'), first, records('1', '2'), undefined],
      ['nothing in the recent days', day('2026-03-01'), first, [], undefined],
      ['a first page of one record', day('2026-03-01'), records('1'), records('7'), undefined],
    ];
    for (const [what, position, page, recent, kept] of cases) {
      const { days } = daysOf(ascending, open);
      days.sample(0, page, position);
      assert.equal(days.recentKept(0, from, recent), kept, what);
      assert.equal(days.nearKept(0), kept === true, what);
    }
    // What it tells holds for the run's other queries too; a phase with a verdict of its own keeps it.
    const two = new SliceDays({ phases: [open, open.replace('true', 'false')], slicing: ascending }, ascending, { probe: async () => null, changed: () => 0 });
    two.sample(1, first, day('2026-03-01'));
    assert.equal(two.recentKept(1, from, records('7')), true);
    assert.equal(two.nearKept(0), true);
  });

  it('trusts a cut only once records of the start do not come back from past its position', async () => {
    for (const [past, kept] of [
      [['3', '4'], true],
      [['1', '3'], false],
    ] as const) {
      const { days, probes } = daysOf(ascending, open, [{ ids: [...past], next: null }]);
      assert.equal(days.sample(0, [{ id: 1 }, { id: 2 }], day('2026-01-05')), false, 'no dates resolved: not checked at once');
      assert.equal(days.nearKept(0), false, 'not asked');
      assert.deepEqual(probes, [], 'asking is not a check');
      days.probeNear(0);
      days.probeNear(0);
      assert.equal(days.nearKept(0), false, 'not before the answer');
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(days.nearKept(0), kept);
      assert.equal(probes.length, 1);
      assert.deepEqual(params(probes[0] as string), params(`${open.replace('50', '2')}&oldest_sort_date_gte=2026-01-06&oldest_sort_date_lt=9999-12-31`));
    }
  });

  it('without the first page (a resumed run), probes for it, and sends the second request only when asked again, from a pump', async () => {
    const keyset = `${open}&oldest_sort_date_gte=2026-01-05T10:00:00&skip=1&sort=oldest_sort_date`;
    const { days, probes, changed } = daysOf(ascending, open, [
      { ids: ['1', '2'], next: keyset },
      { ids: ['3'], next: null },
    ]);
    days.probeNear(0);
    days.probeNear(0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(probes.length, 1, 'the first page only, once');
    assert.equal(changed(), 1, 'its answer asks for a pump');
    assert.equal(days.nearKept(0), false, 'not known yet');
    days.probeNear(0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(probes.length, 2);
    assert.equal(days.nearKept(0), true);
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
