/**
 * --parallel: where the setting comes from and how a bad value is refused; lists and update
 * batches with several requests in flight give the same output as one at a time.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, openSandbox, runCli, sandboxEnv, type RunOptions, type RunResult, scratchFolder } from './helpers.js';
import { keysetApi, keysetData, keysetReply, later } from './keyset.js';
import { ReplyGate } from './reply-gate.js';
import { scriptedApi, scriptedEnv, type ScriptedApi, type ScriptedReply } from './scripted-server.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox({ conversations: 400 });
});
after(async () => {
  await sandbox.close();
});

const cli = (argv: string[], options: RunOptions = {}) => runCli(argv, { sandbox, ...options });

/** `argv` at --parallel 1 against a fresh sandbox of `conversations`: the output a parallel run on the same data must equal. */
async function oneAtATime(argv: string[], conversations: number): Promise<RunResult> {
  const reference = await openSandbox({ conversations });
  try {
    return await runCli([...argv, '--parallel', '1'], { sandbox: reference });
  } finally {
    await reference.close();
  }
}

describe('--parallel, CARECTL_PARALLEL and the profile key parallel', () => {
  test('a bad value is a one-line usage error naming where it came from and the range; nothing is sent', async () => {
    const home = scratchFolder('carectl-parallel-');
    mkdirSync(path.join(home, 'carectl'));
    writeFileSync(path.join(home, 'carectl', 'config.json'), JSON.stringify({ profiles: { default: { parallel: '40' } } }));
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['--parallel', '0'], {}, '--parallel: must be an integer from 1 to 32 (got "0")'],
      [['--parallel', 'many'], {}, '--parallel: must be an integer from 1 to 32 (got "many")'],
      [[], { CARECTL_PARALLEL: '33' }, 'CARECTL_PARALLEL: must be an integer from 1 to 32 (got "33")'],
      [[], { XDG_CONFIG_HOME: home }, 'parallel in profile "default": must be an integer from 1 to 32 (got "40")'],
    ];
    for (const [flags, env, message] of cases) {
      for (const command of [
        ['conversations', 'list'],
        ['conversations', 'update', '500002', '--status', 'on_hold'],
      ]) {
        const mark = sandbox.requests.length;
        const result = await cli([...command, ...flags], { env });
        assert.equal(result.code, 2, `${command.join(' ')} ${flags.join(' ')}`);
        assert.equal(result.stderr, `carectl: ${message}\n`);
        assert.equal(apiRequests(sandbox, mark).length, 0);
      }
    }
    // The flag wins over the environment, the environment over the profile.
    assert.equal((await cli(['tags', 'list', '--parallel', '2'], { env: { CARECTL_PARALLEL: '33' } })).code, 0);
    assert.equal((await cli(['tags', 'list'], { env: { CARECTL_PARALLEL: '3', XDG_CONFIG_HOME: home } })).code, 0);
  });

  test('config set parallel checks the value and stores it; get reads it back', async () => {
    const home = scratchFolder('carectl-parallel-');
    const env = { ...sandboxEnv(sandbox), XDG_CONFIG_HOME: home };
    const refused = await runCli(['config', 'set', 'parallel', '0'], { env });
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr, 'carectl: parallel: must be an integer from 1 to 32 (got "0")\n');
    assert.equal((await runCli(['config', 'set', 'parallel', '12'], { env })).code, 0);
    assert.equal((await runCli(['config', 'get', 'parallel'], { env })).stdout, '12\n');
  });

  test('a command that sends one request does not take --parallel', async () => {
    const result = await cli(['tags', 'get', '7001', '--parallel', '4']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'carectl: --parallel: `carectl tags get` does not take it\n');
  });
});

/** ids of ndjson/csv/tsv output, for counting. */
const idsOf = (stdout: string): string[] =>
  stdout
    .trimEnd()
    .split('\n')
    .map((line) => (line.startsWith('{') ? (JSON.parse(line) as { id: string }).id : (line.split(/[\t,]/)[0] as string)));

