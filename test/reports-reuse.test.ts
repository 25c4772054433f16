/**
 * Reports made once (issue 35 items 4 and 5): `reports create --reuse` picks up the report this
 * profile created before with the same parameters, from its ledger, checked on the service; after
 * a POST whose outcome is unknown it looks for the report before sending again. A 429, or a 503
 * with Retry-After, is retried within --retries (not processed); any other failure after sending
 * says the report may exist and gives the --reuse line.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { MAX_ENTRIES, openReportLedger } from '../src/config/report-ledger.js';
import { apiRequests, fakeClock, openSandbox, runCli, type RunOptions } from './helpers.js';
import { json, serve } from './scripted-server.js';
import type { Io } from '../src/core/io.js';

let sandbox: Sandbox;
let clock: ReturnType<typeof fakeClock>;
let config: string;

before(async () => {
  clock = fakeClock();
  sandbox = await openSandbox({ now: () => clock.now(), reportDelayMs: 10_000 });
});
after(() => sandbox.close());
beforeEach(async () => {
  config = await mkdtemp(join(tmpdir(), 'carectl-reuse-'));
  sandbox.setFaults(undefined);
});
afterEach(() => rm(config, { recursive: true, force: true }));

function cli(args: string[], options: RunOptions = {}): ReturnType<typeof runCli> {
  return runCli(args, { sandbox, now: clock.now, sleep: clock.sleep, ...options, env: { XDG_CONFIG_HOME: config, ...options.env } });
}

const CREATE = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--format', 'csv'];
const REUSE_LINE = 'carectl reports create --account 1001 --from 2026-06-01 --to 2026-06-07 --date-type created_date --format csv --reuse';
const ledgerFile = (): string => join(config, 'carectl', 'reports.json');
const posts = (from: number): number => apiRequests(sandbox, from).filter((r) => r.method === 'POST').length;

describe('reports create --reuse against the sandbox', () => {
  test('a re-run with the same parameters picks up the report made before: one POST, a notice naming it', async () => {
    const from = sandbox.requests.length;
    const first = await cli([...CREATE, '--reuse']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    const id = first.stdout.trim();
    const again = await cli([...CREATE, '--reuse']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `${id}\n`);
    assert.equal(again.stderr, `report ${id} (queued) was created before with the same parameters: reusing it (--reuse)\n`);
    assert.equal(posts(from), 1);
    assert.equal((await stat(ledgerFile())).mode & 0o777, 0o600);
    assert.equal((await stat(join(config, 'carectl'))).mode & 0o777, 0o700);
  });

  test('a reused report that is generated is downloaded at once: no POST, no wait', async () => {
    const first = await cli([...CREATE, '--reuse']);
    const id = first.stdout.trim();
    clock.advance(60_000);
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--reuse', '--download', 'r.csv'], { cwd: config });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`^report ${id} \\(generated\\) was created before with the same parameters: reusing it \\(--reuse\\)\n`));
    assert.equal(posts(from), 0);
    assert.ok((await stat(join(config, 'r.csv'))).size > 0);
  });

  test('-o json of a reused report is its {id, url}, as for a new one', async () => {
    const first = await cli([...CREATE, '--reuse']);
    const id = first.stdout.trim();
    const again = await cli(['-o', 'json', ...CREATE, '--reuse']);
    assert.deepEqual(JSON.parse(again.stdout), { id, url: `${sandbox.baseUrl}/v1.1/reports/${id}` });
  });

  test('other parameters (format, dates, date type, target), another profile or no --reuse: a new report', async () => {
    const first = await cli([...CREATE, '--reuse']);
    const from = sandbox.requests.length;
    for (const args of [
      ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--format', 'json', '--reuse'],
      ['reports', 'create', '--account', '1001', '--from', '2026-06-02', '--to', '2026-06-07', '--format', 'csv', '--reuse'],
      [...CREATE, '--date-type', 'updated_date', '--reuse'],
      ['reports', 'create', '--channel', '202', '--from', '2026-06-01', '--to', '2026-06-07', '--format', 'csv', '--reuse'],
      CREATE,
    ]) {
      const result = await cli(args);
      assert.equal(result.code, 0, result.stderr);
      assert.notEqual(result.stdout, first.stdout, args.join(' '));
    }
    const otherProfile = await cli([...CREATE, '--reuse'], { env: { CARECTL_PROFILE: 'nightly' } });
    assert.notEqual(otherProfile.stdout, first.stdout);
    assert.equal(posts(from), 6);
  });

  test('a report that failed, or that the service no longer has, is not reused: a new one is made', async () => {
    const failing = ['reports', 'create', '--channel', FIXTURES.failingReportChannelId, '--from', '2026-06-01', '--to', '2026-06-07', '--reuse'];
    const first = await cli([...failing, '--wait']);
    assert.equal(first.code, 5, first.stderr);
    const from = sandbox.requests.length;
    const again = await cli(failing);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, '');
    assert.equal(posts(from), 1);

    // A ledger naming a report the service does not have (404).
    const made = await cli([...CREATE, '--reuse']);
    const text = (await readFile(ledgerFile(), 'utf8')).replace(`"${made.stdout.trim()}"`, '"99999"');
    await writeFile(ledgerFile(), text);
    const gone = await cli([...CREATE, '--reuse']);
    assert.equal(gone.code, 0, gone.stderr);
    assert.notEqual(gone.stdout, made.stdout);
    assert.equal(gone.stderr, '');
  });

  test('a POST whose answer is lost: --reuse finds the report it made in the list instead of sending again', async () => {
    sandbox.setFaults({ dropPostAfterBody: true });
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--reuse'], {
      // The fault lasts for the one POST.
      sleep: async (ms, signal) => {
        sandbox.setFaults(undefined);
        await clock.sleep(ms, signal);
      },
    });
    assert.equal(result.code, 0, result.stderr);
    const id = result.stdout.trim();
    assert.match(
      result.stderr,
      new RegExp(`^report ${id} \\(queued\\) has the parameters of the POST that failed: using it rather than sending again \\(--reuse\\)\\n$`),
    );
    assert.equal(posts(from), 1);
    // Noted: the next run reuses it.
    const again = await cli([...CREATE, '--reuse']);
    assert.equal(again.stdout, `${id}\n`);
  });

  test('a POST whose answer is lost, without --reuse: sent once, exit 1, the --reuse line', async () => {
    sandbox.setFaults({ dropPostAfterBody: true });
    const from = sandbox.requests.length;
    const result = await cli(CREATE);
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`; the report may have been created all the same: pick it up with: ${REUSE_LINE}\\n$`));
    assert.equal(posts(from), 1);
    // The line given does pick it up.
    sandbox.setFaults(undefined);
    const picked = await cli(REUSE_LINE.split(' ').slice(1));
    assert.equal(picked.code, 0, picked.stderr);
    assert.match(picked.stderr, /has the parameters of the POST that failed: using it/);
    assert.equal(posts(from), 1);
  });

  test('a 429 on the POST (the sandbox fault) is waited out per Retry-After and sent again, within --retries', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['429'], retryAfterSeconds: 7 });
    const slept: number[] = [];
    const from = sandbox.requests.length;
    // No folder to note an unclear POST in: the POST is the first request (no list before it), and meets the fault.
    const noLedger = { XDG_CONFIG_HOME: join(config, 'none') };
    const result = await cli(CREATE, {
      env: noLedger,
      sleep: async (ms, signal) => {
        slept.push(ms);
        sandbox.setFaults(undefined);
        await clock.sleep(ms, signal);
      },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(slept, [7000]);
    assert.equal(posts(from), 2);

    sandbox.setFaults({ rate: 1, kinds: ['429'] });
    const from2 = sandbox.requests.length;
    const refused = await cli(['--retries', '2', ...CREATE], { env: noLedger });
    assert.equal(refused.code, 1);
    assert.doesNotMatch(refused.stderr, /may have been created/);
    assert.equal(posts(from2), 3);
  });

  test('a usage error with --reuse sends nothing and writes no ledger', async () => {
    const from = sandbox.requests.length;
    const result = await cli(['reports', 'create', '--account', '1001', '--from', '2026-06-07', '--to', '2026-06-01', '--reuse']);
    assert.equal(result.code, 2);
    assert.equal(sandbox.requests.length, from);
    await assert.rejects(stat(ledgerFile()));
  });
});

describe('reports create against a scripted service', () => {
  /** A reports service whose POST answers `first` the first time, then 200 {report: {id: 70001}}. */
  async function scripted(
    first: (res: Parameters<Parameters<typeof serve>[0]>[1]) => void,
  ): Promise<{ url: string; hits: IncomingMessage[]; close(): Promise<void> }> {
    let posted = 0;
    return serve((req, res) => {
      if (req.method === 'POST') {
        posted++;
        if (posted === 1) return first(res);
        return json(res, 200, { report: { id: '70001', url: 'x' } });
      }
      // The target's reports are listed before the POST (told from a report it may make): none.
      if (req.url?.startsWith('/v1.1/reports?')) return json(res, 200, { reports: [], paging: { next_page: null } });
      // --channel is looked up by name or id first: one channel, whose id needs quoting in a shell.
      if (req.url?.startsWith('/v1.3/channels'))
        return json(res, 200, { channels: [{ id: "O'Brien 1", url: 'x', name: 'Quoted' }], paging: { next_page: null } });
      json(res, 404, { status: 'error', message: 'not found' });
    });
  }

  for (const status of [429, 503]) {
    test(`${status} with Retry-After: retried after the wait asked for, one report`, async () => {
      const server = await scripted((res) => json(res, status, { status: 'error', message: 'busy' }, { 'retry-after': '3' }));
      const slept: number[] = [];
      try {
        const result = await cli(CREATE, {
          env: { CARECTL_BASE_URL: server.url },
          sleep: async (ms, signal) => {
            slept.push(ms);
            await clock.sleep(ms, signal);
          },
        });
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stdout, '70001\n');
        assert.deepEqual(slept, [3000]);
        assert.equal(server.hits.filter((hit) => hit.method === 'POST').length, 2);
      } finally {
        await server.close();
      }
    });
  }

  test('--reuse after a 502 to the POST: the list is looked at first; a report of other dates is not taken, so the POST goes again, once', async () => {
    let posted = 0;
    const server = await serve((req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (req.method === 'POST') {
        posted++;
        return posted === 1 ? json(res, 502, 'Bad gateway') : json(res, 200, { report: { id: '70002', url: 'x' } });
      }
      // 70001 (of other dates) is listed since the POST; 69000 was before it.
      if (url.pathname === '/v1.1/reports')
        return json(res, 200, { reports: [...(posted > 0 ? [{ id: '70001', url: 'x' }] : []), { id: '69000', url: 'x' }], paging: {} });
      const id = url.pathname.split('/').pop();
      json(res, 200, { report: { id, name: 'n', date_from: '2026-05-01', date_to: '2026-06-07', account: { id: 1001, url: 'x' } } });
    });
    try {
      const result = await cli([...CREATE, '--reuse'], { env: { CARECTL_BASE_URL: server.url } });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '70002\n');
      assert.match(result.stderr, /the report may have been created all the same, but no such report is listed: sending it again \(--reuse\)\n$/);
      assert.deepEqual(
        server.hits.map((hit) => `${hit.method} ${hit.url!.replace(/\?fields=.*$/, '')}`),
        [
          'GET /v1.1/reports?account=1001&page_size=50',
          'POST /v1.1/reports',
          'GET /v1.1/reports?account=1001&page_size=50',
          'GET /v1.1/reports/70001',
          'POST /v1.1/reports',
        ],
      );
    } finally {
      await server.close();
    }
  });

  test('503 without Retry-After: not sent again, the report may exist, the --reuse line quoted for a shell', async () => {
    const server = await scripted((res) => json(res, 503, { status: 'error', message: 'unavailable' }));
    try {
      const result = await cli(
        ['reports', 'create', '--channel', "O'Brien 1", '--from', '2026-06-01', '--to', '2026-06-07', '--download', 'my file.csv', '--timeout', '5m'],
        {
          env: { CARECTL_BASE_URL: server.url },
          cwd: config,
        },
      );
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /; the report may have been created all the same: pick it up with: carectl reports create --channel 'O'\\''Brien 1' --from 2026-06-01 --to 2026-06-07 --date-type created_date --format csv --download 'my file\.csv' --timeout 5m --reuse\n$/,
      );
      assert.equal(server.hits.filter((hit) => hit.method === 'POST').length, 1);
    } finally {
      await server.close();
    }
  });
});

test('the ledger keeps the newest entries only, and a corrupt one is taken as empty', async () => {
  const io = { env: { XDG_CONFIG_HOME: config }, signal: new AbortController().signal } as unknown as Io;
  const ledger = openReportLedger(io);
  await ledger.record({ profile: 'p', base: 'b', key: 'k', id: '1' });
  await writeFile(ledger.path, '{not json');
  assert.deepEqual(ledger.find({ profile: 'p', base: 'b', key: 'k' }), []);
  for (let id = 0; id < MAX_ENTRIES + 3; id++) await ledger.record({ profile: 'p', base: 'b', key: 'k', id: String(id) });
  const found = ledger.find({ profile: 'p', base: 'b', key: 'k' });
  assert.equal(found.length, MAX_ENTRIES);
  assert.equal(found[0]?.id, String(MAX_ENTRIES + 2));
  assert.deepEqual(ledger.find({ profile: 'p', base: 'other', key: 'k' }), []);
});
