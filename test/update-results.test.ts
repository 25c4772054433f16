/**
 * issue 36: names wherever a person has a name (tags, channels), update rows a script can read
 * (`ok`, `error.kind`), and batches that stop when going on cannot help. End to end against the
 * sandbox, a scripted service (names it does not hold, one that refuses alike) and a closed port.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { editDistance } from '../src/core/closest.js';
import { BatchStop } from '../src/commands/conversations/update-results.js';
import { ApiError, failureKind, NetworkError, BadReplyError, AuthError } from '../src/core/errors.js';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, freePort, openSandbox, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, serve, type ScriptedApi } from './scripted-server.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await openSandbox();
});
afterEach(() => sandbox.close());

/** Paths of the API requests since `from`, with the method. */
const sent = (from: number): string[] => apiRequests(sandbox, from).map((r) => `${r.method} ${r.url.split('?')[0]}`);

/** 500010 and 500004 can be closed; 999999 does not exist. In input order, one at a time. */
const MIXED = ['conversations', 'update', '500010', '999999', '500004', '--status', 'closing', '--close-reason', 'resolved', '--parallel', '1'];
const NOT_FOUND = "No conversation with id '999999' (HTTP 404)";
const SUMMARY = `carectl: 1 of 3 updates failed (first: 999999: ${NOT_FOUND})\n`;