describe('a list in parallel prints exactly what it prints one request at a time', () => {
  const lists: Array<[string, string[]]> = [
    ['the union of the two priority queries', ['conversations', 'list']],
    ['a date range, sliced', ['conversations', 'list', '--oldest', '2025-08-03..2026-05-31']],
    ['a union with an open range', ['conversations', 'list', '--oldest', '2026-01-01..']],
    [
      'a descending sort with a range',
      ['conversations', 'list', '--status', 'closed', '--sort', '-oldest_sort_date', '--oldest', 'gt:2025-07-01,lt:2026-06-01'],
    ],
    ['newest_sort_date', ['conversations', 'list', '--no-priority', '--sort', 'newest_sort_date', '--newest', '2025-09-01..2026-03-01']],
  ];
  // The writers never see how the pages were fetched: every format for the first list, ndjson (each
  // record once, in order) for the others.
  for (const [index, [what, list]] of lists.entries()) {
    test(`${what}: ${index === 0 ? 'every format' : 'ndjson'}, byte for byte`, async () => {
      for (const format of index === 0 ? ['csv', 'ndjson', 'json', 'table', 'tsv'] : ['ndjson']) {
        const argv = [...list, '-o', format, '--page-size', '7'];
        const one = await cli([...argv, '--parallel', '1']);
        assert.equal(one.code, 0, one.stderr);
        const mark = sandbox.requests.length;
        const many = await cli(argv, { stdoutTTY: format === 'table', columns: 200 });
        const oneTable = format === 'table' ? await cli([...argv, '--parallel', '1'], { stdoutTTY: true, columns: 200 }) : one;
        assert.equal(many.code, 0, many.stderr);
        assert.equal(many.stdout, oneTable.stdout, `${what}, ${format}`);
        assert.equal(many.stderr, oneTable.stderr);
        if (format === 'ndjson') {
          const ids = idsOf(many.stdout);
          assert.equal(new Set(ids).size, ids.length, 'each record once');
          const slices = new Set(
            apiRequests(sandbox, mark).map(
              (r) => new URL(r.url, 'http://x').searchParams.getAll('oldest_sort_date_gte').join() + new URL(r.url, 'http://x').searchParams.get('is_priority'),
            ),
          );
          if (list.includes('--oldest') || list.length === 2) assert.ok(slices.size > 1, `${what}: more than one part (${[...slices].join(' ')})`);
        }
      }
    });
  }

  test('a union with a date range starts its two queries at once, and cuts them only once their pages say more remain', async () => {
    const result = await cli([
      'conversations',
      'list',
      '--oldest',
      '2025-06-01..2026-07-01',
      '--columns',
      'id',
      '--no-header',
      '--page-size',
      '5',
      '--verbose',
    ]);
    assert.equal(result.code, 0, result.stderr);
    // The order carectl sends them in (the trace); they may reach the sandbox in another.
    const sent = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('> GET '))
      .map((line) => new URL(line.slice('> GET '.length)).searchParams);
    assert.deepEqual(
      sent
        .slice(0, 2)
        .map((params) => params.get('is_priority'))
        .sort(),
      ['false', 'true'],
    );
    // The first two requests are the user's query as given: no slice before any page was read.
    for (const params of sent.slice(0, 2))
      assert.deepEqual([params.get('oldest_sort_date_gte'), params.get('oldest_sort_date_lt')], ['2025-06-01', '2026-07-02']);
    assert.ok(
      sent.some((params) => params.get('oldest_sort_date_gte') !== '2025-06-01' && !params.get('oldest_sort_date_gte')?.includes('T')),
      'cut later',
    );
  });

  test('a union sends its two first pages at once, before any answer, and prints what one request at a time prints', async () => {
    const argv = ['conversations', 'list', '--page-size', '5', '--columns', 'id', '--no-header'];
    const one = await oneAtATime(argv, 600);
    // Each reply is held until the client has sent all it sends without one.
    const gate = await ReplyGate.open({ conversations: 600 });
    try {
      const clock = fakeClock();
      const many = await gate.drive(runCli(argv, { env: gate.env, now: clock.now, sleep: clock.sleep, onStdout: gate.progress }));
      assert.equal(many.code, 0, many.stderr);
      assert.equal(many.stdout, one.stdout);
      const first = gate.released[0]!;
      // Nothing can be cut before a page gives a position: the two queries' first pages, the user's query as given.
      assert.equal(first.inFlight, 2, 'requests in flight at the first answer');
      const opening = gate.released.slice(0, 2).map(({ url }) => new URL(url, 'http://x').searchParams);
      assert.deepEqual(opening.map((params) => params.get('is_priority')).sort(), ['false', 'true']);
      assert.equal(opening.filter((params) => params.has('oldest_sort_date_gte')).length, 0, 'no date bound added');
    } finally {
      await gate.close();
    }
  });

  test('the records of the sandbox, each exactly once, in the order of the service', async () => {
    const one = await cli(['conversations', 'list', '--oldest', '2025-06-01..2026-07-01', '--columns', 'id', '--no-header', '--parallel', '1']);
    const many = await cli([
      'conversations',
      'list',
      '--oldest',
      '2025-06-01..2026-07-01',
      '--columns',
      'id',
      '--no-header',
      '--parallel',
      '32',
      '--page-size',
      '3',
    ]);
    assert.equal(many.stdout, one.stdout);
    assert.equal(new Set(idsOf(many.stdout)).size, sandbox.data.conversations.length);
  });
});

