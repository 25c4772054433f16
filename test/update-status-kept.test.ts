/**
 * issue 49 (8): `conversations update` without --status re-tags without moving: a conversation
 * already on_hold or closing keeps its status (closing with its own close reason, or the one
 * --close-reason gives), read first; any other is exit 2 with nothing sent, since the service's
 * PATCH needs a status and sets only on_hold and closing. Against the sandbox, and scripted
 * services for what it does not do (a closing conversation with no close reason, a status that
 * changes between the check and the PATCH).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, freePort, openSandbox, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedRequest } from './scripted-server.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await openSandbox();
});
afterEach(() => sandbox.close());

const conversation = (id: string): Sandbox['data']['conversations'][number] => sandbox.data.byId.conversations.get(id)!;
const patchBodies = (from: number): unknown[] =>
  apiRequests(sandbox, from)
    .filter((r) => r.method === 'PATCH')
    .map((r) => JSON.parse(r.body!) as unknown);
const sent = (from: number): string[] => apiRequests(sandbox, from).map((r) => `${r.method} ${r.url.replace(/&?page_size=50/, '')}`);

// 500031 on_hold (order-feedback 7051), 500004 closing for no_response (7022, 7006, 7062), 500009 closing for spam (7055).
const KEPT = ['500031', '500004', '500009'];

describe('update without --status: a conversation on_hold or closing keeps it', () => {
  test('--add-tags by name: each keeps its status and close reason; rows, bodies and reads exact', async () => {
    assert.deepEqual(
      KEPT.map((id) => [conversation(id).status, conversation(id).close_reason]),
      [
        ['on_hold', null],
        ['closing', 'no_response'],
        ['closing', 'spam'],
      ],
      'the fixtures',
    );
    const from = sandbox.requests.length;
    const result = await runCli(['-o', 'ndjson', 'conversations', 'update', ...KEPT, '--add-tags', 'praise-follow-up', '--parallel', '1'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    const rows = [
      { id: '500031', ok: true, status: 'on_hold', tags: ['7051', '7005'], error: null },
      { id: '500004', ok: true, status: 'closing', tags: ['7022', '7006', '7062', '7005'], error: null },
      { id: '500009', ok: true, status: 'closing', tags: ['7055', '7005'], error: null },
    ];
    assert.equal(result.stdout, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
    assert.deepEqual(patchBodies(from), [
      { status: 'on_hold', tag_ids: ['7051', '7005'] },
      { status: 'closing', tag_ids: ['7022', '7006', '7062', '7005'], close_reason: 'no_response' },
      { status: 'closing', tag_ids: ['7055', '7005'], close_reason: 'spam' },
    ]);
    // The tags list, every status checked before anything is sent, then each id read again and sent.
    const each = (id: string): string[] => [`GET /v1.3/conversations/${id}?fields=tags%2Cstatus%2Cclose_reason`, `PATCH /v1.3/conversations/${id}`];
    assert.deepEqual(sent(from), [
      'GET /v1.3/tags?fields=name%2Cis_active',
      'GET /v1.3/tags?fields=name%2Cis_active&skip=50',
      ...KEPT.map((id) => `GET /v1.3/conversations/${id}?fields=status%2Cclose_reason`),
      ...KEPT.flatMap(each),
    ]);
    assert.deepEqual(
      KEPT.map((id) => [conversation(id).status, conversation(id).close_reason]),
      [
        ['on_hold', null],
        ['closing', 'no_response'],
        ['closing', 'spam'],
      ],
    );
  });

  test('--close-reason gives the closing ones a new one; --tags needs no tags read, only the status', async () => {
    const from = sandbox.requests.length;
    const result = await runCli(
      ['-o', 'ndjson', 'conversations', 'update', '500031', '500004', '--tags', '7006', '--close-reason', 'resolved', '--parallel', '1'],
      {
        sandbox,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(patchBodies(from), [
      { status: 'on_hold', tag_ids: ['7006'], close_reason: 'resolved' },
      { status: 'closing', tag_ids: ['7006'], close_reason: 'resolved' },
    ]);
    assert.ok(
      sent(from)
        .filter((line) => line.startsWith('GET /v1.3/conversations'))
        .every((line) => !line.includes('tags%2C')),
      sent(from).join('\n'),
    );
    assert.equal(conversation('500004').close_reason, 'resolved');
  });

  const TABLES: Record<number, string> = {
    60:
      'ID      OK    STATUS   TAGS                           RESULT\n' +
      '500031  true  on_hold  order-feedback,praise-follow…  ok\n' +
      '500004  true  closing  returns-question,fraud-reque…  ok\n' +
      '500009  true  closing  login-request,praise-follow-…  ok\n',
    80:
      'ID      OK    STATUS   TAGS                                               RESULT\n' +
      '500031  true  on_hold  order-feedback,praise-follow-up                    ok\n' +
      '500004  true  closing  returns-question,fraud-request,privacy-request,p…  ok\n' +
      '500009  true  closing  login-request,praise-follow-up                     ok\n',
    160:
      'ID      OK    STATUS   TAGS                                                             RESULT\n' +
      '500031  true  on_hold  order-feedback,praise-follow-up                                  ok\n' +
      '500004  true  closing  returns-question,fraud-request,privacy-request,praise-follow-up  ok\n' +
      '500009  true  closing  login-request,praise-follow-up                                   ok\n',
  };
  for (const [columns, expected] of Object.entries(TABLES)) {
    test(`a table at ${columns} columns: the status each kept`, async () => {
      const result = await runCli(['--no-color', 'conversations', 'update', ...KEPT, '--add-tags', 'praise-follow-up'], {
        sandbox,
        stdoutTTY: true,
        columns: Number(columns),
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, expected);
    });
  }
});

describe('update without --status: any other status is exit 2, nothing sent', () => {
  // 500007 unread, 500010 assigned, 500005 closed.
  const STOPPED =
    'carectl: --status not given: 500007 is unread, 500010 is assigned, 500005 is closed; only a conversation already on_hold or closing keeps its status (the service sets no other): give --status on_hold, or --status closing --close-reason R; nothing was sent\n';

  test('a batch with some that cannot keep theirs: exit 2 naming them, no row, no PATCH for any id', async () => {
    for (const argv of [
      ['conversations', 'update', '500031', '500007', '500004', '500010', '500005', '--add-tags', 'praise-follow-up'],
      ['-o', 'ndjson', 'conversations', 'update', '-', '--tags', ''],
      ['conversations', 'update', '-', '--remove-tags', '7006', '--dry-run'],
    ]) {
      const from = sandbox.requests.length;
      const stdin = '500031\n500007\n500004\n500010\n500005\n';
      const result = await runCli(argv, { sandbox, stdin });
      assert.equal(result.code, 2, argv.join(' '));
      assert.equal(result.stdout, '');
      assert.equal(result.stderr, STOPPED);
      assert.deepEqual(
        apiRequests(sandbox, from).filter((r) => r.method !== 'GET'),
        [],
      );
    }
    assert.equal(conversation('500007').status, 'unread');
  });

  test('Ctrl-C while the statuses are read: exit 130, nothing sent', async () => {
    const stop = new AbortController();
    stop.abort();
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', ...KEPT, '--tags', ''], { sandbox, signal: stop.signal });
    assert.equal(result.code, 130);
    assert.equal(result.stderr, 'carectl: interrupted while the conversations were read: nothing was sent\n');
    assert.equal(sandbox.requests.length, from);
  });

  test('past five, the message counts the rest', async () => {
    const unread = sandbox.data.conversations.filter((c) => c.status === 'unread' && Number(c.id) > 500003).slice(0, 7);
    const result = await runCli(['conversations', 'update', ...unread.map((c) => c.id), '--add-tags', '7005'], { sandbox });
    assert.equal(result.code, 2);
    const named = unread
      .slice(0, 5)
      .map((c) => `${c.id} is unread`)
      .join(', ');
    assert.match(result.stderr, new RegExp(`^carectl: --status not given: ${named} and 2 more; only`));
  });

  test('an id that cannot be read does not stop the others: its own row says why', async () => {
    const result = await runCli(['-o', 'csv', '--columns', 'id,ok,status,error.kind', 'conversations', 'update', '500031', '999999', '--add-tags', '7005'], {
      sandbox,
    });
    assert.equal(result.code, 4);
    assert.equal(result.stdout, 'id,ok,status,error.kind\r\n500031,true,on_hold,\r\n999999,false,,not_found\r\n');
  });

  test('the service unreachable while the statuses are read: every id a network row, nothing sent', async () => {
    const port = await freePort();
    const env = { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
    const ids = ['500031', '500004', '500009', '500016'];
    const result = await runCli(
      ['-o', 'csv', '--columns', 'id,ok,error.kind,error.message', 'conversations', 'update', ...ids, '--tags', '', '--parallel', '1'],
      {
        env,
        ...fakeClock(),
      },
    );
    assert.equal(result.code, 1);
    const why = 'not sent: the conversations could not be read: 3 network failures in a row: the service is unreachable';
    assert.equal(result.stdout, `id,ok,error.kind,error.message\r\n${ids.map((id) => `${id},false,network,${why}\r\n`).join('')}`);
    assert.equal(
      result.stderr,
      'carectl: nothing was sent (the conversations could not be read: 3 network failures in a row: the service is unreachable): 4 not sent, rows with error.kind network\n',
    );
  });
});

describe('update without --status: what the sandbox does not do', () => {
  /** A service whose conversation 1 is `status` with `closeReason` (for the first `reads` reads, then `later`). */
  async function service(status: string, closeReason: unknown, later = status, reads = 1) {
    let read = 0;
    return scriptedApi((request: ScriptedRequest) => {
      if (request.url.startsWith('/v1.3/tags')) return { json: { tags: [{ id: '5', url: 'x', name: 'five', is_active: true }], paging: {} } };
      if (request.method === 'PATCH') return { json: { conversation: { id: '1', url: 'x' } } };
      read++;
      return {
        json: { conversation: { id: '1', url: 'x', tags: [{ id: '5', url: 'x' }], status: read <= reads ? status : later, close_reason: closeReason } },
      };
    });
  }

  test('closing with no close reason it can read: exit 2 asking for one; with --close-reason it is sent', async () => {
    for (const closeReason of [null, { id: 7 }, '']) {
      const api = await service('closing', closeReason);
      try {
        const result = await runCli(['conversations', 'update', '1', '--tags', '5'], { env: scriptedEnv(api) });
        assert.equal(result.code, 2);
        assert.equal(
          result.stderr,
          'carectl: --status not given: 1 is closing with no close reason carectl could read (--close-reason R gives one); only a conversation already on_hold or closing keeps its status (the service sets no other): give --status on_hold, or --status closing --close-reason R; nothing was sent\n',
        );
        assert.deepEqual(
          api.requests.filter((r) => !r.url.startsWith('/v1.3/tags')).map((r) => `${r.method} ${r.url}`),
          ['GET /v1.3/conversations/1?fields=status%2Cclose_reason'],
        );
        const given = await runCli(['conversations', 'update', '1', '--tags', '5', '--close-reason', 'resolved', '-o', 'ndjson'], { env: scriptedEnv(api) });
        assert.equal(given.code, 0, given.stderr);
        assert.deepEqual(JSON.parse(api.requests.at(-1)!.body), { status: 'closing', tag_ids: ['5'], close_reason: 'resolved' });
      } finally {
        await api.close();
      }
    }
  });

  test('a status that changed since the check: that id fails, exit 1, nothing sent for it', async () => {
    const api = await service('on_hold', null, 'closed');
    try {
      const result = await runCli(['-o', 'ndjson', 'conversations', 'update', '1', '--add-tags', '5'], { env: scriptedEnv(api) });
      assert.equal(result.code, 1);
      const message = 'conversation 1 is closed, which it was not when carectl checked before the batch: nothing was sent for it (--status sets one)';
      assert.equal(result.stdout, `${JSON.stringify({ id: '1', ok: false, status: null, tags: null, error: { kind: 'refused', status: null, message } })}\n`);
      assert.deepEqual(
        api.requests.filter((r) => !r.url.startsWith('/v1.3/tags')).map((r) => `${r.method} ${r.url}`),
        ['GET /v1.3/conversations/1?fields=status%2Cclose_reason', 'GET /v1.3/conversations/1?fields=tags%2Cstatus%2Cclose_reason'],
      );
    } finally {
      await api.close();
    }
  });
});
