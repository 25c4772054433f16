/**
 * A live night (`carectl sandbox --live RATE`, startSandbox's `live`): new conversations and
 * messages RATE a minute on the sandbox's clock, seen by the requests after they are due, with
 * newest_sort_date moved and the threads kept; no real waits, the clock is advanced.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { fakeClock, freePort, runCli, sandboxEnv } from './helpers.js';

const MINUTE = 60_000;
const START = Date.UTC(2026, 5, 30, 12, 0, 0);

async function ndjson(sandbox: Sandbox, argv: string[], now: () => number): Promise<Array<Record<string, unknown>>> {
  const result = await runCli([...argv, '-o', 'ndjson'], { env: sandboxEnv(sandbox), now });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout === ''
    ? []
    : result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The conversations and their sort dates and item counts, as the sandbox holds them. */
const stateOf = (sandbox: Sandbox): string[] => sandbox.data.conversations.map((c) => `${c.id} ${c.status} ${c.oldestMs} ${c.newestMs} ${c.itemCount}`);

describe('sandbox live night', () => {
  it('plays the same night whatever the requests in between: each event is due at its own time', async () => {
    const [a, b] = [fakeClock(START), fakeClock(START)];
    const [stepped, direct] = await Promise.all([
      startSandbox({ now: a.now, live: 90, anchor: '2026-06-30' }),
      startSandbox({ now: b.now, live: 90, anchor: '2026-06-30' }),
    ]);
    try {
      for (let minute = 0; minute < 4; minute++) {
        a.advance(MINUTE);
        await ndjson(stepped, ['tags', 'list'], a.now);
      }
      b.advance(4 * MINUTE);
      await ndjson(direct, ['tags', 'list'], b.now);
      assert.deepEqual(stateOf(stepped), stateOf(direct));
      assert.equal(stepped.data.conversations.filter((c) => c.newestMs > START).length > 100, true);
    } finally {
      await Promise.all([stepped.close(), direct.close()]);
    }
  });

  it('a list and a thread show what came: new conversations first by newest_sort_date, their first message', async () => {
    const clock = fakeClock(START);
    const sandbox = await startSandbox({ now: clock.now, live: 60, anchor: '2026-06-30', conversations: 200 });
    try {
      const newest = async (): Promise<unknown[]> =>
        (
          await ndjson(sandbox, ['conversations', 'list', '--status', 'unread', '--sort', '-newest_sort_date', '--limit', '3', '--fields', 'id'], clock.now)
        ).map((row) => row['id']);
      const before = await newest();
      clock.advance(3 * MINUTE);
      const after = await newest();
      // 180 events, one a second: the last of them at 12:03:00.
      const byNewest = sandbox.data.conversations
        .filter((conversation) => conversation.status === 'unread')
        .sort((a, b) => b.newestMs - a.newestMs || b.seq - a.seq);
      assert.deepEqual(
        after,
        byNewest.slice(0, 3).map((conversation) => conversation.id),
      );
      assert.equal(Math.max(...sandbox.data.conversations.map((conversation) => conversation.newestMs)), START + 3 * MINUTE);
      assert.notDeepEqual(after, before);
      const born = sandbox.data.conversations.filter((conversation) => conversation.oldestMs > START);
      assert.ok(born.length > 30, `${born.length} new conversations`);
      const { id } = born[0]!;
      const content = await ndjson(sandbox, ['conversations', 'content', id, '--columns', 'conversation_id,created_date'], clock.now);
      assert.deepEqual(content[0], { conversation_id: id, created_date: new Date(born[0]!.oldestMs).toISOString().slice(0, 19) });
      const listed = await ndjson(sandbox, ['conversations', 'list', '--status', 'unread', '--fields', 'id'], clock.now);
      assert.ok(born.every((conversation) => listed.some((row) => row['id'] === conversation.id)));
    } finally {
      await sandbox.close();
    }
  });

  it('--state: the next run prints what came and moved since, each once', async () => {
    const clock = fakeClock(START);
    const sandbox = await startSandbox({ now: clock.now, live: 30, anchor: '2026-06-30', conversations: 200 });
    const folder = await mkdtemp(join(tmpdir(), 'carectl-live-'));
    const state = join(folder, 'conversations.state');
    try {
      const run = (): Promise<Array<Record<string, unknown>>> => ndjson(sandbox, ['conversations', 'list', '--state', state, '--fields', 'id'], clock.now);
      const first = await run();
      assert.equal(first.length, sandbox.data.conversations.length);
      const seen = new Map(sandbox.data.conversations.map((conversation) => [conversation.id, conversation.newestMs]));
      // A second past the last event: a record dated the very second a run starts may move after
      // it was read in that second, and would rightly come again.
      clock.advance(4 * MINUTE + 1000);
      await ndjson(sandbox, ['tags', 'list'], clock.now);
      const moved = sandbox.data.conversations
        .filter((conversation) => seen.get(conversation.id) !== conversation.newestMs)
        .map((conversation) => conversation.id);
      assert.ok(moved.length > 40, `${moved.length} new or moved`);
      const second = (await run()).map((row) => row['id']);
      assert.deepEqual([...second].sort(), [...moved].sort());
      assert.deepEqual(await run(), [], 'nothing came since');
    } finally {
      await Promise.all([sandbox.close(), rm(folder, { recursive: true, force: true })]);
    }
  });

  it('carectl sandbox --live RATE says so in its banner; a bad RATE is one line naming the range, exit 2', async () => {
    const controller = new AbortController();
    let output = '';
    let shown!: () => void;
    const bannerOut = new Promise<void>((resolve) => (shown = resolve));
    const running = runCli(['sandbox', '--live', '60', '--conversations', '100'], {
      signal: controller.signal,
      onStdout: (chunk) => {
        output += chunk;
        if (output.includes('\n\n')) shown();
      },
    });
    await Promise.race([bannerOut, running]);
    controller.abort();
    await running;
    assert.match(
      output,
      /^carectl sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(report downloads on http:\/\/127\.0\.0\.1:\d+\)\nlive: 60 new conversations and messages a minute\nuser: /,
    );
    for (const rate of ['0', '60001', 'fast', '1.5']) {
      const bad = await runCli(['sandbox', '--live', rate]);
      assert.equal(bad.code, 2, rate);
      assert.equal(bad.stdout, '');
      assert.match(bad.stderr, /^carectl: .*--live.*1.*60000.*\n$/, rate);
    }
  });
});