describe('a list far longer than the pages held ahead of the writer', () => {
  // 120 pages of 5 against a budget of 64 (4 slots of 16): the writer waits on the part it writes
  // while the parts after it are read. Each reply is held until the client has done all it does
  // without it, as from a service far slower than the client (whatever the machine's load).
  let distant: ReplyGate;
  before(async () => {
    distant = await ReplyGate.open({ conversations: 600 });
  });
  after(() => distant.close());

  // TODO (issue 46): the plain planner leaves this window short, 11 of 121 requests with fewer than 4 in flight (16 with 8 pages a slot) (the work
  // queue: at most 6): where the slices next to the writer end together, those ahead hold the budget and read no more, and the
  // window waits for them. Kept as a todo, failing, until the planner keeps the window full within the budget the test below holds.
  test('keeps the window full to the end, and prints what one request at a time prints', { todo: 'the plain planner: 11 of 121 short' }, async () => {
    const argv = ['conversations', 'list', '--page-size', '5', '--columns', 'id', '--no-header'];
    const one = await oneAtATime(argv, 600);
    const clock = fakeClock();
    const running = runCli([...argv, '--parallel', '4'], { env: distant.env, now: clock.now, sleep: clock.sleep, onStdout: distant.progress });
    const many = await distant.drive(running);
    assert.equal(many.code, 0, many.stderr);
    assert.equal(many.stdout, one.stdout);
    // Between the first round trip (the first page of each query) and the last, requests go with
    // the window full: before, pages read far ahead filled the budget and the writer's part went
    // on alone for rounds at a time.
    const window = distant.released.slice(2, -4).map((reply) => reply.inFlight);
    const short = window.filter((n) => n < 4).length;
    assert.ok(short <= window.length / 20, `${short} of ${window.length} requests with fewer than 4 in flight: ${window.join('')}`);
  });

  test('holds no more pages than the budget while its reader stops reading', async () => {
    const near = await ReplyGate.open({ conversations: 600 });
    const stop = new AbortController();
    try {
      // The first record is never taken: the writer waits, and the parts read what the budget allows.
      const stuck = new Writable({ highWaterMark: 1, write: () => undefined });
      const clock = fakeClock();
      const running = runCli(['conversations', 'list', '--page-size', '5', '--parallel', '2', '-o', 'ndjson'], {
        env: near.env,
        stdout: stuck,
        signal: stop.signal,
        now: clock.now,
        sleep: clock.sleep,
      });
      // Until it asks for nothing more.
      await near.flow();
      stop.abort();
      assert.equal((await running).code, 130);
      // A slice reads while the pages held from the writer's slice up to it are under the budget (32: 16 a slot), so those
      // nearest the writer read first; slices further on hold what they read before the nearer ones grew, under the budget
      // again. So at most twice it, a page asked for per slot, the writer's part 4 ahead and its page being written, and a
      // far-end probe per query; of 120 pages.
      const pages = apiRequests(near.sandbox).filter((request) => !/page_size=1(&|$)/.test(request.url)).length;
      assert.ok(pages > 16 && pages <= 2 * 32 + 2 + 4 + 1, `${pages} pages read while the reader took none`);
    } finally {
      stop.abort();
      await near.close();
    }
  });
});

