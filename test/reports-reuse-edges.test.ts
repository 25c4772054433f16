/**
 * `reports create --reuse` against a reports service of our own script (issue 48 item 2; round 5,
 * items 5, 6 and 14): a ledger id the service now gives to another report is not reused; after a
 * lost answer only a report that was not listed before the POST is adopted; runs at once make one
 * report; a 2xx that names no id says the report may have been created.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { runCli, type RunOptions } from './helpers.js';
import { scriptedApi, type ScriptedApi, type ScriptedReply } from './scripted-server.js';

/** A report the scripted service holds. */
interface Stored {
  id: string;
  account: string;
  from: string;
  to: string;
}

interface ReportsService extends ScriptedApi {
  reports: Stored[];
  posts(): number;
}

/**
 * Reports by account: the list, each record (dates and target), and a POST that makes the next
 * report (70001, 70002, …) unless `makes` says not, answered by `answer` (undefined: it replied).
 */
async function reportsService(
  reports: Stored[],
  answer: (made: Stored, res: ServerResponse, post: number) => ScriptedReply | undefined = (made) => ({ json: { report: { id: made.id, url: 'x' } } }),
  makes: (post: number) => boolean = () => true,
): Promise<ReportsService> {
  let posted = 0;
  const api = await scriptedApi((request, res) => {
    const url = new URL(request.url, 'http://x');
    if (request.method === 'POST') {
      posted++;
      const body = JSON.parse(request.body) as { account: number; date_from: string; date_to: string };
      const made = { id: String(70000 + posted), account: String(body.account), from: body.date_from, to: body.date_to };
      if (makes(posted)) reports.push(made);
      return answer(made, res, posted);
    }
    if (url.pathname === '/v1.1/reports') {
      const listed = reports.filter((one) => one.account === url.searchParams.get('account'));
      return { json: { reports: listed.map((one) => ({ id: one.id, url: 'x' })), paging: { next_page: null } } };
    }
    const found = reports.find((one) => url.pathname === `/v1.1/reports/${one.id}`);
    if (!found) return { status: 404, json: { status: 'error', message: 'not found' } };
    const record = {
      id: found.id,
      url: `x/${found.id}`,
      name: 'n',
      date_from: found.from,
      date_to: found.to,
      account: { id: Number(found.account), url: 'x' },
    };
    return { json: { report: record } };
  });
  return { ...api, reports, posts: () => posted };
}

/** The answer of a POST that is lost: the connection closes after the request arrived. */
function lost(_made: Stored, res: ServerResponse): undefined {
  res.socket?.destroy();
  return undefined;
}

let config: string;
beforeEach(async () => {
  config = await mkdtemp(join(tmpdir(), 'carectl-reuse-edges-'));
});
afterEach(() => rm(config, { recursive: true, force: true }));

function cli(service: ScriptedApi, args: string[], options: RunOptions = {}): ReturnType<typeof runCli> {
  return runCli(args, {
    ...options,
    env: { CARECTL_BASE_URL: service.baseUrl, CARECTL_USER: 'bot', CARECTL_PASSWORD: 'scripted-secret', XDG_CONFIG_HOME: config },
  });
}

const CREATE = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--format', 'csv'];
const REUSE_LINE = 'carectl reports create --account 1001 --from 2026-06-01 --to 2026-06-07 --date-type created_date --format csv --reuse';
const ledgerFile = (): string => join(config, 'carectl', 'reports.json');

describe('reports create --reuse: the report is checked, not the ledger trusted (issue 48 item 2)', () => {
  test('a ledger id the service now gives to a report of other dates is not reused: a new one is made, with a notice', async () => {
    const service = await reportsService([]);
    try {
      const first = await cli(service, [...CREATE, '--reuse']);
      assert.equal(first.stdout, '70001\n', first.stderr);
      // The service was reset: 70001 is now another account's report of another day.
      service.reports[0] = { id: '70001', account: '1001', from: '2026-11-21', to: '2026-11-21' };
      const again = await cli(service, [...CREATE, '--reuse']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, '70002\n');
      assert.equal(
        again.stderr,
        'report 70001, noted for these parameters, is now account 1001 2026-11-21..2026-11-21 at the service (was it reset?): not reusing it (--reuse)\n',
      );
      assert.equal(service.posts(), 2);
      // The one made in its place is reused next time.
      const third = await cli(service, [...CREATE, '--reuse']);
      assert.equal(third.stdout, '70002\n');
      assert.equal(service.posts(), 2);
    } finally {
      await service.close();
    }
  });
});

