/**
 * The list failures of issue 23, each against a server the spec allows (the model server, or a
 * scripted one for replies no model sends): what carectl printed wrongly, now checked exactly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeClock, openSandbox, runCli } from './helpers.js';
import { DAY, ModelServer, NOW, modelData, type ModelRecord, type ModelVariant, type Shape } from './model-server.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const envOf = (baseUrl: string): Record<string, string> => ({
  CARECTL_BASE_URL: baseUrl,
  CARECTL_USER: 'bot',
  CARECTL_PASSWORD: 'model-secret',
  XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
});
const ids = (stdout: string): string[] => stdout.split('\n').filter((line) => line !== '' && line !== 'id');

async function withModel(
  data: ModelRecord[],
  variant: ModelVariant,
  use: (model: ModelServer, list: (argv: string[]) => ReturnType<typeof runCli>) => Promise<void>,
): Promise<void> {
  const model = new ModelServer(data, variant);
  await model.start();
  const clock = fakeClock(NOW);
  try {
    await use(model, (argv) =>
      runCli(['conversations', 'list', '-o', 'tsv', '--columns', 'id', ...argv], { env: envOf(model.baseUrl), now: clock.now, sleep: clock.sleep }),
    );
  } finally {
    await model.close();
  }
}

describe('lists on servers the spec allows', () => {
  test('records dated up to a year ahead are all printed, in parallel, in a --limit chain, and by an open range', async () => {
    const data = modelData(900, ['future', 'year'], 5);
    await withModel(data, { reading: 'whole-day', links: 'keyset' }, async (model, list) => {
      const all = model.expected({ status: 'unread' });
      for (const parallel of ['1', '3', '8']) {
        const result = await list(['--status', 'unread', '--parallel', parallel]);
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(ids(result.stdout), all, `--parallel ${parallel}`);
      }
      const ahead = model.expected({ status: 'unread', bounds: [['oldest_sort_date_gte', '2027-01-01']] });
      assert.ok(ahead.length > 50);
      for (const parallel of ['1', '8'])
        assert.deepEqual(ids((await list(['--status', 'unread', '--oldest', '2027-01-01..', '--parallel', parallel])).stdout), ahead);
    });
  });

  test("a server reading a date-only bound as that day's midnight loses nothing at cuts, and FROM..TO keeps the TO day", async () => {
    const data = modelData(900, ['year', 'hours'], 9);
    await withModel(data, { reading: 'midnight', links: 'keyset' }, async (model, list) => {
      assert.deepEqual(ids((await list(['--priority', '--parallel', '8'])).stdout), model.expected({ is_priority: true }));
      const to = new Date(NOW).toISOString().slice(0, 10);
      const range = model.expected({
        is_priority: false,
        bounds: [
          ['oldest_sort_date_gte', '2026-01-01'],
          ['oldest_sort_date_lt', new Date(NOW + DAY).toISOString().slice(0, 10)],
        ],
      });
      assert.ok(
        range.some((id) => (data.find((r) => r.id === id) as ModelRecord).oldest >= Date.parse(to)),
        'records on the TO day',
      );
      assert.deepEqual(ids((await list(['--no-priority', '--oldest', `2026-01-01..${to}`, '--parallel', '8'])).stdout), range);
    });
  });

  test('a server that ignores the date bounds: each record once, exit 0', async () => {
    await withModel(modelData(30, ['year'], 3), { reading: 'whole-day', links: 'skip', ignoreBounds: true }, async (model, list) => {
      const result = await list(['--page-size', '5', '--parallel', '8']);
      assert.equal(result.code, 0, result.stderr);
      const seen = new Set<string>();
      const union = [...model.expected({ is_priority: true }), ...model.expected({ is_priority: false })].filter((id) => !seen.has(id) && (seen.add(id), true));
      assert.deepEqual(ids(result.stdout), union);
    });
  });

  test('a server that ignores upper date bounds, with keyset links: once a record comes twice, no part is cut further', async () => {
    const data = modelData(1500, ['year'], 4);
    await withModel(data, { reading: 'whole-day', links: 'keyset', ignoreFar: true }, async (model, list) => {
      let mark = model.requests.length;
      const one = await list(['--status', 'closed', '--page-size', '20', '--parallel', '1']);
      const sequential = model.requests.length - mark;
      mark = model.requests.length;
      const many = await list(['--status', 'closed', '--page-size', '20', '--parallel', '8']);
      assert.equal(many.code, 0, many.stderr);
      assert.deepEqual(ids(many.stdout), ids(one.stdout));
      assert.deepEqual(ids(many.stdout), model.expected({ status: 'closed' }));
      // Each slice cut before the repeat showed reads the whole list again: a few, not one a day.
      assert.ok(model.requests.length - mark <= 4 * sequential, `${model.requests.length - mark} requests, ${sequential} one at a time`);
    });
  });

  // The first page gives a position; the first cut, in two, tests the bound (its slice must not bring back the first page) and
  // gives the pace the next cuts go by: once it answers, the idle slots are cut for. NOW is 2026-06-30: the span ends there.
  test('a list of many months fills the window at its second answer: one cut slice tells the bound and the pace, and no probe', async () => {
    await withModel(modelData(1500, ['year'], 11), { reading: 'whole-day', links: 'keyset' }, async (model, list) => {
      const mark = model.requests.length;
      const result = await list(['--status', 'closed', '--page-size', '20', '--verbose']);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(ids(result.stdout), model.expected({ status: 'closed' }));
      // In the order carectl sent them: a request on a kept connection reaches the server before one
      // sent earlier on a connection still being opened.
      const sentUrls = result.stderr.split('\n').flatMap((line) => /^> GET (\S+)$/.exec(line)?.[1] ?? []);
      assert.equal(sentUrls.length, model.requests.length - mark);
      const sent = sentUrls.map((url) => new URL(url).searchParams);
      assert.equal(sent[0]?.get('oldest_sort_date_gte'), null);
      assert.deepEqual([sent[1]?.get('oldest_sort_date_lt'), sent[1]?.has('skip')], ['9999-12-31', false], 'the cut slice, open to the end');
      const probes = (params: URLSearchParams): boolean => Number(params.get('page_size')) < 20;
      assert.ok(!sent.some(probes), 'no probe: the span ends on the day the dates were resolved at');
      // The next round, sent once both answered: the two slices' next pages, and new slices for the idle slots.
      const slices = sent.slice(2, 10).filter((params) => !params.has('skip'));
      assert.ok(slices.length >= 5, sentUrls.slice(0, 10).join('\n'));
      // A union with a date range: its span is its own, no probe either.
      const union = model.requests.length;
      const ranged = await list(['--oldest', '2025-07-01..2026-06-30', '--page-size', '20']);
      assert.equal(ranged.code, 0, ranged.stderr);
      const bounds: Array<[string, string]> = [
        ['oldest_sort_date_gte', '2025-07-01'],
        ['oldest_sort_date_lt', '2026-07-01'],
      ];
      assert.deepEqual(ids(ranged.stdout), [...model.expected({ is_priority: true, bounds }), ...model.expected({ is_priority: false, bounds })]);
      assert.ok(!model.requests.slice(union).some((url) => probes(new URL(url, 'http://x').searchParams)), 'no probe');
    });
  });

  test('a service that ignores the bound a cut adds: the cut slice is left out, nothing more is cut, one request more than --parallel 1', async () => {
    // The first cut slice repeats the list's first page, and its link: the first page's chain reads on, whichever is slower.
    for (const recentFirst of [true, false]) {
      const later = (params: URLSearchParams): number => (params.has('skip') || (params.get('oldest_sort_date_gte') !== null) === recentFirst ? 0 : 40);
      const variant: ModelVariant = { reading: 'whole-day', links: 'keyset', ignoreNear: true, delayMs: later };
      await withModel(modelData(1500, ['year'], 11), variant, async (model, list) => {
        let mark = model.requests.length;
        const one = await list(['--status', 'closed', '--page-size', '20', '--parallel', '1']);
        const sequential = model.requests.length - mark;
        mark = model.requests.length;
        const many = await list(['--status', 'closed', '--page-size', '20']);
        assert.equal(many.code, 0, many.stderr);
        assert.deepEqual(ids(many.stdout), ids(one.stdout));
        assert.deepEqual(ids(many.stdout), model.expected({ status: 'closed' }));
        assert.equal(model.requests.length - mark, sequential + 1, model.requests.slice(mark).join('\n'));
      });
    }
  });

  test('a first cut slice that fails tells nothing: it is left out, the list is read as one chain, whole, exit 0', async () => {
    // The first cut: a date-only lower bound, open to the end (the later slices' links carry a time, their own ranges a closed end).
    const cutSlice = (params: URLSearchParams): boolean =>
      /^\d{4}-\d\d-\d\d$/.test(params.get('oldest_sort_date_gte') ?? '') && params.get('oldest_sort_date_lt') === '9999-12-31';
    await withModel(modelData(600, ['year'], 12), { reading: 'whole-day', links: 'keyset', failWhen: cutSlice }, async (model, list) => {
      const mark = model.requests.length;
      const one = await list(['--status', 'closed', '--page-size', '20', '--parallel', '1']);
      const sequential = model.requests.length - mark;
      const result = await list(['--status', 'closed', '--page-size', '20']);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(ids(result.stdout), model.expected({ status: 'closed' }));
      assert.equal(result.stdout, one.stdout);
      const sent = model.requests.slice(mark + sequential).map((url) => new URL(url, 'http://x').searchParams);
      // Asked for with its retries (a 500 is retried), then left out: every other request is one --parallel 1 sends.
      const asked = sent.filter(cutSlice).length;
      assert.ok(asked >= 1, 'the cut slice was asked for');
      assert.equal(sent.length, sequential + asked, 'nothing more was cut');
    });
  });

  test('a short list costs at most one request more than --parallel 1', async () => {
    const data = modelData(186, ['year'], 11);
    await withModel(data, { reading: 'whole-day', links: 'keyset' }, async (model, list) => {
      const unread = model.expected({ status: 'unread' });
      assert.ok(unread.length > 50 && unread.length <= 100, `${unread.length} unread: two pages`);
      // Two and three pages (one page: below).
      for (const size of ['50', '25']) {
        const argv = ['--status', 'unread', '--page-size', size];
        let mark = model.requests.length;
        assert.deepEqual(ids((await list([...argv, '--parallel', '1'])).stdout), unread);
        const one = model.requests.length - mark;
        mark = model.requests.length;
        assert.deepEqual(ids((await list(argv)).stdout), unread);
        assert.ok(model.requests.length - mark <= one + 1, model.requests.slice(mark).join('\n'));
      }
      const first = model.expected({ status: 'unread', bounds: [['oldest_sort_date_lt', '2026-02-01']] });
      assert.ok(first.length > 0 && first.length <= 50, `${first.length}: one page`);
      // One page: its first page has no next link, nothing is cut, no probe: exactly --parallel 1's one request.
      const mark = model.requests.length;
      assert.deepEqual(ids((await list(['--status', 'unread', '--oldest', '..2026-01-31'])).stdout), first);
      assert.equal(model.requests.length - mark, 1);
      assert.deepEqual(ids((await list(['--status', 'unread', '--oldest', '..2026-01-31', '--parallel', '1'])).stdout), first);
      assert.equal(model.requests.length - mark, 2);
    });
  });

  test('a list of three pages at most costs at most one request more than --parallel 1, whatever its dates', async () => {
    let checked = 0;
    for (const [count, shapes, seed] of [
      [360, ['year'], 3],
      [420, ['year'], 4],
      [440, ['year'], 6],
      [360, ['hours'], 5],
      [360, ['gaps', 'year'], 7],
      [360, ['future', 'year'], 9],
      [360, ['burst'], 13],
    ] as Array<[number, Shape[], number]>) {
      await withModel(modelData(count, shapes, seed), { reading: 'midnight', links: 'keyset' }, async (model, list) => {
        for (const range of [[], ['--oldest', '2020-01-01..2027-12-31']]) {
          const bounds: Array<[string, string]> =
            range.length > 0
              ? [
                  ['oldest_sort_date_gte', '2020-01-01'],
                  ['oldest_sort_date_lt', '2028-01-01'],
                ]
              : [];
          const unread = model.expected({ status: 'unread', bounds });
          const argv = ['--status', 'unread', ...range];
          let mark = model.requests.length;
          assert.deepEqual(ids((await list([...argv, '--parallel', '1'])).stdout), unread);
          const one = model.requests.length - mark;
          if (one > 3) return;
          checked++;
          mark = model.requests.length;
          assert.deepEqual(ids((await list(argv)).stdout), unread);
          assert.ok(
            model.requests.length - mark <= one + 1,
            `${shapes.join(',')} ${range.join(' ')}: ${unread.length} records\n${model.requests.slice(mark).join('\n')}`,
          );
        }
      });
    }
    assert.ok(checked >= 6, `${checked} lists of three pages or fewer`);
  });
});

describe('the cost of a parallel list', () => {
  // Review N1: half the records in 1970, half in the last year, nothing between. Slices that came
  // back empty taught the pace nothing, so 55 years were walked in slices sized by the recent
  // records' pace: 160 requests here where --parallel 1 sends 20 (1,324 against 25 in the review).
  test('a long empty span of dates costs a few requests more than --parallel 1, not a slice per few months', async () => {
    await withModel(modelData(3000, ['1970', 'year'], 7), { reading: 'whole-day', links: 'keyset' }, async (model, list) => {
      for (const sort of ['-oldest_sort_date', 'oldest_sort_date']) {
        const unread = model.expected({ status: 'unread', sort });
        const argv = ['--status', 'unread', '--sort', sort];
        let mark = model.requests.length;
        assert.deepEqual(ids((await list([...argv, '--parallel', '1'])).stdout), unread);
        const one = model.requests.length - mark;
        mark = model.requests.length;
        assert.deepEqual(ids((await list([...argv, '--parallel', '8'])).stdout), unread);
        const eight = model.requests.length - mark;
        assert.ok(eight <= 3 * one, `${sort}: ${eight} requests at --parallel 8, ${one} at --parallel 1\n${model.requests.slice(mark).join('\n')}`);
      }
    });
  });
});

describe('a list that stops early says so, with a --resume token', () => {
  let api: ScriptedApi;
  let scenario = '';
  before(async () => {
    api = await scriptedApi((request) => {
      const url = new URL(request.url, 'http://x');
      if (url.pathname === '/v1.3/channels') return { json: { channels: [{ id: '9', url: 'x', name: 'Nine' }] } };
      const skip = Number(url.searchParams.get('skip') ?? 0);
      url.searchParams.set('skip', String(skip + 2));
      const next = `${api.baseUrl}${url.pathname}?${url.searchParams}`;
      const page = [{ id: String(skip + 1) }, { id: String(skip + 2) }];
      if (skip === 0) return { json: { conversations: page, paging: { next_page: next } } };
      if (scenario === 'number') return { json: { conversations: page, paging: { next_page: 12345 } } };
      if (scenario === 'string') return { json: { conversations: page, paging: 'next' } };
      if (scenario === 'end') return { json: { conversations: page, paging: { next_page: null } } };
      return { status: Number(scenario), json: { status: 'error', message: `no (${scenario})` } };
    });
  });
  after(() => api.close());
  const list = (extra: string[] = []) =>
    runCli(['conversations', 'list', '--status', 'unread', '--page-size', '2', '--columns', 'id', '--retries', '0', ...extra], { env: scriptedEnv(api) });

  for (const [what, answer, code] of [
    ['a next_page that is a number', 'number', 1],
    ['a paging that is a string', 'string', 1],
    ['a 400', '400', 1],
    ['a 401', '401', 3],
    ['a 403', '403', 3],
    ['a 404', '404', 4],
    ['a 409', '409', 1],
  ] as const) {
    test(`${what} part-way`, async () => {
      scenario = answer;
      const result = await list();
      assert.equal(result.code, code, result.stderr);
      assert.equal(result.stdout, 'id\n1\n2\n');
      assert.match(result.stderr, /the list stopped after 2 records: to continue, run the same command with --resume \S+\n$/);
      scenario = 'end';
      const token = /--resume (\S+)\n$/.exec(result.stderr)?.[1] as string;
      const rest = await list(['--resume', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(rest.stdout, '3\n4\n');
    });
  }

  test('a resumed run that fails on its first request repeats the token it was given', async () => {
    scenario = '500';
    const token = /--resume (\S+)\n$/.exec((await list()).stderr)?.[1] as string;
    const again = await list(['--resume', token]);
    assert.equal(again.code, 1, again.stderr);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /the list stopped before its first record: to continue, run the same command with --resume \S+\n$/);
    scenario = 'end';
    const repeated = /--resume (\S+)\n$/.exec(again.stderr)?.[1] as string;
    const rest = await list(['--resume', repeated]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(rest.stdout, '3\n4\n');
  });

  test('a token cut short, edited, or of another query: exit 2, nothing sent', async () => {
    scenario = '500';
    const token = /--resume (\S+)\n$/.exec((await list()).stderr)?.[1] as string;
    const flip = (text: string, at: number): string => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    for (const [bad, argv] of [
      [token.slice(0, -4), []],
      [flip(token, 10), []],
      [token, ['--channel', '9']],
    ] as const) {
      const mark = api.requests.length;
      const result = await list(['--resume', bad, ...argv]);
      assert.equal(result.code, 2, bad);
      assert.match(result.stderr, /^carectl: --resume: (not a whole token|the token belongs to a different command)/);
      // The token is checked before --channel (a name or an id) is looked up: nothing goes out.
      assert.deepEqual(
        api.requests.slice(mark).map((r) => r.url.split('?')[0]),
        [],
      );
    }
  });
});

describe('the sandbox rehearses these shapes of sort dates (--dates)', () => {
  for (const dates of ['future', '1970', 'bursts', 'gaps', 'hours'] as const) {
    test(`--dates ${dates}: every conversation once, the same in parallel as one at a time`, async () => {
      const sandbox = await openSandbox({ conversations: 400, dates });
      try {
        const argv = ['conversations', 'list', '--columns', 'id', '--no-header', '--page-size', '20'];
        const one = await runCli([...argv, '--parallel', '1'], { sandbox });
        const many = await runCli(argv, { sandbox });
        assert.equal(many.code, 0, many.stderr);
        assert.equal(many.stdout, one.stdout);
        assert.equal(new Set(ids(many.stdout)).size, sandbox.data.conversations.length);
      } finally {
        await sandbox.close();
      }
    });
  }

  test('--dates takes only the shapes it names: exit 2', async () => {
    const result = await runCli(['sandbox', '--dates', 'someday']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'carectl: --dates: "someday" is not one of year, future, 1970, bursts, gaps, hours\n');
  });
});