describe('a list without a date range, on a service with keyset links', () => {
  const data = keysetData(1500);
  let api: ScriptedApi;
  before(async () => {
    api = await keysetApi(data);
  });
  after(() => api.close());
  const run = (argv: string[], options: RunOptions = {}) => runCli(argv, { env: scriptedEnv(api), ...options });

  test('is cut into slices once its first page links on, and prints the same', async () => {
    for (const list of [
      ['conversations', 'list'],
      ['conversations', 'list', '--status', 'unread', '--sort', '-oldest_sort_date'],
      ['conversations', 'list', '--priority', '--oldest', '..2026-03-01'],
    ]) {
      const argv = [...list, '-o', 'ndjson', '--fields', 'status,is_priority'];
      const one = await run([...argv, '--parallel', '1']);
      assert.equal(one.code, 0, one.stderr);
      const mark = api.requests.length;
      const many = await run(argv);
      assert.equal(many.code, 0, many.stderr);
      assert.equal(many.stdout, one.stdout, list.join(' '));
      const ids = idsOf(many.stdout);
      assert.equal(new Set(ids).size, ids.length, 'each record once');
      // Slices were cut from the keyset position: requests bounded on both sides by a day, half-open.
      const sliced = api.requests
        .slice(mark)
        .filter((r) => /oldest_sort_date_gte=\d{4}-\d\d-\d\d(&|$)/.test(r.url) && /oldest_sort_date_lt=\d{4}-\d\d-\d\d(&|$)/.test(r.url));
      assert.ok(sliced.length >= 2, `${list.join(' ')}: ${sliced.length} slice requests`);
      // Its far end: ascending, the day the dates were resolved at (no record here is dated later), so none
      // is asked for; descending, asked once per query, with one record in the other order.
      const probes = api.requests.slice(mark).filter((r) => /page_size=1(&|$)/.test(r.url));
      if (!list.includes('..2026-03-01')) assert.equal(probes.length, list.includes('-oldest_sort_date') ? 1 : 0, probes.map((r) => r.url).join(' '));
    }
    const all = idsOf((await run(['conversations', 'list', '-o', 'ndjson', '--fields', 'status'])).stdout);
    assert.equal(new Set(all).size, data.length);
  });

  test('a slice bounds its sort date as a pair, as the spec asks', async () => {
    for (const list of [
      ['conversations', 'list'],
      ['conversations', 'list', '--status', 'unread', '--sort', '-oldest_sort_date'],
      // Long enough to be cut: a short list is read as it comes.
      ['conversations', 'list', '--no-priority', '--oldest', '..2026-06-01'],
      ['conversations', 'list', '--no-priority', '--oldest', '2025-09-01..'],
    ]) {
      const mark = api.requests.length;
      const result = await run([...list, '-o', 'ndjson', '--fields', 'status']);
      assert.equal(result.code, 0, result.stderr);
      const params = (url: string) => new URL(url, 'http://x').searchParams;
      const sides = (url: string) =>
        [
          ['gte', 'gt'],
          ['lt', 'lte'],
        ]
          .filter((ops) => ops.some((op) => params(url).has(`oldest_sort_date_${op}`)))
          .map(([op]) => op);
      // Requests carectl bounded itself: a day the user did not give (the service's keyset links bound by a time).
      const given = new URLSearchParams(api.requests[mark]?.url.split('?')[1]);
      const sliced = api.requests
        .slice(mark)
        .filter((r) => [...params(r.url)].some(([key, value]) => key.startsWith('oldest_sort_date_') && !value.includes('T') && given.get(key) !== value));
      assert.ok(sliced.length >= 4, `${list.join(' ')}: ${sliced.length} slice requests`);
      for (const request of sliced) assert.deepEqual(sides(request.url), ['gte', 'lt'], `${list.join(' ')}: ${request.url}`);
    }
  });

  test('a one-sided range on a sort date goes as a pair too, closed by a bound no record passes (1900-01-01, 9999-12-31), one request at a time or not', async () => {
    const cases: Array<[string[], Array<[string, string]>]> = [
      [
        ['--oldest', '..2026-03-01'],
        [
          ['oldest_sort_date_gte', '1900-01-01'],
          ['oldest_sort_date_lt', '2026-03-02'],
        ],
      ],
      [
        ['--oldest', '2025-09-01..'],
        [
          ['oldest_sort_date_gte', '2025-09-01'],
          ['oldest_sort_date_lt', '9999-12-31'],
        ],
      ],
      [
        ['--newest', 'gt:2025-09-01'],
        [
          ['newest_sort_date_gt', '2025-09-01'],
          ['newest_sort_date_lt', '9999-12-31'],
        ],
      ],
      [
        ['--newest', 'lt:2026-01-01'],
        [
          ['newest_sort_date_gte', '1900-01-01'],
          ['newest_sort_date_lt', '2026-01-01'],
        ],
      ],
    ];
    for (const [range, bounds] of cases) {
      for (const parallel of ['1', '8']) {
        const mark = api.requests.length;
        const result = await run(['conversations', 'list', '--priority', ...range, '--parallel', parallel, '--columns', 'id']);
        assert.equal(result.code, 0, result.stderr);
        const sortBounds = (url: string) => [...new URL(url, 'http://x').searchParams].filter(([key]) => /_sort_date_/.test(key));
        if (parallel === '1') assert.deepEqual(sortBounds(api.requests[mark]!.url), bounds, range.join(' '));
        // In parallel, every request carectl bounded itself (a day, not a link's time) has both sides.
        for (const request of api.requests.slice(mark)) {
          const own = sortBounds(request.url);
          if (own.some(([, value]) => value.includes('T'))) continue;
          assert.deepEqual(
            own.map(([key]) => (/_g/.test(key) ? 'lower' : 'upper')).sort(),
            ['lower', 'upper'],
            `${range.join(' ')} --parallel ${parallel}: ${request.url}`,
          );
        }
      }
    }
  });

  test('a short list pays for its one page, as --parallel 1: nothing cut, no probe; a one-sided range goes as a pair', async () => {
    const mark = api.requests.length;
    const result = await run(['conversations', 'list', '--status', 'closed', '--oldest', '..2025-07-10', '--columns', 'id', '--no-header']);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(idsOf(result.stdout).length < 50);
    assert.deepEqual(
      api.requests.slice(mark).map((request) => new URL(request.url, 'http://x').searchParams.get('oldest_sort_date_gte')),
      ['1900-01-01'],
    );
  });

  test('a --limit of up to three pages sends at most one request more than --parallel 1: no probe, nothing cut', async () => {
    for (const query of [[], ['--no-priority']]) {
      for (const limit of [30, 60]) {
        const argv = ['conversations', 'list', ...query, '-o', 'ndjson', '--fields', 'status', '--page-size', '20', '--limit', String(limit)];
        let mark = api.requests.length;
        const one = await run([...argv, '--parallel', '1']);
        const sequential = api.requests.length - mark;
        mark = api.requests.length;
        const many = await run(argv);
        assert.equal(many.code, 0, many.stderr);
        assert.equal(many.stdout, one.stdout);
        const sent = api.requests.slice(mark).map((r) => r.url);
        assert.ok(
          sent.length <= sequential + 1,
          `--limit ${limit} ${query.join(' ')}: ${sent.length} requests, ${sequential} one at a time:\n${sent.join('\n')}`,
        );
      }
    }
  });

  test('--limit in parallel prints the first records and fetches little more than it needs', async () => {
    const argv = ['conversations', 'list', '--no-priority', '-o', 'ndjson', '--fields', 'status', '--page-size', '20'];
    const full = await run([...argv, '--parallel', '1']);
    for (const limit of [5, 30, 200]) {
      const mark = api.requests.length;
      const result = await run([...argv, '--limit', String(limit)]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        result.stdout,
        full.stdout
          .split('\n')
          .slice(0, limit)
          .map((line) => `${line}\n`)
          .join(''),
      );
      const fetched = api.requests.slice(mark).reduce((sum, r) => sum + Number(new URL(r.url, 'http://x').searchParams.get('page_size')), 0);
      assert.ok(fetched <= limit + 8 * 20, `--limit ${limit}: ${fetched} records asked for`);
      // Batches of --limit with --resume add up to the whole list.
      const token = /--resume (\S+)$/m.exec(result.stderr)?.[1] as string;
      const rest = await run([...argv, '--resume', token]);
      assert.equal(result.stdout + rest.stdout, full.stdout, `--limit ${limit}, then --resume`);
    }
  });
});

