/**
 * Reports from create to file, end to end against the sandbox on a fake clock: the sandbox's
 * lifecycle and carectl's polling both follow it, so nothing here sleeps for real.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { download, PartialFile, removePartialFiles, type DownloadOptions, type DownloadTarget } from '../src/http/download.js';
import { nextPollDelay, POLL_CAP_MS } from '../src/commands/reports/polling.js';
import { reportState } from '../src/catalogue/index.js';
import { FIXTURES, reportFileContent, type ReportFormat, type ReportRecord, type Sandbox } from '../src/sandbox/index.js';
import { Collector, apiRequests, downloadOptions, fakeClock, openSandbox, runCli, type RunOptions } from './helpers.js';

const REPORT_DELAY_MS = 10_000;
let sandbox: Sandbox;
let clock: ReturnType<typeof fakeClock>;
let folder: string;

before(async () => {
  clock = fakeClock();
  sandbox = await openSandbox({ now: () => clock.now(), reportDelayMs: REPORT_DELAY_MS });
});
after(() => sandbox.close());
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'carectl-reports-'));
  sandbox.setFaults(undefined);
  clock.slept.length = 0;
});
afterEach(() => rm(folder, { recursive: true, force: true }));

function cli(args: string[], options: RunOptions = {}): ReturnType<typeof runCli> {
  return runCli(args, { sandbox, now: clock.now, sleep: clock.sleep, cwd: folder, ...options });
}

function report(id: string): ReportRecord {
  const found = sandbox.data.byId.reports.get(id);
  assert.ok(found, `report ${id} exists`);
  return found;
}

/** The id the next POST creates (the sandbox numbers reports consecutively). */
function nextReportId(): string {
  return String(Math.max(...sandbox.data.reports.map((r) => Number(r.id))) + 1);
}

const CREATE = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07'];