describe('update rows: ok and error.kind in every format', () => {
  const tags = (id: string): string[] => sandbox.data.byId.conversations.get(id)!.tag_ids;

  test('json and ndjson: ok, and on failure error {kind, status, message}', async () => {
    const rows = [
      { id: '500010', ok: true, status: 'closing', tags: tags('500010'), error: null },
      { id: '999999', ok: false, status: null, tags: null, error: { kind: 'not_found', status: 404, message: NOT_FOUND } },
      { id: '500004', ok: true, status: 'closing', tags: tags('500004'), error: null },
    ];
    const json = await runCli([...MIXED, '-o', 'json'], { sandbox });
    assert.equal(json.code, 4);
    assert.equal(json.stderr, SUMMARY);
    assert.equal(json.stdout, `${JSON.stringify(rows, null, 2)}\n`);
    const ndjson = await runCli([...MIXED, '-o', 'ndjson'], { sandbox });
    assert.equal(ndjson.code, 4);
    assert.equal(ndjson.stdout, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  });

  test('csv and tsv: error.kind, error.status and error.message columns', async () => {
    const csv = await runCli([...MIXED, '-o', 'csv'], { sandbox });
    assert.equal(csv.code, 4);
    assert.equal(
      csv.stdout,
      'id,ok,status,tags,error.kind,error.status,error.message\r\n' +
        '500010,true,closing,[],,,\r\n' +
        `999999,false,,,not_found,404,${NOT_FOUND}\r\n` +
        '500004,true,closing,"[""7022"",""7006"",""7062""]",,,\r\n',
    );
    const tsv = await runCli([...MIXED, '--columns', 'id,ok,error.kind,error.status'], { sandbox });
    assert.equal(tsv.code, 4);
    assert.equal(tsv.stdout, 'id\tok\terror.kind\terror.status\n500010\ttrue\t\t\n999999\tfalse\tnot_found\t404\n500004\ttrue\t\t\n');
  });

  // 500004's tags by the names the service sent with it (a status-only update reads no tags list)
  const TABLES: Record<number, string> = {
    50:
      'ID      OK     STATUS   TAGS                RESULT\n' +
      '500010  true   closing                      ok\n' +
      '999999  false\n' +
      '        not_found: No conversation with id\n' +
      "        '999999' (HTTP 404)\n" +
      '500004  true   closing  returns-question,…  ok\n',
    80:
      'ID      OK     STATUS   TAGS                                            RESULT\n' +
      '500010  true   closing                                                  ok\n' +
      '999999  false\n' +
      "        not_found: No conversation with id '999999' (HTTP 404)\n" +
      '500004  true   closing  returns-question,fraud-request,privacy-request  ok\n',
    160:
      'ID      OK     STATUS   TAGS                                            RESULT\n' +
      '500010  true   closing                                                  ok\n' +
      "999999  false                                                           not_found: No conversation with id '999999' (HTTP 404)\n" +
      '500004  true   closing  returns-question,fraud-request,privacy-request  ok\n',
  };
  for (const [columns, expected] of Object.entries(TABLES)) {
    test(`a table at ${columns} columns: OK, and a RESULT cell that reads the kind and the message`, async () => {
      assert.deepEqual(tags('500004'), ['7022', '7006', '7062'], 'the fixture this layout was written for');
      const result = await runCli(['--no-color', ...MIXED], { sandbox, stdoutTTY: true, columns: Number(columns) });
      assert.equal(result.code, 4);
      assert.equal(result.stdout, expected);
      assert.equal(result.stderr, SUMMARY);
    });
  }

  test('failureKind: by class and HTTP status, never by text', () => {
    const api = (status: number): ApiError => new ApiError(status, 'x');
    assert.deepEqual(
      [400, 401, 403, 404, 409, 422, 429, 500, 503].map((status) => failureKind(api(status))),
      ['refused', 'auth', 'forbidden', 'not_found', 'refused', 'refused', 'rate_limited', 'network', 'network'],
    );
    assert.equal(failureKind(new NetworkError('Tag 7008 is inactive (HTTP 400)', false)), 'network');
    assert.equal(failureKind(new BadReplyError('not JSON')), 'network');
    assert.equal(failureKind(new AuthError('no credentials')), 'auth');
  });
});

describe('update rows in a table: a RESULT wraps at spaces, never inside a word that fits the room under its row', () => {
  /** 500002's close reason is refused with a message holding a 31-column word (a comma list). */
  const REFUSAL = 'close_reason dup is not one of resolved,duplicate,unresponsive';
  let api: ScriptedApi;
  beforeEach(async () => {
    api = await scriptedApi((request) => {
      const id = /conversations\/([^/?]+)/.exec(request.url)?.[1] ?? '';
      if (request.method !== 'PATCH') return { json: { conversation: { id, url: 'x', status: 'assigned', tags: [{ id: '7001', url: 'x' }] } } };
      return id === '500002' ? { status: 422, json: { status: 'error', message: REFUSAL } } : { json: { conversation: { id, url: 'x' } } };
    });
  });
  afterEach(() => api.close());

  const HEAD = 'ID      OK     STATUS   TAGS  RESULT\n500001  true   closing  7001  ok\n500002  false\n';
  const TAIL = '500003  true   closing  7001  ok\n';
  const TABLES: Record<number, string> = {
    40: `${HEAD}        refused: close_reason dup is not\n        one of\n        resolved,duplicate,unresponsive\n        (HTTP 422)\n${TAIL}`,
    50: `${HEAD}        refused: close_reason dup is not one of\n        resolved,duplicate,unresponsive (HTTP 422)\n${TAIL}`,
    // beside the row the column has 30: the word would be cut there (…unresponsiv|e)
    60: `${HEAD}        refused: close_reason dup is not one of\n        resolved,duplicate,unresponsive (HTTP 422)\n${TAIL}`,
  };
  for (const [columns, expected] of Object.entries(TABLES)) {
    test(`at ${columns} columns`, async () => {
      const argv = ['--no-color', 'conversations', 'update', '500001', '500002', '500003', '--status', 'closing', '--close-reason', 'dup', '--parallel', '1'];
      const result = await runCli([...argv, '--retries', '0'], { env: scriptedEnv(api), stdoutTTY: true, columns: Number(columns) });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, expected);
    });
  }
});