/** A keyset list of 900 behind a front that answers `refusal` past 2 requests in flight, each reply 5 ms late. */
async function refusingPast2(refusal: ScriptedReply): Promise<{ api: ScriptedApi; refused: () => number }> {
  const data = keysetData(900);
  let base = '';
  let inFlight = 0;
  let refused = 0;
  const api = await scriptedApi((request, res) => {
    inFlight++;
    const over = inFlight > 2;
    if (over) refused++;
    return later(
      res,
      5,
      () => (over ? refusal : keysetReply(data, request, base)),
      () => inFlight--,
    );
  });
  base = api.baseUrl;
  return { api, refused: () => refused };
}

/**
 * The list one request at a time (nothing refused), then with `flags` on the injected clock and --retries 0 (so it
 * completes only by taking the refusals as pressure of its own): exit 0 and the same output; its notices and waits.
 */
/** The window the refusals of the first burst left, before any grew it back (`--verbose`'s `in flight A → B` lines). */
function firstBurstWindow(notices: string): number | undefined {
  const lines = notices.split('\n').filter((line) => line.startsWith('  in flight '));
  const grown = lines.findIndex((line) => line.includes('answered in a row'));
  const burst = grown < 0 ? lines : lines.slice(0, grown);
  const last = burst.at(-1);
  return last === undefined ? undefined : Number(/→ (\d+)/.exec(last)?.[1]);
}