describe('reports create', () => {
  test('without --wait prints the new id and sends the POST body once', async () => {
    const id = nextReportId();
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--format', 'csv']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${id}\n`);
    assert.equal(result.stderr, '');
    const sent = apiRequests(sandbox, from);
    assert.deepEqual(
      sent.map((r) => `${r.method} ${r.url} ${r.status}`),
      ['POST /v1.1/reports 200'],
    );
    assert.deepEqual(JSON.parse(sent[0]!.body!), { account: 1001, date_from: '2026-06-01', date_to: '2026-06-07', date_type: 'created_date', format: 'csv' });
  });

  test('an account id that is not a number as written (a leading zero) is sent as typed: 01001 is not account 1001', async () => {
    const from = sandbox.requests.length;
    const result = await cli(['reports', 'create', '--account', '01001', '--from', '2026-06-01', '--to', '2026-06-07']);
    // No such account: no report for account 1001 either.
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /Unknown account '01001'/);
    assert.equal((JSON.parse(apiRequests(sandbox, from)[0]!.body!) as { account: unknown }).account, '01001');
  });

  test('a POST whose answer is lost is not repeated: exit 1 with where to look', async () => {
    sandbox.setFaults({ dropPostAfterBody: true });
    const from = sandbox.requests.length;
    const result = await cli(CREATE);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^carectl: POST http:\/\/127\.0\.0\.1:\d+\/v1\.1\/reports failed: .*; the report may have been created all the same: look with carectl reports list --account 1001 before trying again\n$/,
    );
    assert.equal(apiRequests(sandbox, from).length, 1, 'sent once');
  });

  test('-o json prints {id, url}; relative dates and --channel are sent as the service expects', async () => {
    const id = nextReportId();
    const from = sandbox.requests.length;
    const result = await cli(['-o', 'json', 'reports', 'create', '--channel', '202', '--from', '7d', '--to', 'yesterday', '--date-type', 'updated_date']);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { id, url: `${sandbox.baseUrl}/v1.1/reports/${id}` });
    const posts = apiRequests(sandbox, from).filter((request) => request.method === 'POST');
    assert.deepEqual(JSON.parse(posts[0]!.body!), {
      channel: '202',
      date_from: '2026-06-23',
      date_to: '2026-06-29',
      date_type: 'updated_date',
    });
  });

  test('--channel takes a name (field test): the POST carries its id; an unknown name is exit 2 with no POST', async () => {
    const from = sandbox.requests.length;
    const byName = await cli(['reports', 'create', '--channel', 'acme facebook', '--from', '1d', '--to', '1d']);
    assert.equal(byName.code, 0, byName.stderr);
    const posts = apiRequests(sandbox, from).filter((request) => request.method === 'POST');
    assert.equal(posts.length, 1);
    assert.equal((JSON.parse(posts[0]!.body!) as { channel: string }).channel, '202');
    const mark = sandbox.requests.length;
    const unknown = await cli(['reports', 'create', '--channel', 'Nope', '--from', '1d', '--to', '1d']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^carectl: --channel: no channel has the name or id "Nope"/);
    assert.deepEqual(
      apiRequests(sandbox, mark).filter((request) => request.method === 'POST'),
      [],
    );
  });

  const usage: Array<{ name: string; args: string[]; message: RegExp }> = [
    {
      name: 'both --account and --channel',
      args: ['--account', '1001', '--channel', '202', '--from', '1d', '--to', '1d'],
      message: /exactly one of --account ID or --channel ID/,
    },
    { name: 'neither --account nor --channel', args: ['--from', '1d', '--to', '1d'], message: /exactly one of/ },
    { name: 'no --to', args: ['--account', '1001', '--from', '1d'], message: /--from DATE and --to DATE are both required/ },
    { name: 'a bad date', args: ['--account', '1001', '--from', '2026-02-30', '--to', '1d'], message: /--from: "2026-02-30" is not a valid date/ },
    { name: '--from after --to', args: ['--account', '1001', '--from', '1d', '--to', '3d'], message: /is after --to/ },
    {
      name: 'a bad --format',
      args: ['--account', '1001', '--from', '3d', '--to', '1d', '--format', 'pdf'],
      message: /--format: "pdf" is not one of xlsx, csv, json/,
    },
    { name: 'a bad --date-type', args: ['--account', '1001', '--from', '3d', '--to', '1d', '--date-type', 'sent'], message: /--date-type/ },
    {
      name: '--timeout without waiting',
      args: ['--account', '1001', '--from', '3d', '--to', '1d', '--timeout', '5m'],
      message: /use it with --wait or --download/,
    },
    {
      name: 'a bad --timeout',
      args: ['--account', '1001', '--from', '3d', '--to', '1d', '--wait', '--timeout', '5'],
      message: /--timeout: "5" is not a duration/,
    },
    {
      name: '--download into a missing folder',
      args: ['--account', '1001', '--from', '3d', '--to', '1d', '--download', 'nope/r.csv'],
      message: /--download: the folder nope does not exist/,
    },
  ];
  for (const { name, args, message } of usage) {
    test(`${name}: exit 2, nothing sent`, async () => {
      const from = sandbox.requests.length;
      const result = await cli(['reports', 'create', ...args]);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
      assert.equal(sandbox.requests.length, from);
    });
  }

  test('--download at a loop of symbolic links: exit 2 before the POST (issue 33 item 18)', async () => {
    await symlink('loop-b', join(folder, 'loop-a'));
    await symlink('loop-a', join(folder, 'loop-b'));
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--download', 'loop-a']);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr, 'carectl: --download: cannot write to loop-a: too many symbolic links encountered (ELOOP)\n');
    assert.equal(sandbox.requests.length, from);
    assert.deepEqual((await readdir(folder)).sort(), ['loop-a', 'loop-b']);
  });
});