describe('names: tags and channels by name or id', () => {
  test('list --channel NAME lists that channel (its id sent); --tag ID lists that tag (its name sent); one list request each', async () => {
    const from = sandbox.requests.length;
    const byName = await runCli(
      ['conversations', 'list', '--status', 'unread', '--channel', 'acme facebook', '--tag', '7005', '--columns', 'id', '-o', 'csv'],
      {
        sandbox,
      },
    );
    assert.equal(byName.code, 0, byName.stderr);
    const requests = apiRequests(sandbox, from);
    const lists = requests.filter((r) => r.url.startsWith('/v1.3/conversations'));
    assert.deepEqual(
      requests.filter((r) => !lists.includes(r)).map((r) => r.url.split('?')[0]),
      ['/v1.3/channels', '/v1.3/tags', '/v1.3/tags'],
    );
    assert.ok(lists.length > 0 && requests.slice(0, 3).every((r) => !lists.includes(r)), 'the names first');
    for (const list of lists) {
      const query = new URL(list.url, 'http://x').searchParams;
      assert.equal(query.get('channel'), FIXTURES.facebookChannelId);
      assert.equal(query.get('tag'), 'praise-follow-up');
    }
    const byId = await runCli(
      ['conversations', 'list', '--status', 'unread', '--channel', '202', '--tag', 'praise-follow-up', '--columns', 'id', '-o', 'csv'],
      {
        sandbox,
      },
    );
    assert.equal(byId.stdout, byName.stdout);
    assert.ok(byName.stdout.split('\n').length > 2, 'the list is not empty');
  });

  test('an unknown name is exit 2 naming the closest candidates; nothing but the look-up is sent', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['conversations', 'list', '--status', 'unread', '--channel', 'Acme Microblg'],
        '--channel: no channel has the name or id "Acme Microblg" (closest: Acme Microblog (201))',
      ],
      [
        ['conversations', 'list', '--status', 'unread', '--channel', '999'],
        '--channel: no channel has the name or id "999" (carectl channels list shows them)',
      ],
      [
        ['conversations', 'list', '--status', 'unread', '--tag', 'praise-folow-up'],
        '--tag: no tag has the name or id "praise-folow-up" (closest: praise-follow-up (7005))',
      ],
      [
        ['reports', 'list', '--channel', 'Initech'],
        '--channel: no channel has the name or id "Initech" (closest: Initech Instagram (207), Initech WhatsApp (208))',
      ],
      [
        ['conversations', 'update', '500010', '--status', 'on_hold', '--add-tags', 'praise-follow-up,refund-bugg'],
        '--add-tags: no tag has the name or id "refund-bugg" (closest: refund-bug (7008, inactive))',
      ],
    ];
    for (const [argv, message] of cases) {
      const from = sandbox.requests.length;
      const result = await runCli(argv, { sandbox });
      assert.equal(result.code, 2, argv.join(' '));
      assert.equal(result.stdout, '');
      assert.equal(result.stderr, `carectl: ${message}\n`);
      assert.ok(
        sent(from).every((line) => /^GET \/v1\.[13]+\/(tags|channels)$/.test(line)),
        `only the look-up: ${sent(from).join(', ')}`,
      );
    }
  });

  test('update --add-tags and --remove-tags by name: ids sent; a dry run resolves them too', async () => {
    const c = sandbox.data.conversations.find(
      (x) => Number(x.id) > 500003 && x.tag_ids.length > 0 && x.tag_ids.every((id) => sandbox.data.byId.tags.get(id)!.is_active),
    )!;
    const [first] = c.tag_ids;
    const firstName = sandbox.data.byId.tags.get(first!)!.name;
    const argv = ['conversations', 'update', c.id, '--status', 'on_hold', '--add-tags', 'PRAISE-follow-up,order-bug', '--remove-tags', firstName];
    const expected = { status: 'on_hold', tag_ids: [...new Set([...c.tag_ids.filter((id) => id !== first), '7005', '7007'])] };
    const dry = await runCli([...argv, '--dry-run'], { sandbox });
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, `PATCH /v1.3/conversations/${c.id} ${JSON.stringify(expected)}\n`);
    const from = sandbox.requests.length;
    const real = await runCli([...argv, '-o', 'json'], { sandbox });
    assert.equal(real.code, 0, real.stderr);
    const patch = apiRequests(sandbox, from).find((r) => r.method === 'PATCH')!;
    assert.deepEqual(JSON.parse(patch.body!), expected);
    assert.equal(sent(from).filter((line) => line === 'GET /v1.3/tags').length, 2, 'the tags list once (two pages), not per id');
  });

  test('a dry run says which conversations carry inactive tags the service would refuse', async () => {
    const { data } = sandbox;
    const c = data.conversations.find((x) => Number(x.id) > 500003 && x.tag_ids.some((id) => !data.byId.tags.get(id)!.is_active))!;
    const inactive = c.tag_ids.filter((id) => !data.byId.tags.get(id)!.is_active);
    const named = inactive.map((id) => `${data.byId.tags.get(id)!.name} (${id})`).join(', ');
    const dry = await runCli(['conversations', 'update', c.id, '--status', 'on_hold', '--dry-run'], { sandbox });
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, `PATCH /v1.3/conversations/${c.id} ${JSON.stringify({ status: 'on_hold', tag_ids: c.tag_ids })}\n`);
    const pronoun = inactive.length > 1 ? 'them' : 'it';
    assert.equal(dry.stderr, `${c.id}: carries inactive ${named}, which the service refuses: --drop-inactive-tags leaves ${pronoun} out\n`);
    const dropping = await runCli(['-o', 'ndjson', 'conversations', 'update', c.id, '--status', 'on_hold', '--dry-run', '--drop-inactive-tags'], { sandbox });
    assert.equal(dropping.code, 0, dropping.stderr);
    const record = JSON.parse(dropping.stdout) as { body: { tag_ids: string[] }; dropped: string[] };
    assert.deepEqual(record.dropped, inactive);
    assert.deepEqual(
      record.body.tag_ids,
      c.tag_ids.filter((id) => !inactive.includes(id)),
    );
    assert.equal(dropping.stderr, `${c.id}: leaves out inactive ${named}\n`);
  });
});