async function sameAsOneAtATime(service: { api: ScriptedApi; refused: () => number }, flags: string[]): Promise<{ notices: string; slept: number[] }> {
  const argv = ['conversations', 'list', '-o', 'csv', '--page-size', '20'];
  const one = await runCli([...argv, '--parallel', '1'], { env: scriptedEnv(service.api) });
  assert.equal(one.code, 0, one.stderr);
  assert.equal(service.refused(), 0);
  const clock = fakeClock();
  const many = await runCli([...argv, ...flags, '--verbose', '--retries', '0'], { env: scriptedEnv(service.api), now: clock.now, sleep: clock.sleep });
  const notices = many.stderr
    .split('\n')
    .filter((line) => !line.startsWith('>') && !line.startsWith('<'))
    .join('\n');
  assert.equal(many.code, 0, notices);
  assert.equal(many.stdout, one.stdout);
  assert.ok(service.refused() > 0, 'the service refused some requests');
  return { notices, slept: clock.slept };
}

describe('a service that answers 429 past 2 requests in flight', () => {
  test('the run lowers its window, waits as asked, and completes with the same output', async () => {
    const service = await refusingPast2({ status: 429, headers: { 'retry-after': '1' }, json: { status: 'error', message: 'Too many requests' } });
    try {
      const { notices, slept } = await sameAsOneAtATime(service, ['--parallel', '8']);
      // Each change of the window is shown with --verbose; every request waited the second asked. The first round with more than
      // two in flight (the first cuts) meets the refusal: the window halves, then its refusals take it to what the service held, 2.
      assert.match(notices, /^ {2}in flight 8 → \d: 429 too many requests(, 1 of \d in flight refused)?; every request waits 1000 ms$/m);
      assert.equal(firstBurstWindow(notices), 2, notices);
      assert.ok(slept.includes(1000));
      assert.ok(
        slept.every((ms) => ms <= 1000),
        slept.join(),
      );
    } finally {
      await service.api.close();
    }
  });
});

