/**
 * Resume tokens: a list that stops (a hard failure, --limit) prints a token, and the run resumed
 * with it adds up to the clean run exactly, in every paging style. The CLI runs against the
 * sandbox with its fault injection; every wait goes through a fake sleep.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, runCli, sandboxOnClock, type RunResult } from './helpers.js';

// ---- the CLI against the sandbox ----

let sandbox: Sandbox;
const { clock: cliClock, cli } = sandboxOnClock({ conversations: 120 }, (opened) => (sandbox = opened));
const runInSandbox = cli;
/** The same, with stdout a regular file: writers gather lines and write a page at a time. */
const cliIntoFile = (argv: string[]): Promise<RunResult> => runCli(argv, { sandbox, now: cliClock.now, sleep: cliClock.sleep, stdoutFile: true });
/** A run, and how many writes its stdout received. */
async function countingWrites(argv: string[], stdoutFile: boolean): Promise<RunResult & { writes: number }> {
  let writes = 0;
  const result = await runCli(argv, { sandbox, now: cliClock.now, sleep: cliClock.sleep, stdoutFile, onStdout: () => writes++ });
  return { ...result, writes };
}

// ---- resumable lists ----

/** Output that a failure cut short must still be whole lines (ndjson: each one a record). */
function assertWholeLines(stdout: string, format: 'ndjson' | 'tsv'): void {
  if (stdout === '') return;
  assert.ok(stdout.endsWith('\n'), 'output ends with a complete line');
  const lines = stdout.slice(0, -1).split('\n');
  if (format === 'ndjson') for (const line of lines) JSON.parse(line);
  else for (const line of lines) assert.equal(line.split('\t').length, lines[0]!.split('\t').length, `a whole row: ${line}`);
}

/** The tsv header line, when the output starts with one. */
const header = (stdout: string, format: 'ndjson' | 'tsv'): string => (format === 'tsv' ? stdout.slice(0, stdout.indexOf('\n') + 1) : '');

/**
 * Runs `args` clean, then with the list failing hard after `failAfterPages` pages, then resumed
 * with the printed token: the two runs together must be exactly the clean run.
 */
async function assertResumes(args: string[], failAfterPages: number, format: 'ndjson' | 'tsv' = 'ndjson', cli = runInSandbox): Promise<void> {
  const argv = [...args, '-o', format];
  const full = await cli(argv);
  assert.equal(full.code, 0, full.stderr);

  sandbox.setFaults({ failListAfterPages: failAfterPages });
  const mark = sandbox.requests.length;
  const first = await cli([...argv, '--retries', '1']);
  const what = `${args.join(' ')} failing after ${failAfterPages} pages`;
  assert.equal(first.code, 1, what);
  assert.equal(apiRequests(sandbox, mark).filter((r) => r.status === 500).length, 2, `${what}: the failing page was tried twice`);
  assert.match(first.stderr, /^carectl: .*\(HTTP 500\); the list stopped after \d+ records?: to continue, run the same command with --resume \S+$/m);
  const token = /--resume (\S+)/.exec(first.stderr)?.[1];
  assert.ok(token, `${what}: a resume token on stderr`);
  assertWholeLines(first.stdout, format);
  if (failAfterPages > 0) assert.notEqual(first.stdout.slice(header(first.stdout, format).length), '', `${what}: some records came before the failure`);

  sandbox.setFaults(undefined);
  const rest = await cli([...argv, '--resume', token]);
  assert.equal(rest.code, 0, rest.stderr);
  assert.notEqual(rest.stdout, '', `${what}: records remained`);
  // Appended with >>, the two runs make the clean run: one header, no record lost or repeated.
  assert.equal(first.stdout + rest.stdout, full.stdout, `${what}: nothing lost or repeated`);
}