describe('names: a service with two channels of one name', () => {
  let api: ScriptedApi;
  beforeEach(async () => {
    api = await scriptedApi((request) => {
      if (request.url.startsWith('/v1.3/channels')) {
        return {
          json: {
            channels: [
              { id: '301', url: 'x', name: 'Support' },
              { id: '302', url: 'x', name: 'Support' },
              { id: '303', url: 'x', name: 'Sales' },
            ],
          },
        };
      }
      return { json: { conversations: [{ id: '1', url: 'x' }], paging: {} } };
    });
  });
  afterEach(() => api.close());

  test('the name is ambiguous: exit 2 naming both, the conversation list not asked; an id still works', async () => {
    const result = await runCli(['conversations', 'list', '--status', 'unread', '--channel', 'support'], { env: scriptedEnv(api) });
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'carectl: --channel: "support" names 2 channels: Support (301), Support (302); give the id\n');
    assert.deepEqual(
      api.requests.map((r) => r.url.split('?')[0]),
      ['/v1.3/channels'],
    );
    const byId = await runCli(['conversations', 'list', '--status', 'unread', '--channel', '302', '--columns', 'id'], { env: scriptedEnv(api) });
    assert.equal(byId.code, 0, byId.stderr);
    assert.equal(new URL(api.requests.at(-1)!.url, 'http://x').searchParams.get('channel'), '302');
  });

  test('edit distance', () => {
    assert.equal(editDistance('praise-folow-up', 'praise-follow-up'), 1);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });
});

