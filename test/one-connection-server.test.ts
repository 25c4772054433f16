/**
 * A server that serves one connection at a time (Python's single-threaded http.server with
 * HTTP/1.1 keep-alive; test/one-connection-server.ts): a second connection waits, unanswered,
 * until the first closes. carectl opened one beside its idle first and waited for its keep-alive
 * timeout on every request (field test). Each command here gives what it gives against the
 * sandbox directly, and never has more connections waiting than it lets wait for a first answer (three).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { fakeClock, openSandbox, runCli, type RunResult } from './helpers.js';
import { OneConnectionServer } from './one-connection-server.js';

const CONVERSATIONS = 400;
/** Every conversation: pages of both priorities, and date slices at the default --parallel. */
const LIST = ['conversations', 'list', '-o', 'ndjson', '--fields', 'status,tags,author'];

/** Against a hang: a run that stalled would wait for real keep-alive timeouts, far past this. */
const GUARD = { timeout: 120_000 };

let direct: Sandbox;
before(async () => {
  direct = await openSandbox({ conversations: CONVERSATIONS });
});
after(() => direct.close());

/**
 * `argv` through a fresh one-connection front (its own sandbox, the same data), with what the
 * front saw; the addresses in its records name `origin` (the sandbox run directly) in place of the front.
 */
async function throughFront(
  argv: string[],
  origin: string,
  clock?: ReturnType<typeof fakeClock>,
): Promise<RunResult & { connections: number; mostWaiting: number }> {
  const front = await OneConnectionServer.open({ conversations: CONVERSATIONS, ...(clock && { now: clock.now }) });
  try {
    const result = await runCli(argv, { env: front.env, ...(clock && { now: clock.now, sleep: clock.sleep }) });
    const stdout = result.stdout.replaceAll(front.sandbox.publicUrl!, origin);
    return { ...result, stdout, connections: front.connections, mostWaiting: front.mostWaiting };
  } finally {
    await front.close();
  }
}

describe('a server that serves one connection at a time', GUARD, () => {
  test('--parallel 1: a list of several pages on one connection, reused; the same records as directly', async () => {
    const argv = [...LIST, '--parallel', '1'];
    const expected = await runCli(argv, { sandbox: direct });
    assert.equal(expected.code, 0, expected.stderr);
    assert.equal(expected.stdout.split('\n').length, CONVERSATIONS + 1);
    const result = await throughFront(argv, direct.baseUrl);
    assert.deepEqual({ code: result.code, stderr: result.stderr }, { code: 0, stderr: expected.stderr });
    assert.equal(result.stdout, expected.stdout);
    assert.equal(result.connections, 1);
    assert.equal(result.mostWaiting, 0);
  });

  test('the default --parallel: the same records, never more than three connections waiting', async () => {
    const expected = await runCli(LIST, { sandbox: direct });
    assert.equal(expected.code, 0, expected.stderr);
    const result = await throughFront(LIST, direct.baseUrl);
    assert.deepEqual({ code: result.code, stderr: result.stderr }, { code: 0, stderr: expected.stderr });
    assert.equal(result.stdout, expected.stdout);
    assert.ok(result.mostWaiting <= 3, `${result.mostWaiting} connections waited at once`);
  });

  test('get: the same record', async () => {
    const argv = ['conversations', 'get', '500002', '-o', 'json'];
    const expected = await runCli(argv, { sandbox: direct });
    assert.equal(expected.code, 0, expected.stderr);
    const result = await throughFront(argv, direct.baseUrl);
    assert.deepEqual(result, { ...expected, connections: 1, mostWaiting: 0 });
  });

  test('an update batch, at the default --parallel and at 1: the same result rows as directly', async () => {
    const listed = await runCli(['conversations', 'list', '-o', 'ndjson', '--fields', 'channels', '--limit', '40'], { sandbox: direct });
    // Not the channel the sandbox's key may not change (a 403 row, exit 3).
    const ids = listed.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; channels: Array<{ id: string }> })
      .filter((record) => !record.channels.some((channel) => channel.id === '204'))
      .map((record) => record.id)
      .slice(0, 24);
    for (const parallel of [[], ['--parallel', '1']]) {
      const argv = ['conversations', 'update', ...ids, '--status', 'on_hold', '--drop-inactive-tags', '-o', 'ndjson', ...parallel];
      const fresh = await openSandbox({ conversations: CONVERSATIONS });
      let expected: RunResult;
      try {
        expected = await runCli(argv, { sandbox: fresh });
      } finally {
        await fresh.close();
      }
      assert.equal(expected.code, 0, expected.stderr);
      assert.equal(expected.stdout.split('\n').length, ids.length + 1);
      assert.equal(expected.stderr, '');
      const result = await throughFront([...argv, '--verbose'], fresh.baseUrl);
      assert.deepEqual({ code: result.code, stdout: result.stdout }, { code: 0, stdout: expected.stdout });
      assert.ok(result.mostWaiting <= (parallel.length === 0 ? 3 : 0), `${result.mostWaiting} connections waited at once`);
      // Every request of a batch is answered, and the front never closes a connection: each one
      // after the first was served once carectl closed the one before, as it said.
      const closed = result.stderr.split('\n').filter((line) => line.startsWith('  connections: closed an idle one while another waits')).length;
      assert.equal(closed, result.connections - 1);
    }
  });

  test('reports create --download: the polls and the download on the one connection; the same file', async () => {
    const argv = ['--quiet', 'reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--format', 'csv', '--download', '-'];
    const clock = fakeClock();
    const fresh = await openSandbox({ conversations: CONVERSATIONS, now: clock.now });
    let expected: RunResult;
    try {
      expected = await runCli(argv, { sandbox: fresh, now: clock.now, sleep: clock.sleep });
    } finally {
      await fresh.close();
    }
    assert.equal(expected.code, 0, expected.stderr);
    assert.ok(expected.stdout.length > 0);
    const result = await throughFront(argv, fresh.baseUrl, fakeClock());
    assert.deepEqual(result, { ...expected, connections: 1, mostWaiting: 0 });
  });
});