describe('reports create after a lost POST answer adopts only a report listed since (round 5, item 5)', () => {
  const sixty = (): Stored => ({ id: '60', account: '1001', from: '2026-06-01', to: '2026-06-07' });

  /** Report 60 listed already; the first POST's answer is lost, later ones answered (and listed). */
  const firstPostLost = (): ReturnType<typeof reportsService> =>
    reportsService(
      [sixty()],
      (made, res, post) => (post === 1 ? lost(made, res) : { json: { report: { id: made.id, url: 'x' } } }),
      (post) => post > 1,
    );

  test('--reuse: report 60, of the same dates but listed before the POST, is not taken; nothing new is listed, so the POST goes again', async () => {
    const service = await firstPostLost();
    try {
      const result = await cli(service, [...CREATE, '--reuse']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '70002\n');
      assert.match(result.stderr, /the report may have been created all the same, but no such report is listed: sending it again \(--reuse\)\n$/);
      assert.equal(service.posts(), 2);
    } finally {
      await service.close();
    }
  });

  test('--reuse: the report the lost POST made is adopted, not the older one of the same dates', async () => {
    const service = await reportsService([sixty(), { id: '90000', account: '1001', from: '2026-06-01', to: '2026-06-07' }], lost);
    try {
      const result = await cli(service, [...CREATE, '--reuse']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '70001\n');
      assert.equal(service.posts(), 1);
    } finally {
      await service.close();
    }
  });

  test('without --reuse: the --reuse line it prints does not take report 60 either', async () => {
    const service = await firstPostLost();
    try {
      const failed = await cli(service, CREATE);
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, new RegExp(`the report may have been created all the same: pick it up with: ${REUSE_LINE}\\n$`));
      const picked = await cli(service, REUSE_LINE.split(' ').slice(1));
      assert.equal(picked.code, 0, picked.stderr);
      assert.equal(picked.stdout, '70002\n');
      assert.equal(service.posts(), 2);
    } finally {
      await service.close();
    }
  });

  test('an unclear POST noted without what was listed before it (an older ledger): a report of its dates is not taken, exit 1', async () => {
    const service = await firstPostLost();
    try {
      await cli(service, CREATE);
      const ledger = JSON.parse(await readFile(ledgerFile(), 'utf8')) as { reports: Array<Record<string, unknown>> };
      for (const entry of ledger.reports) delete entry.before;
      await writeFile(ledgerFile(), JSON.stringify(ledger));
      const picked = await cli(service, REUSE_LINE.split(' ').slice(1));
      assert.equal(picked.code, 1);
      assert.equal(picked.stdout, '');
      assert.match(
        picked.stderr,
        /report 60 has these parameters, but carectl cannot tell whether the POST that failed made it: the report may have been created; look with carectl reports list --account 1001 \(the next --reuse run makes a new one\)\n$/,
      );
      const next = await cli(service, REUSE_LINE.split(' ').slice(1));
      assert.equal(next.code, 0, next.stderr);
      assert.equal(next.stdout, '70002\n');
      assert.equal(service.posts(), 2);
    } finally {
      await service.close();
    }
  });
});

describe('reports create answered 2xx without a report id (round 5, item 14)', () => {
  const noId = (): ScriptedReply => ({ status: 201, json: { report: { url: 'x' } } });

  test('without --reuse: exit 1, the report may have been created, and the --reuse line, which picks it up', async () => {
    const service = await reportsService([], noId);
    try {
      const result = await cli(service, CREATE);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, new RegExp(`has no id; the report may have been created all the same: pick it up with: ${REUSE_LINE}\\n$`));
      const picked = await cli(service, REUSE_LINE.split(' ').slice(1));
      assert.equal(picked.code, 0, picked.stderr);
      assert.equal(picked.stdout, '70001\n');
      assert.equal(service.posts(), 1);
    } finally {
      await service.close();
    }
  });

  test('--reuse: the report is found in the list and used; one that is not listed is not sent again (exit 1)', async () => {
    const service = await reportsService([], noId);
    try {
      const result = await cli(service, [...CREATE, '--reuse']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '70001\n');
      assert.equal(service.posts(), 1);
    } finally {
      await service.close();
    }
    const unlisted = await reportsService([], noId, () => false);
    try {
      const result = await cli(unlisted, ['reports', 'create', '--account', '1002', '--from', '2026-06-01', '--to', '2026-06-07', '--reuse']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /has no id; the report may have been created all the same: pick it up with: .* --reuse\n$/);
      assert.equal(unlisted.posts(), 1);
    } finally {
      await unlisted.close();
    }
  });
});

describe('reports create --reuse runs at once (round 5, item 6)', () => {
  test('three runs with the same parameters at once make one report, and all three print it', async () => {
    const service = await reportsService([]);
    // The lock's wait: a short real pause (the runs take turns), on the real clock.
    const sleep = (_ms: number, signal?: AbortSignal): Promise<void> => new Promise((resolve) => (signal?.aborted ? resolve() : setTimeout(resolve, 5)));
    try {
      const runs = await Promise.all([1, 2, 3].map(() => cli(service, [...CREATE, '--reuse'], { sleep })));
      for (const run of runs) assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(
        runs.map((run) => run.stdout),
        ['70001\n', '70001\n', '70001\n'],
      );
      assert.equal(service.posts(), 1);
    } finally {
      await service.close();
    }
  });
});