describe('resumable lists: a hard failure, then --resume, gives the clean run exactly', () => {
  test('skip paging (tags, queues)', async () => {
    await assertResumes(['tags', 'list', '--page-size', '10'], 3);
    await assertResumes(['queues', 'list', '--page-size', '7'], 4, 'tsv');
  });

  test('a list that fails before its first record prints no token: the same command starts it again', async () => {
    for (const argv of [
      ['tags', 'list', '-o', 'ndjson'],
      ['queues', 'list', '-o', 'tsv'],
      ['conversations', 'list', '-o', 'csv'],
    ]) {
      sandbox.setFaults({ failListAfterPages: 0 });
      const failed = await cli([...argv, '--retries', '0']);
      sandbox.setFaults(undefined);
      assert.equal(failed.code, 1);
      assert.equal(failed.stdout, '');
      assert.match(failed.stderr, /^carectl: [^\n]*\(HTTP 500\)\n$/);
      assert.doesNotMatch(failed.stderr, /--resume/);
    }
  });

  test('a token holds the cursor, not the whole address', async () => {
    const argv = ['conversations', 'list', '--fields', 'status,tags,author,channels,assigned_to', '-o', 'ndjson', '--page-size', '10'];
    const full = await cli(argv);
    const count = full.stdout.split('\n').length - 1;
    assert.ok(count > 30, `${count} records`);
    const first = await cli([...argv, '--limit', String(count - 3)]);
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    // A keyset cursor inside a slice, with the pair of sort-date bounds it carries (a whole address was 250–330),
    // and the ids of its page's records written, in place of their count.
    const fields = Buffer.from(token, 'base64url').toString().split('|');
    assert.ok(fields.slice(0, 10).join('|').length <= 90 && !fields.join('|').includes('fields'), `${token.length} characters: ${fields.join('|')}`);
    const rest = await cli([...argv, '--resume', token]);
    assert.equal(first.stdout + rest.stdout, full.stdout);
  });

  test('into a regular file, where lines go out a page at a time: the same bytes, one write a page, and a failure resumes exactly', async () => {
    for (const format of ['ndjson', 'tsv'] as const) {
      const argv = ['conversations', 'list', '--fields', 'status,tags', '--page-size', '10', '-o', format];
      const [piped, filed] = [await countingWrites(argv, false), await countingWrites(argv, true)];
      assert.equal(filed.stdout, piped.stdout);
      const records = piped.stdout.split('\n').length - 1 - (format === 'tsv' ? 1 : 0);
      assert.equal(piped.writes, records, 'one write a record into a pipe (the header goes with the first)');
      // Pages of 10 in each of the union's two queries: the second query's first page starts afresh.
      assert.ok(filed.writes <= Math.ceil(records / 10) + 1, `one write a page into a file: ${filed.writes} writes for ${records} records`);
      await assertResumes(['conversations', 'list', '--fields', 'status,tags', '--page-size', '10', '--parallel', '1'], 3, format, cliIntoFile);
    }
  });

  test('offset paging (users)', async () => {
    await assertResumes(['users', 'list', '--page-size', '25'], 2);
    await assertResumes(['users', 'list', '--page-size', '25'], 4, 'tsv');
  });

  test('token paging (annotation-types, annotations)', async () => {
    await assertResumes(['annotation-types', 'list', '--page-size', '4'], 2);
    await assertResumes(['annotations', 'list', '--page-size', '20'], 3, 'tsv');
  });

  test('no paging, in phases (authors list by id chunks)', async () => {
    const ids = sandbox.data.authors.slice(0, 30).map((a) => a.id);
    await assertResumes(['authors', 'list', ...ids, '--page-size', '7'], 2);
    await assertResumes(['authors', 'list', ...ids, '--page-size', '7'], 4, 'tsv');
  });

  test('the two-phase conversation union, failing in the first and in the second phase (one request at a time)', async () => {
    const mark = sandbox.requests.length;
    assert.equal((await cli(['conversations', 'list', '--page-size', '10', '-o', 'ndjson', '--parallel', '1'])).code, 0);
    const pages = apiRequests(sandbox, mark).map((r) => r.url);
    const firstPhase = pages.filter((url) => url.includes('is_priority=true')).length;
    assert.ok(firstPhase >= 2 && pages.length - firstPhase >= 2, 'both phases span several pages');
    for (const failAfter of [1, firstPhase, firstPhase + 1]) await assertResumes(['conversations', 'list', '--page-size', '10', '--parallel', '1'], failAfter);
    await assertResumes(['conversations', 'list', '--page-size', '10', '--parallel', '1'], firstPhase + 1, 'tsv');
  });

  test('--limit prints the same kind of token: batches of the same command add up to the clean run', async () => {
    const list = ['conversations', 'list', '--page-size', '10'];
    const ndjson = await cli([...list, '-o', 'ndjson']);
    const priority = ndjson.stdout.split('\n').filter((line) => line.includes('"is_priority":true')).length;
    // csv batches appended with >> make one file with one header.
    for (const format of ['ndjson', 'csv']) {
      const argv = [...list, '-o', format];
      const full = await cli(argv);
      // One batch that ends inside the first phase, one exactly at its end, one that crosses it.
      for (const limit of [7, priority, priority + 4]) {
        let joined = '';
        let token: string | undefined;
        let batches = 0;
        do {
          const batch = await cli([...argv, '--limit', String(limit), ...(token ? ['--resume', token] : [])]);
          assert.equal(batch.code, 0, batch.stderr);
          joined += batch.stdout;
          token = /^stopped at --limit \d+; .*--resume (\S+)$/m.exec(batch.stderr)?.[1];
          batches++;
        } while (token && batches < 100);
        assert.equal(joined, full.stdout, `${format} --limit ${limit}`);
        assert.equal(batches, Math.ceil(120 / limit), `${format} --limit ${limit}: no empty last batch`);
      }
    }
  });

  test('a csv run continuing another format, or a run without its header, starts with the header', async () => {
    const csv = ['tags', 'list', '--page-size', '10', '-o', 'csv'];
    const full = await cli(csv);
    const header = full.stdout.slice(0, full.stdout.indexOf('\r\n') + 2);
    const fromNdjson = await cli(['tags', 'list', '--page-size', '10', '-o', 'ndjson', '--limit', '3']);
    const fromTsv = await cli(['tags', 'list', '--page-size', '10', '-o', 'tsv', '--limit', '3']);
    const headless = await cli([...csv, '--limit', '3', '--no-header']);
    for (const [what, first] of [
      ['ndjson', fromNdjson],
      ['tsv', fromTsv],
      ['csv --no-header', headless],
    ] as const) {
      const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
      const rest = await cli([...csv, '--resume', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.ok(rest.stdout.startsWith(header), `after ${what}: ${rest.stdout.slice(0, 40)}`);
    }
  });

  test('a resumed run that fails again hands on a token that still knows the header was printed', async () => {
    const argv = ['tags', 'list', '--page-size', '10', '-o', 'csv', '--retries', '0'];
    const full = await cli(argv);
    let joined = '';
    let token: string | undefined;
    for (const failAfterPages of [2, 1, undefined]) {
      sandbox.setFaults(failAfterPages === undefined ? undefined : { failListAfterPages: failAfterPages });
      const run = await cli([...argv, ...(token ? ['--resume', token] : [])]);
      assert.equal(run.code, failAfterPages === undefined ? 0 : 1, run.stderr);
      joined += run.stdout;
      token = /--resume (\S+)$/m.exec(run.stderr)?.[1];
    }
    assert.equal(joined, full.stdout);
    assert.equal(joined.split('\r\n').filter((line) => line.startsWith('id,')).length, 1, 'one header');
  });

  test('a run resumed after --limit asks for pages of its own size, and adds up to the clean run', async () => {
    const argv = ['tags', 'list', '-o', 'ndjson'];
    const full = await cli(argv);
    const first = await cli([...argv, '--limit', '2']);
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    const mark = sandbox.requests.length;
    const rest = await cli([...argv, '--resume', token]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(first.stdout + rest.stdout, full.stdout);
    // The 68 tags left come in pages of 50, not the 34 pages of 2 that the first run's size would take.
    const sizes = apiRequests(sandbox, mark).map((r) => new URL(r.url, 'http://x').searchParams.get('page_size'));
    assert.deepEqual(sizes, ['50', '50']);
  });

  test('authors list continues a --limit run with any --limit, or none', async () => {
    const ids = sandbox.data.authors.slice(0, 5).map((a) => a.id);
    const argv = ['authors', 'list', ...ids, '-o', 'ndjson'];
    const full = await cli(argv);
    const first = await cli([...argv, '--limit', '1']);
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    for (const limit of [[], ['--limit', '10']]) {
      const rest = await cli([...argv, ...limit, '--resume', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(first.stdout + rest.stdout, full.stdout, `resumed with ${limit.join(' ') || 'no --limit'}`);
    }
  });

  test('a list with relative dates, resumed after midnight, continues the same dates', async () => {
    const evening = Date.UTC(2026, 5, 29, 23, 50);
    const nextMorning = evening + 20 * 60_000;
    const argv = ['conversations', 'list', '--newest', '60d..today', '--page-size', '10', '-o', 'ndjson'];
    const full = await runCli(argv, { sandbox, now: () => evening });
    const first = await runCli([...argv, '--limit', '15'], { sandbox, now: () => evening });
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    const mark = sandbox.requests.length;
    const rest = await runCli([...argv, '--resume', token], { sandbox, now: () => nextMorning });
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(first.stdout + rest.stdout, full.stdout);
    for (const { url } of apiRequests(sandbox, mark)) assert.match(url, /newest_sort_date_gte=2026-04-30&.*newest_sort_date_lt=2026-06-30/, url);
  });

  test('a token from another command is refused before anything is sent', async () => {
    sandbox.setFaults({ failListAfterPages: 1 });
    const failed = await cli(['tags', 'list', '--page-size', '10', '--retries', '0']);
    const token = /--resume (\S+)/.exec(failed.stderr)?.[1] as string;
    sandbox.setFaults(undefined);
    const mark = sandbox.requests.length;
    const result = await cli(['queues', 'list', '--page-size', '10', '--resume', token]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /different command/);
    assert.equal(apiRequests(sandbox, mark).length, 0);
  });

  test('a token from a query without --channel is refused before the channel is looked up; one with it resumes', async () => {
    const tokenOf = (stderr: string): string => /--resume (\S+)$/m.exec(stderr)?.[1] as string;
    const unread = ['conversations', 'list', '--status', 'unread', '-o', 'ndjson', '--page-size', '5'];
    const alone = tokenOf((await cli([...unread, '--limit', '5'])).stderr);
    const mark = sandbox.requests.length;
    const refused = await cli([...unread, '--channel', '202', '--resume', alone]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^carectl: --resume: the token belongs to a different command/);
    assert.equal(apiRequests(sandbox, mark).length, 0, 'not even the channel look-up');
    // The same query with the channel by name (resolved per run) and by id: its token is taken.
    const name = sandbox.data.channels.find((channel) => channel.id === '202')?.name as string;
    const withChannel = tokenOf((await cli([...unread, '--channel', name, '--limit', '1'])).stderr);
    for (const channel of [name, '202']) {
      const resumed = await cli([...unread, '--channel', channel, '--resume', withChannel]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.notEqual(resumed.stdout, '');
    }
  });
});
