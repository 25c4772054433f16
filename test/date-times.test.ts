/**
 * Date-time bounds (a DATE with a time): parsed to the service's own form, sent in ranges and
 * explicit bounds, refused where the spec takes whole days (reports), and lists bounded by them
 * against the sandbox and a model service, sliced or not: every request stays inside the user's
 * bounds, and a service reading a date-time as its day gives the documented extra records only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dateRange, splitAddress } from '../src/api/links.js';
import { parseDate, parseRange } from '../src/core/parse.js';
import { apiRequests, fakeClock, openSandbox, runCli, sandboxEnv } from './helpers.js';
import { DAY, ModelServer, NOW, modelData, type ModelVariant } from './model-server.js';
import type { Sandbox } from '../src/sandbox/index.js';

const T = Date.UTC(2026, 10, 22, 13, 5);

describe('a date-time DATE', () => {
  it('is sent in UTC as the service writes its dates, whatever zone it was given in', () => {
    for (const [text, want] of [
      ['2026-11-27T02:30:00Z', '2026-11-27T02:30:00'],
      ['2026-11-27t02:30:00z', '2026-11-27T02:30:00'],
      ['2026-11-27T02:30:00', '2026-11-27T02:30:00'],
      ['2026-11-27T02:30:00+02:00', '2026-11-27T00:30:00'],
      ['2026-11-27T01:30:00+0200', '2026-11-26T23:30:00'],
      ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00'],
      ['2024-02-29T00:00:00', '2024-02-29T00:00:00'],
    ]) {
      assert.equal(parseDate(text as string, '--oldest', T), want, text);
    }
  });

  it('is a usage error naming the forms when it is no real instant or not in the form', () => {
    for (const text of [
      '2026-11-27T24:00:00',
      '2026-11-27T02:60:00',
      '2026-02-29T00:00:00',
      '2026-11-27T02:30',
      '2026-11-27T02:30:00.5',
      '2026-11-27 02:30:00',
      '2026-11-27T02:30:00+25:00',
      '0000-01-01T00:30:00+01:00',
    ]) {
      assert.throws(
        () => parseDate(text, '--oldest', T),
        {
          message: `--oldest: "${text}" is not a valid date; use YYYY-MM-DD, today, yesterday, Nd or Nw, or a date-time YYYY-MM-DDTHH:MM:SS with Z, an offset (+02:00) or none (UTC)`,
        },
        text,
      );
    }
  });

  it('closes FROM..TO at that instant (lte), a day TO at the day after (lt), and goes as written in explicit bounds', () => {
    assert.deepEqual(parseRange('2026-11-27T02:30:00Z..2026-11-27T06:00:00+01:00', '--oldest', T), [
      { op: 'gte', date: '2026-11-27T02:30:00' },
      { op: 'lte', date: '2026-11-27T05:00:00' },
    ]);
    assert.deepEqual(parseRange('2026-11-27T02:30:00..2026-11-28', '--oldest', T), [
      { op: 'gte', date: '2026-11-27T02:30:00' },
      { op: 'lt', date: '2026-11-29' },
    ]);
    assert.deepEqual(parseRange('..2026-11-27T02:30:00', '--oldest', T), [{ op: 'lte', date: '2026-11-27T02:30:00' }]);
    assert.deepEqual(parseRange('lt:2026-11-28T00:00:00+01:00,gt:2026-11-27T02:30:00', '--oldest', T), [
      { op: 'gt', date: '2026-11-27T02:30:00' },
      { op: 'lt', date: '2026-11-27T23:00:00' },
    ]);
  });

  it('refuses a range that no instant satisfies, to the second', () => {
    const message = (text: string): { message: string } => ({ message: `--oldest: "${text}" matches no date; the start is after the end` });
    assert.throws(() => parseRange('2026-11-27T02:30:01..2026-11-27T02:30:00', '--oldest', T), message('2026-11-27T02:30:01..2026-11-27T02:30:00'));
    assert.throws(() => parseRange('gt:2026-11-27T02:30:00,lt:2026-11-27T02:30:01', '--oldest', T), message('gt:2026-11-27T02:30:00,lt:2026-11-27T02:30:01'));
    assert.throws(() => parseRange('gte:2026-11-28T00:00:00,lte:2026-11-27', '--oldest', T), message('gte:2026-11-28T00:00:00,lte:2026-11-27'));
    assert.deepEqual(parseRange('2026-11-27T02:30:00..2026-11-27T02:30:00', '--oldest', T).length, 2);
    assert.deepEqual(parseRange('gte:2026-11-27T23:59:59,lte:2026-11-27', '--oldest', T).length, 2);
  });
});

describe('date-time bounds on the sandbox', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox({ seed: 7, conversations: 300 });
  });
  after(() => sandbox.close());

  it('sends a date-time with URL-encoded colons and lists only the records inside it', async () => {
    const unread = sandbox.data.conversations.filter((c) => c.status === 'unread');
    const sorted = unread.map((c) => c.newestMs).sort((a, b) => a - b);
    // Mid-day instants (the sandbox's dates are whole seconds, spread over the year).
    const [lo, hi] = [(sorted[Math.floor(sorted.length / 4)] as number) + 1000, (sorted[Math.floor(sorted.length / 2)] as number) - 1000];
    const [from, to] = [new Date(lo).toISOString().slice(0, 19), new Date(hi + 3_600_000).toISOString().slice(0, 19)];
    const start = apiRequests(sandbox).length;
    const result = await runCli(
      ['conversations', 'list', '--status', 'unread', '-o', 'tsv', '--columns', 'id', '--no-header', '--newest', `${from}Z..${to}+01:00`],
      {
        env: sandboxEnv(sandbox),
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const sent = apiRequests(sandbox, start).map((request) => request.url);
    const hiText = new Date(hi).toISOString().slice(0, 19);
    assert.ok(sent[0]?.includes(`newest_sort_date_gte=${from.replaceAll(':', '%3A')}&newest_sort_date_lte=${hiText.replaceAll(':', '%3A')}`), sent[0]);
    const want = unread.filter((c) => c.newestMs >= lo && c.newestMs <= hi).map((c) => c.id);
    assert.deepEqual(result.stdout.split('\n').filter(Boolean).sort(), want.sort());
    assert.ok(want.length >= 5 && want.length < unread.length / 2);
  });

  it('refuses a date-time in reports create --from/--to, sending nothing', async () => {
    const start = sandbox.requests.length;
    const result = await runCli(['reports', 'create', '--account', '1', '--from', '2026-11-27T00:00:00Z', '--to', 'today'], { env: sandboxEnv(sandbox) });
    assert.deepEqual(
      [result.code, result.stdout, result.stderr],
      [2, '', 'carectl: --from: "2026-11-27T00:00:00Z" is a date-time; this option takes whole days (YYYY-MM-DD, today, yesterday, Nd or Nw)\n'],
    );
    assert.equal(sandbox.requests.length, start);
  });
});

describe('date-time bounds on a model service', () => {
  const data = modelData(400, ['year', 'hours'], 11);
  const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19);
  // 06:15 to 11:00 UTC on the model's present day, and a span of weeks whose ends fall mid-day.
  const ranges = [
    { flag: '2026-06-30T08:15:00+02:00..2026-06-30T11:00:00', lo: Date.UTC(2026, 5, 30, 6, 15), hi: Date.UTC(2026, 5, 30, 11) },
    { flag: 'gt:2026-03-10T12:00:00Z,lt:2026-05-20T06:30:00', lo: Date.UTC(2026, 2, 10, 12) + 1000, hi: Date.UTC(2026, 4, 20, 6, 30) - 1000 },
  ];

  async function list(variant: ModelVariant, flag: string, parallel: number): Promise<{ ids: string[]; model: ModelServer }> {
    const model = new ModelServer(data, variant);
    await model.start();
    try {
      const env = {
        CARECTL_BASE_URL: model.baseUrl,
        CARECTL_USER: 'bot',
        CARECTL_PASSWORD: 'model-secret',
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      };
      const clock = fakeClock(NOW);
      const argv = [
        'conversations',
        'list',
        '--status',
        'closed',
        '-o',
        'tsv',
        '--columns',
        'id',
        '--no-header',
        '--page-size',
        '5',
        '--parallel',
        String(parallel),
        '--oldest',
        flag,
      ];
      const result = await runCli(argv, { env, now: clock.now, sleep: clock.sleep });
      assert.equal(result.code, 0, result.stderr);
      return { ids: result.stdout.split('\n').filter((line) => line !== ''), model };
    } finally {
      await model.close();
    }
  }

  /** Every request's oldest_sort_date bounds lie within the user's, as the model reads a date-time. */
  function assertInside(model: ModelServer, lo: number, hi: number): void {
    for (const address of model.requests) {
      const range = dateRange(splitAddress(address)[1], 'oldest_sort_date');
      assert.ok(range.lo && range.lo.at >= lo && range.hi && range.hi.at <= hi + 999, `${address} goes outside ${iso(lo)}..${iso(hi)}`);
    }
  }

  /** The records inside lo..hi (dayOnly: from lo's midnight), in the list's order. */
  const inRange = (lo: number, hi: number, dayOnly = false): string[] =>
    data
      .filter((r) => r.status === 'closed' && r.oldest >= (dayOnly ? Math.floor(lo / DAY) * DAY : lo) && r.oldest <= hi)
      .sort((a, b) => a.oldest - b.oldest || a.id.localeCompare(b.id))
      .map((r) => r.id);

  for (const reading of ['whole-day', 'midnight'] as const)
    for (const links of ['keyset', 'skip'] as const)
      for (const parallel of [1, 4])
        it(`lists exactly the records inside the bounds (${reading}, ${links} links, --parallel ${parallel}), each request inside them`, async () => {
          for (const { flag, lo, hi } of ranges) {
            const { ids, model } = await list({ reading, links }, flag, parallel);
            assert.deepEqual(ids, inRange(lo, hi), flag);
            assert.ok(ids.length > 3, flag);
            assertInside(model, lo, hi);
          }
        });

  it('passes on the records a service reading a date-time as its day adds before the lower bound, and no others (help dates says so)', async () => {
    const { flag, lo, hi } = ranges[0]!;
    const { ids } = await list({ reading: 'whole-day', links: 'skip', boundsAsDates: true }, flag, 2);
    const extra = ids.filter((id) => !inRange(lo, hi).includes(id));
    assert.ok(extra.length > 0);
    assert.deepEqual(
      ids,
      inRange(lo, hi + DAY, true).filter((id) => data.find((r) => r.id === id)!.oldest < Math.ceil(hi / DAY) * DAY),
    );
  });
});