describe("a gateway's connection limit: 503 without Retry-After past 2 requests in flight (nginx's limit_conn)", () => {
  test('the default lowers what it keeps in flight instead of failing the run, and prints what one request at a time prints', async () => {
    const page503 =
      '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center></body></html>';
    const service = await refusingPast2({ status: 503, headers: { 'content-type': 'text/html' }, text: page503 });
    try {
      const { notices, slept } = await sameAsOneAtATime(service, []);
      // No Retry-After, so no pause: fewer in flight is the answer (a back-off of every request cost twice the run's time behind nginx).
      assert.match(notices, /^ {2}in flight 8 → \d: 503 service unavailable(, 1 of \d in flight refused)?$/m);
      assert.equal(firstBurstWindow(notices), 2, notices);
      assert.deepEqual(slept, []);
    } finally {
      await service.api.close();
    }
  });

  test('a service that answers 503 to everything: the window comes down to one, then the usual retry rules fail the run', async () => {
    const api = await scriptedApi(() => ({ status: 503, headers: { 'content-type': 'text/html' }, text: '<html>down</html>' }));
    try {
      const clock = fakeClock();
      const result = await runCli(['conversations', 'list', '--retries', '1'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /answered HTTP 503/);
      // The two first pages side by side, taken back at 8, 4 and 2 in flight; at one, a try and a retry each.
      assert.ok(api.requests.length <= 12, `${api.requests.length} requests`);
      assert.equal(result.stdout, '', 'no record came');
    } finally {
      await api.close();
    }
  });
});

// The planner's pump once lost the requests of a window grown back after refusals: it waited for them forever (here), or
// exited 0 with part of the list where nothing else kept the process alive (behind nginx).
describe('a list behind a service that refuses past 2 requests in flight', () => {
  const refusals: Array<[string, ScriptedReply]> = [
    ['429 with Retry-After', { status: 429, headers: { 'retry-after': '1' }, json: { status: 'error', message: 'Too many requests' } }],
    ["a gateway's 503 without Retry-After", { status: 503, headers: { 'content-type': 'text/html' }, text: '<html>503</html>' }],
  ];
  for (const [name, refusal] of refusals)
    test(`${name}: the window comes down and grows back, and the run prints what one request at a time prints`, async () => {
      const service = await refusingPast2(refusal);
      try {
        const { notices } = await sameAsOneAtATime(service, []);
        assert.match(notices, /answered in a row/);
      } finally {
        await service.api.close();
      }
    });
});

describe('--resume after a parallel run that failed part-way', () => {
  const tokenOf = (stderr: string): string | undefined => /--resume (\S+)$/m.exec(stderr)?.[1];

  test('sliced by a date range (the sandbox failing after N pages): the two runs add up to the whole list', async () => {
    let resumed = 0;
    for (const list of [
      ['conversations', 'list', '--oldest', '2025-08-01..2026-06-30'],
      ['conversations', 'list', '--status', 'unread', '--sort', '-oldest_sort_date', '--oldest', '2025-07-01..'],
    ]) {
      for (const format of ['ndjson', 'csv']) {
        const argv = [...list, '-o', format, '--page-size', '5'];
        const full = await cli([...argv, '--parallel', '1']);
        for (const failAfter of [3, 9, 20]) {
          sandbox.setFaults({ failListAfterPages: failAfter });
          const first = await cli([...argv, '--retries', '0']);
          sandbox.setFaults(undefined);
          if (first.code === 0) {
            assert.equal(first.stdout, full.stdout, 'fewer pages than that');
            continue;
          }
          assert.equal(first.code, 1, first.stderr);
          const token = tokenOf(first.stderr);
          if (token === undefined) {
            assert.equal(first.stdout, '', 'no token: nothing was written');
            continue;
          }
          const rest = await cli([...argv, '--resume', token]);
          assert.equal(rest.code, 0, rest.stderr);
          assert.equal(first.stdout + rest.stdout, full.stdout, `${list.join(' ')} ${format}, failing after ${failAfter} pages`);
          resumed++;
        }
      }
    }
    assert.ok(resumed >= 6, `${resumed} runs resumed`);
  });

  test('sliced at keyset positions: a token names the slice, and the resumed run reads the rest of the phase too', async () => {
    const data = keysetData(1200);
    let base = '';
    let failAfter = Infinity;
    let served = 0;
    const api = await scriptedApi((request) =>
      ++served > failAfter ? { status: 503, json: { status: 'error', message: 'down' } } : keysetReply(data, request, base),
    );
    base = api.baseUrl;
    try {
      const run = (argv: string[]) => runCli(argv, { env: scriptedEnv(api) });
      const argv = ['conversations', 'list', '-o', 'ndjson', '--fields', 'status', '--page-size', '10', '--retries', '0'];
      const full = await run([...argv, '--parallel', '1']);
      let resumed = 0;
      for (const after of [6, 15, 40, 80]) {
        served = 0;
        failAfter = after;
        const first = await run(argv);
        failAfter = Infinity;
        assert.equal(first.code, 1, first.stderr);
        const token = tokenOf(first.stderr);
        if (token === undefined) continue;
        // A checksum (8 characters) and the query's fingerprint (8) included.
        assert.ok(token.length <= 160, `a short token: ${token}`);
        const rest = await run([...argv, '--resume', token]);
        assert.equal(rest.code, 0, rest.stderr);
        assert.equal(first.stdout + rest.stdout, full.stdout, `failing after ${after} pages`);
        resumed++;
      }
      assert.ok(resumed >= 3, `${resumed} runs resumed`);
    } finally {
      await api.close();
    }
  });
});

describe('conversations update in parallel', () => {
  /** A service of conversations 1..n whose replies take a few ms, so that requests overlap. */
  async function slowService(options: { limit?: number } = {}): Promise<ScriptedApi & { inFlightPeak: () => number; patches: Map<string, number> }> {
    let inFlight = 0;
    let peak = 0;
    const patches = new Map<string, number>();
    const api = await scriptedApi((request, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      const over = options.limit !== undefined && inFlight > options.limit;
      const id = /conversations\/(\d+)/.exec(request.url)?.[1] as string;
      if (request.method === 'PATCH' && !over) patches.set(id, (patches.get(id) ?? 0) + 1);
      return later(
        res,
        3 + (Number(id) % 4),
        () => {
          if (over) return { status: 429, headers: { 'retry-after': '1' }, json: { status: 'error', message: 'slow down' } };
          if (id === '13') return { status: 404, json: { status: 'error', message: `No conversation with id '13'` } };
          if (id === '21') return { status: 403, json: { status: 'error', message: 'no permission for 21' } };
          return request.method === 'PATCH'
            ? { json: { conversation: { id, url: `/v1.3/conversations/${id}` } } }
            : { json: { conversation: { id, tags: [{ id: '7001' }] } } };
        },
        () => inFlight--,
      );
    });
    return Object.assign(api, { inFlightPeak: () => peak, patches });
  }
  const ids = Array.from({ length: 30 }, (_, i) => String(i + 1));

  test('rows in input order, each PATCH sent once, the exit code of the first failure in input order', async () => {
    const api = await slowService();
    try {
      const result = await runCli(['conversations', 'update', ...ids, '--status', 'on_hold', '--parallel', '6', '--columns', 'id,result'], {
        env: scriptedEnv(api),
      });
      assert.equal(result.code, 4, 'the 404 of id 13 comes before the 403 of id 21');
      assert.deepEqual(
        result.stdout
          .trimEnd()
          .split('\n')
          .map((line) => line.split('\t')[0]),
        ['id', ...ids],
      );
      assert.match(result.stdout, /\n13\tnot_found: No conversation with id '13' \(HTTP 404\)\n/);
      assert.match(result.stderr, /^carectl: 2 of 30 updates failed \(first: 13: /);
      assert.equal(api.patches.size, 28);
      assert.ok(
        [...api.patches.values()].every((n) => n === 1),
        'one PATCH per id',
      );
      assert.ok(api.inFlightPeak() > 1 && api.inFlightPeak() <= 6, `at most 6 in flight (${api.inFlightPeak()})`);
    } finally {
      await api.close();
    }
  });

  test('a service that refuses past 2 in flight: the batch slows down and completes', async () => {
    const api = await slowService({ limit: 2 });
    try {
      const clock = fakeClock();
      const some = ids.filter((id) => id !== '13' && id !== '21');
      const result = await runCli(['conversations', 'update', ...some, '--status', 'on_hold', '--retries', '0', '--columns', 'id,result', '--no-header'], {
        env: scriptedEnv(api),
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, some.map((id) => `${id}\tok\n`).join(''));
      assert.ok(
        some.every((id) => api.patches.get(id) === 1),
        'each id patched once',
      );
    } finally {
      await api.close();
    }
  });

  test('Ctrl-C sends no new id, lets those under way finish, and says how many were done', async () => {
    const api = await slowService();
    try {
      const controller = new AbortController();
      const result = await runCli(['conversations', 'update', ...ids, '--status', 'on_hold', '--parallel', '4', '--columns', 'id,result', '--no-header'], {
        env: scriptedEnv(api),
        signal: controller.signal,
        onStdout: () => controller.abort(),
      });
      assert.equal(result.code, 130);
      const rows = result.stdout.trimEnd().split('\n');
      const done = rows.length;
      // The four ids under way when the first row came out were finished, not cut short.
      assert.ok(done >= 4 && done < ids.length, `${done} done`);
      assert.deepEqual(
        rows,
        ids.slice(0, done).map((id) => `${id}\tok`),
        'rows in input order',
      );
      assert.equal(
        result.stderr,
        `carectl: interrupted after ${done} of 30 conversations; an update is safe to repeat, so the same command can simply run again\n`,
      );
      assert.deepEqual(
        [...api.patches.keys()].sort((a, b) => Number(a) - Number(b)),
        ids.slice(0, done),
        'a PATCH for each id done, none for the others',
      );
    } finally {
      await api.close();
    }
  });
});