describe('a restarted sandbox (README: The sandbox)', () => {
  it('serves its demo data as it began and gives the lost ids out again; --reuse and --state carry on against it', async () => {
    const port = await freePort();
    const folder = await mkdtemp(join(tmpdir(), 'carectl-restart-'));
    const env = (sandbox: Sandbox): Record<string, string> => ({ ...sandboxEnv(sandbox), XDG_CONFIG_HOME: join(folder, 'config') });
    const state = join(folder, 'conversations.state');
    const cli = async (sandbox: Sandbox, argv: string[], now: () => number, code = 0): Promise<{ stdout: string; stderr: string }> => {
      const result = await runCli([...argv, '-o', 'tsv'], { env: env(sandbox), now });
      assert.equal(result.code, code, `${argv.join(' ')}: ${result.stderr}`);
      return result;
    };
    const report = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-01', '--format', 'csv', '--reuse'];
    const thread = ['conversations', 'content', '500601', '--columns', 'id,created_date,text', '--no-header'];
    const options = { port, live: 60, anchor: '2026-06-30', conversations: 600 };

    const a = fakeClock(START);
    const before = await startSandbox({ ...options, now: a.now });
    let running = before;
    try {
      await cli(before, ['conversations', 'list', '--state', state, '--fields', 'id'], a.now);
      a.advance(3 * MINUTE);
      const status = (await cli(before, ['conversations', 'get', '500004', '--columns', 'id,status', '--no-header'], a.now)).stdout;
      await cli(
        before,
        ['conversations', 'update', '500004', '--status', status.includes('on_hold') ? 'closing' : 'on_hold', '--close-reason', 'resolved'],
        a.now,
      );
      assert.notEqual((await cli(before, ['conversations', 'get', '500004', '--columns', 'id,status', '--no-header'], a.now)).stdout, status);
      const made = (await cli(before, report, a.now)).stdout;
      const lived = (await cli(before, thread, a.now)).stdout;
      await before.close();

      // Started again an hour later, with the same command.
      const b = fakeClock(START + 60 * MINUTE);
      const after = await startSandbox({ ...options, now: b.now });
      running = after;
      assert.equal(after.baseUrl, before.baseUrl);
      assert.equal(
        (await cli(after, ['conversations', 'get', '500004', '--columns', 'id,status', '--no-header'], b.now)).stdout,
        status,
        'the update is undone',
      );
      await cli(after, ['reports', 'get', made.trim()], b.now, 4);
      await cli(after, ['conversations', 'get', '500601'], b.now, 4);
      // Another report takes the lost one's id; --reuse makes the lost one anew.
      const other = await cli(after, ['reports', 'create', '--account', '1002', '--from', '2026-05-01', '--to', '2026-05-02', '--format', 'json'], b.now);
      assert.equal(other.stdout, made);
      const anew = await cli(after, report, b.now);
      assert.equal(anew.stdout, `${Number(made) + 1}\n`);

      // The live night again from the start: 500601 first, the same thread at the new times.
      b.advance(3 * MINUTE);
      const hour = (row: string): string =>
        row.replace(/\t(\d{4}-\d\d-\d\dT[\d:]+)\t/, (_, date: string) => `\t${new Date(Date.parse(`${date}Z`) + 60 * MINUTE).toISOString().slice(0, 19)}\t`);
      assert.equal((await cli(after, thread, b.now)).stdout, lived.split('\n').map(hour).join('\n'));
      const since = (await cli(after, ['conversations', 'list', '--state', state, '--fields', 'id', '--no-header'], b.now)).stdout.trimEnd().split('\n');
      assert.ok(since.includes('500601'), 'the incremental export brings what came since the restart');

      const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
      const section = readme.slice(readme.indexOf('## The sandbox')).replace(/\s+/g, ' ');
      assert.ok(section.includes(`the next report made is ${made.trim()} again`), 'README names the report id given out again');
      assert.ok(section.includes('conversation 500601 first, at the new times'), 'README names the live conversation id given out again');
    } finally {
      await Promise.all([running.close(), rm(folder, { recursive: true, force: true })]);
    }
  });
});