describe('batches that stop when going on cannot help', () => {
  const ids = Array.from({ length: 40 }, (_, index) => String(500010 + index));

  test('40 ids against a closed port: 3 network failures in a row stop the batch, the rest come as not_sent rows', async () => {
    const port = await freePort();
    const clock = fakeClock();
    const env = { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
    const result = await runCli(['-o', 'ndjson', 'conversations', 'update', '-', '--status', 'on_hold', '--parallel', '8'], {
      env,
      stdin: ids.join('\n'),
      ...clock,
    });
    assert.equal(result.code, 1);
    const rows = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; ok: boolean; error: { kind: string; status: null; message: string } });
    assert.deepEqual(
      rows.map((row) => row.id),
      ids,
    );
    // --parallel 8: the first 8 were under way together; none after them was sent.
    assert.deepEqual(
      rows.map((row) => row.error.kind),
      [...Array<string>(8).fill('network'), ...Array<string>(32).fill('not_sent')],
    );
    assert.deepEqual(rows[39], {
      id: '500049',
      ok: false,
      status: null,
      tags: null,
      error: { kind: 'not_sent', status: null, message: 'not sent: 3 network failures in a row: the service is unreachable' },
    });
    assert.match(
      result.stderr,
      /^carectl: 8 of 40 updates failed \(first: 500010: GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/conversations\/500010 failed: ECONNREFUSED .*\); the batch stopped \(3 network failures in a row: the service is unreachable\): 32 not sent, rows with error\.kind not_sent\n$/,
    );
  });

  test('a service whose answers are cut off after their head: the stop says the answers do not come whole, not that it is unreachable', async () => {
    // Every reply: a 200 head promising a body, then the connection closed part-way.
    const served = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      res.write('{"id":"5000');
      res.socket?.destroy();
    });
    try {
      const env = { CARECTL_BASE_URL: served.url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
      const result = await runCli(['-o', 'ndjson', 'conversations', 'update', '-', '--status', 'on_hold', '--parallel', '1', '--retries', '0'], {
        env,
        stdin: ids.slice(0, 6).join('\n'),
        ...fakeClock(),
      });
      assert.equal(result.code, 1);
      const last = JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as { error: { kind: string; message: string } };
      assert.deepEqual(last.error, {
        kind: 'not_sent',
        status: null,
        message: 'not sent: 3 network failures in a row: the service is reached, but no answer comes whole',
      });
      assert.match(result.stderr, /the batch stopped \(3 network failures in a row: the service is reached, but no answer comes whole\)/);
    } finally {
      await served.close();
    }
  });

  test('--rest FILE: the ids not sent go to FILE instead of rows; a batch that sends all removes FILE', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'carectl-rest-'));
    try {
      const rest = join(dir, 'rest.txt');
      const port = await freePort();
      const env = { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
      // A relative FILE is in the command's folder.
      const argv = ['-o', 'csv', '--columns', 'id,error.kind', 'conversations', 'update', '-', '--status', 'on_hold', '--parallel', '1', '--rest', 'rest.txt'];
      const result = await runCli(argv, { env, stdin: ids.slice(0, 10).join('\n'), cwd: dir, ...fakeClock() });
      assert.equal(result.code, 1);
      assert.equal(result.stdout, 'id,error.kind\r\n500010,network\r\n500011,network\r\n500012,network\r\n');
      assert.match(result.stderr, /: 7 not sent, their ids are in rest\.txt\n$/);
      assert.equal(await readFile(rest, 'utf8'), `${ids.slice(3, 10).join('\n')}\n`);
      const done = await runCli(['conversations', 'update', '500010', '--status', 'on_hold', '--rest', rest], { sandbox });
      assert.equal(done.code, 0, done.stderr);
      await assert.rejects(readFile(rest), { code: 'ENOENT' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('Ctrl-C with --rest: the ids not done go to FILE, exit 130', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'carectl-rest-'));
    try {
      const stop = new AbortController();
      const some = sandbox.data.conversations.filter((c) => Number(c.id) > 500003 && c.tag_ids.every((id) => sandbox.data.byId.tags.get(id)!.is_active));
      const chosen = some.slice(0, 6).map((c) => c.id);
      const argv = ['-o', 'ndjson', 'conversations', 'update', '-', '--status', 'on_hold', '--parallel', '1', '--rest', 'rest.txt'];
      const result = await runCli(argv, { sandbox, stdin: chosen.join('\n'), cwd: dir, signal: stop.signal, onStdout: () => stop.abort() });
      assert.equal(result.code, 130);
      const done = result.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id);
      assert.ok(done.length >= 1 && done.length < chosen.length, `${done.length} done`);
      assert.deepEqual(done, chosen.slice(0, done.length));
      assert.equal(
        await readFile(join(dir, 'rest.txt'), 'utf8'),
        chosen
          .slice(done.length)
          .map((id) => `${id}\n`)
          .join(''),
      );
      assert.match(result.stderr, /; the ids not done are in rest\.txt\n$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the first 5 results the same refusal (a close reason): the rest not sent, exit 1', async () => {
    const from = sandbox.requests.length;
    const argv = ['-o', 'csv', '--columns', 'id,ok,error.kind,error.status', 'conversations', 'update', '-', '--status', 'closing', '--close-reason', 'fixed'];
    const result = await runCli([...argv, '--parallel', '1'], { sandbox, stdin: ids.slice(0, 12).join('\n') });
    assert.equal(result.code, 1);
    const refused = ids.slice(0, 5).map((id) => `${id},false,refused,400\r\n`);
    const rest = ids.slice(5, 12).map((id) => `${id},false,not_sent,\r\n`);
    assert.equal(result.stdout, `id,ok,error.kind,error.status\r\n${refused.join('')}${rest.join('')}`);
    assert.equal(apiRequests(sandbox, from).filter((r) => r.method === 'PATCH').length, 5);
    assert.match(result.stderr, /the batch stopped \(the first 5 updates were refused alike: the rest would be too\): 7 not sent/);
    // With 8 under way at once, at most those 8 are sent (one whose tags were still being read
    // when the fifth refusal came is not); none after them.
    const parallel = sandbox.requests.length;
    const wide = await runCli(argv, { sandbox, stdin: ids.slice(0, 20).join('\n') });
    assert.equal(wide.code, 1);
    const patched = apiRequests(sandbox, parallel).filter((r) => r.method === 'PATCH').length;
    assert.ok(patched >= 5 && patched <= 8, `${patched} sent`);
    assert.equal(wide.stdout.split('\n').filter((line) => line.includes('not_sent')).length, 20 - patched);
  });

  test('refusals that differ, or a success among the first five, do not stop a batch', () => {
    const refusal = (message: string): ApiError => new ApiError(400, message);
    const mixed = new BatchStop();
    assert.deepEqual(
      [refusal('a'), refusal('a'), undefined, refusal('a'), refusal('a'), refusal('a'), refusal('a')].map((e) => mixed.see(e)),
      [false, false, false, false, false, false, false],
    );
    const differing = new BatchStop();
    assert.deepEqual(
      ['a', 'a', 'a', 'a', 'b'].map((m) => differing.see(refusal(m))),
      [false, false, false, false, false],
    );
    const notFound = new BatchStop();
    assert.equal([1, 2, 3, 4, 5].map(() => notFound.see(new ApiError(404, 'same'))).at(-1), false, 'a 404 is about the id');
    const network = new BatchStop();
    const down = new NetworkError('down', false);
    assert.deepEqual(
      [down, down, undefined, down, down, down].map((e) => network.see(e)),
      [false, false, false, false, false, true],
    );
  });

  test('--rest with a folder that cannot be written, or empty: exit 2, nothing sent', async () => {
    const from = sandbox.requests.length;
    for (const [file, message] of [
      ['/nonexistent/folder/rest.txt', /^carectl: --rest \/nonexistent\/folder\/rest\.txt: its folder cannot be written/],
      ['', /^carectl: --rest: needs a file name\n$/],
    ] as const) {
      const result = await runCli(['conversations', 'update', '500010', '--status', 'on_hold', '--rest', file], { sandbox });
      assert.equal(result.code, 2);
      assert.match(result.stderr, message);
    }
    assert.equal(sandbox.requests.length, from);
  });
});