test('a --file name of 250 bytes (255 allowed) is saved: the temporary name stays short (issue 33 item 17)', async () => {
  const name = `${'é'.repeat(123)}.csv`;
  assert.equal(Buffer.byteLength(name), 250);
  const result = await cli(['reports', 'download', FIXTURES.reports.generatedId, '--file', name]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(await readdir(folder), [name]);
});

describe('reports create --download without --format', () => {
  test('a file named .csv asks for csv (the service default, xlsx, would be a ZIP archive under that name)', async () => {
    const id = nextReportId();
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--download', 'nightly.csv']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(apiRequests(sandbox, from)[0]!.body!) as { format?: string }).format, 'csv');
    assert.deepEqual(await readFile(join(folder, 'nightly.csv')), reportFileContent(report(id), 'csv'));
  });

  test('--format that differs from the name is kept, and said', async () => {
    const result = await cli([...CREATE, '--format', 'json', '--download', 'nightly.csv']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^--download nightly\.csv is named \.csv, but the file will hold json \(--format json\)\n/);
  });

  test('another name, or a folder, leaves the format to the service', async () => {
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--download', 'nightly.data']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(apiRequests(sandbox, from)[0]!.body!) as { format?: string }).format, undefined);
  });
});

describe('reports create --download: the whole way to a file', () => {
  for (const format of ['csv', 'json', 'xlsx'] as ReportFormat[]) {
    test(`${format}: exact file content, one plain progress line per state, credentials never sent to the download host`, async () => {
      const id = nextReportId();
      const started = clock.now();
      const from = sandbox.requests.length;
      const result = await cli([...CREATE, '--format', format, '--download', `out.${format}`]);
      assert.equal(result.code, 0, result.stderr);
      // The id is in the notice on stderr: stdout stays empty, so cron mails nothing with --quiet.
      assert.equal(result.stdout, '');
      const bytes = reportFileContent(report(id), format);
      assert.deepEqual(await readFile(join(folder, `out.${format}`)), bytes);
      assert.deepEqual(await readdir(folder), [`out.${format}`], 'no temporary file is left');
      // Generation starts at 5 s and ends at 10 s; the polls land at 0, .25, .625, 1.188, 2.033, 3.033 … s.
      assert.equal(
        result.stderr,
        `report ${id}: queued (0s)\nreport ${id}: generating (5s)\nreport ${id}: generated (10s)\n` +
          `report ${id}: saved ${(bytes.length / 1024).toFixed(1)} KiB to out.${format}\n`,
      );
      const downloads = sandbox.requests.slice(from).filter((r) => r.listener === 'download');
      assert.equal(downloads.length, 1);
      assert.equal(downloads[0]!.authorization, undefined);
      assert.equal(downloads[0]!.status, 200);
      assert.ok(apiRequests(sandbox, from).every((r) => r.authorization?.startsWith('Basic ')));
      assert.ok(clock.now() - started - REPORT_DELAY_MS <= 1000, 'a ready report is noticed within a second');
    });
  }

  test('--quiet with --download FILE prints nothing at all on success, in any format (a cron job mails nothing)', async () => {
    for (const output of ['tsv', 'json']) {
      const id = nextReportId();
      const created = await cli(['--quiet', '-o', output, ...CREATE, '--format', 'csv', '--download', `cron-${output}.csv`]);
      assert.deepEqual(created, { code: 0, stdout: '', stderr: '' });
      assert.deepEqual(await readFile(join(folder, `cron-${output}.csv`)), reportFileContent(report(id), 'csv'));
      const waited = await cli(['--quiet', '-o', output, 'reports', 'wait', id, '--download', `again-${output}.csv`]);
      assert.deepEqual(waited, { code: 0, stdout: '', stderr: '' });
      await rm(join(folder, `cron-${output}.csv`));
      await rm(join(folder, `again-${output}.csv`));
    }
  });

  test('polling starts at 250 ms, backs off ×1.5 to 0.9 s, and asks for the state fields', async () => {
    const from = sandbox.requests.length;
    const result = await cli([...CREATE, '--wait']);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(clock.slept.slice(0, 6), [250, 375, 563, 845, 900, 900]);
    // Within the first ten seconds no wait passes a second (later, a tenth of the time waited).
    assert.ok(
      clock.slept.every((ms) => ms <= Math.max(POLL_CAP_MS, 1000)),
      clock.slept.join(','),
    );
    const polls = apiRequests(sandbox, from).filter((r) => r.method === 'GET');
    assert.ok(
      polls.every((r) => r.url.endsWith('?fields=generation_start_date%2Cgenerated_date%2Cdownload%2Cfailure')),
      polls[0]?.url,
    );
    // About one request a second over the wait (the first second polls faster).
    assert.ok(polls.length <= REPORT_DELAY_MS / 1000 + 4, `${polls.length} polls`);
  });

  test('--download - streams the file to stdout and nothing else', async () => {
    const id = nextReportId();
    const result = await cli(['--quiet', ...CREATE, '--format', 'csv', '--download', '-']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, reportFileContent(report(id), 'csv').toString('utf8'));
    assert.equal(result.stderr, '');
    assert.deepEqual(await readdir(folder), []);
  });

  test('on a terminal: a live status line with the elapsed time and a byte progress bar', async () => {
    const id = nextReportId();
    const result = await cli([...CREATE, '--format', 'csv', '--download', folder], { stderrTTY: true });
    assert.equal(result.code, 0, result.stderr);
    const clear = '\r\x1b[2K';
    // the same line is not drawn twice: the next redraw shows the next second
    assert.ok(result.stderr.startsWith(`${clear}report ${id}: queued (0s)${clear}report ${id}: queued (1s)`), JSON.stringify(result.stderr.slice(0, 80)));
    assert.ok(result.stderr.includes(`${clear}report ${id}: generating (5s)${clear}report ${id}: generating (6s)`));
    assert.ok(result.stderr.includes(`${clear}report ${id}: generated (10s)\n`));
    assert.match(result.stderr, /\r\x1b\[2Kreport \d+ \[#{24}\] 100% {2}\d+\.\d KiB \/ \d+\.\d KiB/);
    assert.ok(
      result.stderr.endsWith(
        `${clear}report ${id}: saved ${(reportFileContent(report(id), 'csv').length / 1024).toFixed(1)} KiB to ${join(folder, `report-${id}.csv`)}\n`,
      ),
    );
    assert.deepEqual(await readdir(folder), [`report-${id}.csv`]);
  });

  test('--quiet: no progress at all', async () => {
    const result = await cli(['--quiet', ...CREATE, '--download', 'r.xlsx'], { stderrTTY: true });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
  });
});

describe('reports: failure, timeout, interrupt', () => {
  test('a failed report: exit 5 with the failure text', async () => {
    const id = nextReportId();
    const result = await cli(['reports', 'create', '--channel', FIXTURES.failingReportChannelId, '--from', '3d', '--to', '1d', '--download', 'r.csv']);
    assert.equal(result.code, 5);
    const failure = report(id).failure;
    assert.ok(failure);
    assert.equal(
      result.stderr,
      `report ${id}: queued (0s)\nreport ${id}: generating (5s)\nreport ${id}: failed (10s)\ncarectl: report ${id} failed: ${failure}\n`,
    );
    assert.equal(result.stdout, '');
    assert.deepEqual(await readdir(folder), []);
  });

  test('timeout: exit 6 naming the report and the command that keeps waiting; that command then finishes the job', async () => {
    const id = nextReportId();
    const started = clock.now();
    const result = await cli([...CREATE, '--format', 'json', '--download', 'late.json', '--timeout', '3s']);
    assert.equal(result.code, 6);
    assert.equal(clock.now() - started, 3000, 'the last poll lands on the deadline');
    assert.ok(
      result.stderr.endsWith(`carectl: report ${id} is still queued after 3s; keep waiting with: carectl reports wait ${id} --download late.json\n`),
      result.stderr,
    );
    assert.equal(result.stdout, '');
    assert.deepEqual(await readdir(folder), []);

    const resumed = await cli(['reports', 'wait', id, '--download', 'late.json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, '');
    assert.match(resumed.stderr, new RegExp(`^report ${id}: saved .* to late\\.json$`, 'm'));
    assert.deepEqual(await readFile(join(folder, 'late.json')), reportFileContent(report(id), 'json'));
  });

  test('without --timeout the wait lasts 30 minutes (the contract default)', async () => {
    const slowClock = fakeClock();
    const slow = await openSandbox({ now: () => slowClock.now(), reportDelayMs: 40 * 60_000 });
    try {
      const started = slowClock.now();
      const result = await runCli(['reports', 'create', '--account', '1001', '--from', '3d', '--to', '1d', '--wait', '--quiet'], {
        sandbox: slow,
        now: slowClock.now,
        sleep: slowClock.sleep,
      });
      assert.equal(result.code, 6, result.stderr);
      assert.equal(slowClock.now() - started, 30 * 60_000);
      assert.match(result.stderr, /is still (queued|generating) after 30m/);
    } finally {
      await slow.close();
    }
  });

  test('Ctrl-C while waiting: exit 130 with the report id and `carectl reports wait ID`', async () => {
    const id = nextReportId();
    const controller = new AbortController();
    let naps = 0;
    const sleep: typeof clock.sleep = async (ms, signal) => {
      if (++naps === 3) controller.abort();
      await clock.sleep(ms, signal);
    };
    const result = await cli([...CREATE, '--wait'], { sleep, signal: controller.signal });
    assert.equal(result.code, 130);
    assert.ok(result.stderr.endsWith(`carectl: interrupted while waiting for report ${id}; pick it up with: carectl reports wait ${id}\n`), result.stderr);
    assert.equal(result.stdout, '');
  });

  test('Retry-After on throttled polls is honoured', async () => {
    const id = nextReportId();
    assert.equal((await cli(CREATE)).code, 0);
    sandbox.setFaults({ rate: 0.5, kinds: ['429'], retryAfterSeconds: 2, seed: 7 });
    const result = await cli(['--quiet', 'reports', 'wait', id]);
    sandbox.setFaults(undefined);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(clock.slept.includes(2000), `slept ${clock.slept.join(',')}`);
    assert.ok(sandbox.requests.some((r) => r.status === 429));
  });

  test('a Retry-After longer than carectl waits between retries is still honoured within --timeout', async () => {
    const id = nextReportId();
    assert.equal((await cli(CREATE)).code, 0);
    sandbox.setFaults({ rate: 0.5, kinds: ['429'], retryAfterSeconds: 90, seed: 7 });
    const result = await cli(['--quiet', 'reports', 'wait', id, '--timeout', '30m']);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(clock.slept.includes(90_000), `slept ${clock.slept.join(',')}`);
    // Past what is left of --timeout, the wait ends at once with the service's message.
    const late = nextReportId();
    assert.equal((await cli(CREATE)).code, 0);
    const start = clock.slept.length;
    const short = await cli(['--quiet', 'reports', 'wait', late, '--timeout', '60s']);
    sandbox.setFaults(undefined);
    assert.equal(short.code, 1);
    assert.match(
      short.stderr,
      new RegExp(
        `^carectl: .*\\(HTTP 429\\); it asked to wait 90 s .* \\(while waiting for report ${late}; try again with: carectl reports wait ${late}\\)\\n$`,
      ),
    );
    assert.ok(
      clock.slept.slice(start).every((ms) => ms < 90_000),
      `slept ${clock.slept.slice(start).join(',')}`,
    );
  });

  test('reports wait on an unknown report: exit 4 with the service message', async () => {
    const result = await cli(['reports', 'wait', '99999']);
    assert.equal(result.code, 4);
    assert.equal(result.stderr, "carectl: No report with id '99999' (HTTP 404)\n");
  });

  test('a service error while waiting (after the retries) names the command that continues', async () => {
    const id = nextReportId();
    assert.equal((await cli(CREATE)).code, 0);
    sandbox.setFaults({ rate: 1, kinds: ['503'] });
    const result = await cli(['--retries', '1', 'reports', 'wait', id, '--download', 'r.xlsx']);
    sandbox.setFaults(undefined);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `carectl: Service unavailable (injected fault) (HTTP 503) (while waiting for report ${id}; try again with: carectl reports wait ${id} --download r.xlsx)\n`,
    );
  });
});

describe('reports: a destination that cannot be written', () => {
  // /proc refuses new files even to root, who passes every permission check elsewhere.
  const skip = process.platform !== 'linux';
  const cases: Array<{ name: string; args: string[]; cwd?: string; message: RegExp }> = [
    {
      name: 'create --download FILE',
      args: [...CREATE, '--download', '/proc/x.csv'],
      message: /^carectl: --download: cannot write to \/proc\/x\.csv: [a-z ]+ \(E[A-Z]+\)\n$/,
    },
    {
      name: 'create --download FOLDER',
      args: [...CREATE, '--download', '/proc'],
      message: /^carectl: --download: cannot write to the folder \/proc: [a-z ]+ \(E[A-Z]+\)\n$/,
    },
    {
      name: 'wait --download',
      args: ['reports', 'wait', FIXTURES.reports.generatedId, '--download', '/proc/x.csv'],
      message: /^carectl: --download: cannot write to \/proc\/x\.csv: /,
    },
    {
      name: 'download --file',
      args: ['reports', 'download', FIXTURES.reports.generatedId, '--file', '/proc/x.csv'],
      message: /^carectl: --file: cannot write to \/proc\/x\.csv: /,
    },
    {
      name: 'download into the current folder',
      args: ['reports', 'download', FIXTURES.reports.generatedId],
      cwd: '/proc',
      message: /^carectl: cannot write to the current folder \(\/proc\): [a-z ]+ \(E[A-Z]+\); choose another with --file PATH\n$/,
    },
  ];
  for (const { name, args, cwd, message } of cases) {
    test(`${name}: exit 2 before anything is sent, no temporary file left`, { skip }, async () => {
      const from = sandbox.requests.length;
      const result = await cli(args, cwd === undefined ? {} : { cwd });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
      assert.equal(sandbox.requests.length, from, 'nothing sent');
      assert.deepEqual(
        (await readdir('/proc')).filter((name) => name.includes('.partial-')),
        [],
      );
    });
  }

  test('the temporary file exists from the start and goes on every way out: a later usage error, Ctrl-C, a forced stop', async () => {
    const badTimeout = await cli([...CREATE, '--download', 'r.csv', '--timeout', '5']);
    assert.equal(badTimeout.code, 2, badTimeout.stderr);
    assert.deepEqual(await readdir(folder), []);

    const interrupt = new AbortController();
    const interrupted = await cli([...CREATE, '--download', 'r.csv'], {
      signal: interrupt.signal,
      sleep: async (ms, signal) => {
        interrupt.abort();
        await clock.sleep(ms, signal);
      },
    });
    assert.equal(interrupted.code, 130, interrupted.stderr);
    assert.deepEqual(await readdir(folder), []);

    const controller = new AbortController();
    let during: string[] = [];
    const sleep: typeof clock.sleep = async (ms, signal) => {
      if (during.length === 0) {
        during = await readdir(folder);
        // What a second Ctrl-C does before the process ends at once.
        removePartialFiles();
        controller.abort();
      }
      await clock.sleep(ms, signal);
    };
    const result = await cli([...CREATE, '--download', 'r.csv'], { sleep, signal: controller.signal });
    assert.equal(result.code, 130, result.stderr);
    assert.equal(during.length, 1);
    assert.match(during[0]!, /^r\.csv\.partial-[0-9a-f]{12}$/);
    assert.deepEqual(await readdir(folder), []);
  });
});

describe('reports download', () => {
  test('default name report-ID.EXT in the current folder, exact bytes, no credentials to the download host', async () => {
    const id = FIXTURES.reports.generatedId;
    const from = sandbox.requests.length;
    const result = await cli(['reports', 'download', id]);
    assert.equal(result.code, 0, result.stderr);
    const record = report(id);
    assert.deepEqual(await readFile(join(folder, `report-${id}.${record.format}`)), reportFileContent(record, record.format));
    assert.equal(result.stdout, '');
    const downloads = sandbox.requests.slice(from).filter((r) => r.listener === 'download');
    assert.deepEqual(
      downloads.map((r) => [r.authorization, r.status]),
      [[undefined, 200]],
    );
  });

  test('follows a redirect from the download address, still without credentials', async () => {
    const id = FIXTURES.reports.generatedId;
    sandbox.setFaults({ redirectDownloads: true });
    const from = sandbox.requests.length;
    const result = await cli(['reports', 'download', id, '--file', '-']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, reportFileContent(report(id), report(id).format).toString('utf8'));
    assert.deepEqual(
      sandbox.requests
        .slice(from)
        .filter((r) => r.listener === 'download')
        .map((r) => [r.status, r.authorization]),
      [
        [302, undefined],
        [200, undefined],
      ],
    );
  });

  test('--file - writes to stdout', async () => {
    const id = FIXTURES.reports.generatedId;
    const result = await cli(['reports', 'download', id, '--file', '-']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, reportFileContent(report(id), report(id).format).toString('utf8'));
  });

  test('--verbose traces the download requests, which carry no credentials, with any query hidden', async () => {
    const id = FIXTURES.reports.generatedId;
    const address = `${sandbox.downloadBaseUrl}/downloads/${report(id).download_token}/${id}.${report(id).format}`;
    const result = await cli(['--verbose', 'reports', 'download', id, '--file', '-']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `^> GET ${address.replaceAll('.', '\\.')} \\(download: no credentials\\)\n< 200 GET ${address.replaceAll('.', '\\.')} \\(HTTP/1\\.1, direct, new connection, .*\\d+ ms\\)\n`,
        'm',
      ),
    );

    sandbox.setFaults({ breakDownloads: true });
    const broken = await cli(['--verbose', 'reports', 'download', id, '--file', 'broken.csv', '--retries', '1']);
    assert.equal(broken.code, 1);
    assert.equal(broken.stderr.match(/^> GET .*\/downloads\//gm)?.length, 2, broken.stderr);
    assert.match(broken.stderr, /^ {2}retrying in \d+ ms$/m);
    // A failed attempt's answer says how far its body came, and how.
    assert.match(
      broken.stderr,
      /^< 200 GET \S+\/downloads\/\S+: download from \S+ (?:broke off|ended) after \d+ .*\(HTTP\/1\.1, direct, (?:new|reused) connection, .*\d+ ms\)$/m,
    );
  });

  test('a broken download leaves neither the file nor a temporary file (after the retries)', async () => {
    sandbox.setFaults({ breakDownloads: true });
    const from = sandbox.requests.length;
    const result = await cli(['reports', 'download', FIXTURES.reports.generatedId, '--file', 'broken.csv']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /nothing was saved; try again with: carectl reports download 60001 --file broken.csv\n$/);
    assert.deepEqual(await readdir(folder), []);
    assert.equal(sandbox.requests.slice(from).filter((r) => r.listener === 'download').length, 4, 'first try and 3 retries');
  });

  test('to stdout, a download that breaks part-way says the output is incomplete, not that nothing was saved', async () => {
    const id = FIXTURES.reports.generatedId;
    sandbox.setFaults({ breakDownloads: true });
    const result = await cli(['reports', 'download', id, '--file', '-']);
    assert.equal(result.code, 1);
    assert.ok(result.stdout.length > 0, 'part of the file went to stdout');
    const message = new RegExp(
      `^carectl: download from \\S+ broke off after (\\d+) bytes: .*; the output on stdout is incomplete \\((\\d+) bytes\\); try again with: carectl reports download ${id} --file -\n$`,
    ).exec(result.stderr);
    assert.ok(message, result.stderr);
    assert.equal(message[1], message[2]);
    assert.ok(Number(message[1]) > 0);
  });

  test('to stdout, reports wait and reports create --download - say so too', async () => {
    const id = nextReportId();
    assert.equal((await cli([...CREATE, '--format', 'csv', '--wait', '--quiet'])).code, 0);
    sandbox.setFaults({ breakDownloads: true });
    const waited = await cli(['--quiet', 'reports', 'wait', id, '--download', '-']);
    assert.equal(waited.code, 1);
    assert.ok(waited.stdout.length > 0);
    assert.match(
      waited.stderr,
      new RegExp(`; the output on stdout is incomplete \\(\\d+ bytes\\); try again with: carectl reports wait ${id} --download -\n$`),
    );

    const next = nextReportId();
    const created = await cli(['--quiet', ...CREATE, '--format', 'csv', '--download', '-']);
    assert.equal(created.code, 1);
    assert.ok(created.stdout.length > 0);
    assert.match(
      created.stderr,
      new RegExp(`; the output on stdout is incomplete \\(\\d+ bytes\\); try again with: carectl reports wait ${next} --download -\n$`),
    );
  });

  test('to stdout, Ctrl-C part-way says the output is incomplete (exit 130)', async () => {
    const id = FIXTURES.reports.generatedId;
    sandbox.setFaults({ trickleDownloadsMs: 20 });
    const controller = new AbortController();
    const result = await cli(['reports', 'download', id, '--file', '-'], { signal: controller.signal, onStdout: () => controller.abort() });
    assert.equal(result.code, 130);
    assert.ok(result.stdout.length > 0);
    assert.match(
      result.stderr,
      new RegExp(
        `^carectl: interrupted while downloading report ${id}; the output on stdout is incomplete \\(\\d+ bytes\\); start again with: carectl reports download ${id} --file -\n$`,
      ),
    );
  });

  test('a failed report: exit 5; a report still generating: a hint to wait', async () => {
    const failed = await cli(['reports', 'download', FIXTURES.reports.failedId]);
    assert.equal(failed.code, 5);
    assert.equal(failed.stderr, `carectl: report ${FIXTURES.reports.failedId} failed: ${report(FIXTURES.reports.failedId).failure}\n`);
    const id = nextReportId();
    assert.equal((await cli(CREATE)).code, 0);
    const early = await cli(['reports', 'download', id, '--file', 'x.xlsx']);
    assert.equal(early.code, 1);
    assert.equal(early.stderr, `carectl: report ${id} is still queued; wait for it with: carectl reports wait ${id} --download x.xlsx\n`);
    assert.deepEqual(await readdir(folder), []);
  });
});

/** download() of a seeded report's file, with test defaults. */
function downloadSeeded(id: string, overrides: Partial<DownloadOptions> & Pick<DownloadOptions, 'target'>): Promise<number> {
  const record = report(id);
  return download(
    downloadOptions(`${sandbox.downloadBaseUrl}/downloads/${record.download_token}/${record.id}.${record.format}`, overrides.target, clock, overrides),
  );
}

/** A file target in the test folder, its temporary file created first as the commands do. */
async function fileTarget(name: string): Promise<DownloadTarget> {
  return { file: join(folder, name), partial: await PartialFile.create(folder, name) };
}

describe('download module', () => {
  test('an interrupt part-way removes the temporary file and leaves nothing at PATH', async () => {
    const controller = new AbortController();
    let chunks = 0;
    await assert.rejects(
      downloadSeeded(FIXTURES.reports.generatedId, {
        target: await fileTarget('stopped.csv'),
        signal: controller.signal,
        onProgress: (received) => {
          if (received > 0 && ++chunks === 1) controller.abort();
        },
      }),
      (err: Error) => err.name === 'InterruptedError',
    );
    assert.deepEqual(await readdir(folder), []);
  });

  test('removePartialFiles() removes the temporary file of a download in progress at once', async () => {
    sandbox.setFaults({ trickleDownloadsMs: 20 });
    const controller = new AbortController();
    let started!: () => void;
    const writing = new Promise<void>((resolve) => (started = resolve));
    const downloading = downloadSeeded(FIXTURES.reports.generatedId, {
      target: await fileTarget('slow.csv'),
      signal: controller.signal,
      onProgress: (received) => {
        if (received > 0) started();
      },
    });
    await writing;
    assert.equal((await readdir(folder)).length, 1, 'the temporary file exists');
    removePartialFiles();
    assert.deepEqual(await readdir(folder), []);
    controller.abort();
    await assert.rejects(downloading);
    assert.deepEqual(await readdir(folder), []);
  });

  test('a retry after a broken download writes the file from its start', async () => {
    const id = FIXTURES.reports.generatedId;
    sandbox.setFaults({ breakDownloads: true });
    const bytes = await downloadSeeded(id, {
      target: await fileTarget('retried.csv'),
      // The link recovers while carectl waits to retry.
      sleep: async () => sandbox.setFaults(undefined),
    });
    const expected = reportFileContent(report(id), report(id).format);
    assert.equal(bytes, expected.length);
    assert.deepEqual(await readFile(join(folder, 'retried.csv')), expected);
    assert.deepEqual(await readdir(folder), ['retried.csv']);
  });

  test('the trace hides the query of a signed address', async () => {
    const record = report(FIXTURES.reports.generatedId);
    const lines: string[] = [];
    const out = new Collector();
    await downloadSeeded(record.id, {
      url: `${sandbox.downloadBaseUrl}/downloads/${record.download_token}/${record.id}.${record.format}?X-Signature=s3cr3t-sig`,
      target: { stdout: out },
      trace: (line) => lines.push(line),
    });
    assert.ok(out.text.length > 0, 'the file came');
    assert.deepEqual(
      lines.map((line) => line.replace(/[\d.]+ (ms|KiB)/g, 'N $1')),
      [
        `> GET ${sandbox.downloadBaseUrl}/downloads/${record.download_token}/${record.id}.${record.format}?[redacted] (download: no credentials)`,
        `< 200 GET ${sandbox.downloadBaseUrl}/downloads/${record.download_token}/${record.id}.${record.format}?[redacted] (HTTP/1.1, direct, new connection, gzip N KiB on the wire, N KiB decoded, N ms)`,
      ],
    );
  });

  test('to stdout: no retry once bytes went out', async () => {
    sandbox.setFaults({ breakDownloads: true });
    const from = sandbox.requests.length;
    const out = new Collector();
    await assert.rejects(downloadSeeded(FIXTURES.reports.generatedId, { target: { stdout: out } }), /broke off after \d+ bytes/);
    assert.equal(sandbox.requests.slice(from).length, 1);
  });
});

describe('waiting logic', () => {
  test('the state follows the fields of the lifecycle', () => {
    assert.equal(reportState({ id: '1' }), 'queued');
    assert.equal(reportState({ id: '1', generation_start_date: '2026-06-30T12:00:00', generated_date: '' }), 'generating');
    assert.equal(reportState({ id: '1', generation_start_date: 'x', generated_date: '2026-06-30T12:00:05', download: 'http://d/x.csv' }), 'generated');
    assert.equal(reportState({ id: '1', generation_start_date: 'x', generated_date: '', failure: 'boom' }), 'failed');
  });

  test('the poll delays grow ×1.5 from 250 ms and stop at the cap', () => {
    const delays: number[] = [];
    let delay: number | undefined;
    for (let i = 0; i < 8; i++) delays.push((delay = nextPollDelay(delay)));
    assert.deepEqual(delays, [250, 375, 563, 845, 900, 900, 900, 900]);
  });
});

describe('polite polling on a long wait', () => {
  /** Polls of a wait of `totalMs` for a report that never becomes ready, on the fake clock. */
  const pollsOver = (totalMs: number): { polls: number; delays: Array<[number, number]> } => {
    const delays: Array<[number, number]> = [];
    let elapsed = 0;
    let delay: number | undefined;
    let polls = 1;
    while (elapsed < totalMs) {
      delay = nextPollDelay(delay, elapsed);
      delays.push([elapsed, delay]);
      elapsed += delay;
      polls++;
    }
    return { polls, delays };
  };

  test('a ready report is noticed within 10 % of the time waited (at least 1 s), never more than one poll per 15 s', () => {
    for (const [elapsed, delay] of pollsOver(45 * 60_000).delays) {
      assert.ok(delay <= Math.max(1000, elapsed * 0.1), `${delay} ms after ${elapsed} ms`);
      assert.ok(delay <= 15_000);
    }
    assert.equal(nextPollDelay(15_000, 60 * 60_000), 15_000);
  });

  test('a 45-minute wait sends about 200 requests, a 10-minute one about 60', () => {
    const long = pollsOver(45 * 60_000).polls;
    assert.ok(long >= 180 && long <= 230, `${long} polls in 45 minutes`);
    const medium = pollsOver(10 * 60_000).polls;
    assert.ok(medium >= 40 && medium <= 80, `${medium} polls in 10 minutes`);
  });

  test('end to end: a report ready after 10 minutes is noticed within a minute and costs under 80 polls', async () => {
    const clock = fakeClock();
    const sandbox = await openSandbox({ reportDelayMs: 10 * 60_000, now: clock.now });
    try {
      const from = sandbox.requests.length;
      const out = await runCli(['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-02', '--wait', '--quiet'], {
        sandbox,
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(out.code, 0, out.stderr);
      const polls = apiRequests(sandbox, from).filter((r) => r.method === 'GET').length;
      assert.ok(polls <= 80, `${polls} polls`);
      assert.ok(clock.slept.reduce((a, b) => a + b, 0) <= 10 * 60_000 * 1.1, 'noticed within 10 % of the wait');
    } finally {
      await sandbox.close();
    }
  });
});
