/** Update replies: a write counts as applied only on the documented success; the record read first must be the one asked. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { patchedIds, runCli } from './helpers.js';
import { scriptedApi, type ScriptedApi, scriptedEnv, type ScriptedReply } from './scripted-server.js';

/** PATCH replies by conversation id; GETs answer the record asked for, except 500001's. */
const PATCH_REPLIES: Record<string, ScriptedReply> = {
  '500010': { json: { conversation: { id: '500010', url: 'x' } } },
  '500011': { json: { status: 'error', message: 'permission denied for this source' } },
  '500012': { status: 202, text: '' },
  '500013': { json: { conversation: { id: '999999', url: 'x' } } },
  '500014': { json: { ok: true } },
  '500015': { json: { status: 'error', message: 'permission denied', conversation: { id: '500015', url: 'u' } } },
};

describe('conversations update against a service that answers the wrong thing', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      const id = /conversations\/([^/?]+)/.exec(request.url)?.[1] ?? '';
      if (request.method === 'PATCH') return PATCH_REPLIES[id];
      return { json: { conversation: { id: id === '500001' ? '999999' : id, url: 'x', tags: [{ id: '7001', url: 'x' }] } } };
    });
  });
  after(() => api.close());

  const patched = (from: number): string[] => patchedIds(api.requests.slice(from));

  test('a GET answered with another conversation: that id fails and nothing is sent for it', async () => {
    const from = api.requests.length;
    const out = await runCli(['conversations', 'update', '500001', '500010', '--status', 'on_hold', '-o', 'csv', '--retries', '0'], { env: scriptedEnv(api) });
    assert.equal(out.code, 1, out.stderr);
    assert.deepEqual(patched(from), ['500010']);
    assert.equal(
      out.stdout,
      'id,ok,status,tags,error.kind,error.status,error.message\r\n' +
        `500001,false,,,network,,GET ${api.baseUrl}/v1.3/conversations/500001: unexpected reply: the service sent conversation 999999 for conversation 500001\r\n` +
        '500010,true,on_hold,"[""7001""]",,,\r\n',
    );
  });

  test('conversations get answered with another record fails too', async () => {
    const out = await runCli(['conversations', 'get', '500001', '-o', 'json', '--retries', '0'], { env: scriptedEnv(api) });
    assert.equal(out.code, 1);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /unexpected reply: the service sent conversation 999999 for conversation 500001\n$/);
  });

  test("only {conversation: {id}} naming that id is ok: an error body in a 200, an empty 202, another id, an error body naming the id fail with the service's words, refused with the reply's status", async () => {
    const out = await runCli(
      [
        'conversations',
        'update',
        '500010',
        '500011',
        '500012',
        '500013',
        '500014',
        '500015',
        '--status',
        'on_hold',
        '-o',
        'tsv',
        '--no-header',
        '--columns',
        'id,ok,error.kind,error.status,error.message',
      ],
      { env: scriptedEnv(api) },
    );
    assert.equal(out.code, 1, out.stderr);
    assert.equal(
      out.stdout,
      [
        '500010\ttrue\t\t\t',
        '500011\tfalse\trefused\t200\tthe service did not confirm the update: it answered with an error: permission denied for this source',
        '500012\tfalse\trefused\t202\tthe service did not confirm the update: it answered with an empty body',
        '500013\tfalse\trefused\t200\tthe service did not confirm the update: it answered with conversation 999999',
        '500014\tfalse\trefused\t200\tthe service did not confirm the update: its reply holds no "conversation" record with an id',
        '500015\tfalse\trefused\t200\tthe service did not confirm the update: it answered with an error: permission denied',
        '',
      ].join('\n'),
    );
    assert.match(
      out.stderr,
      /^carectl: 5 of 6 updates failed \(first: 500011: the service did not confirm the update: it answered with an error: permission denied for this source\)\n$/,
    );
  });
});

/** 200s that came but cannot be read, by conversation id: the service may have applied each. */
const UNREADABLE_200S: Record<string, ScriptedReply> = {
  '500020': { text: '<html><body>Saved</body></html>' },
  '500021': { text: 'OK', headers: { 'content-type': 'text/plain' } },
  '500022': { text: '<!doctype html><title>Portal</title>', headers: { 'content-type': 'text/html' } },
  '500023': { text: '{"conversation":{"id":"500023","url":"x"' },
};

describe('conversations update after a 200 that cannot be read', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      const id = /conversations\/([^/?]+)/.exec(request.url)?.[1] ?? '';
      if (request.method === 'PATCH') return UNREADABLE_200S[id];
      return { json: { conversation: { id, url: 'x', status: 'unread', tags: [] } } };
    });
  });
  after(() => api.close());

  test('each PATCH is sent once, at --parallel 1 with retries left, and its row says it may have been applied', async () => {
    const ids = Object.keys(UNREADABLE_200S);
    const out = await runCli(['conversations', 'update', ...ids, '--status', 'on_hold', '--parallel', '1', '-o', 'ndjson'], { env: scriptedEnv(api) });
    assert.equal(out.code, 1, out.stderr);
    assert.deepEqual(patchedIds(api.requests), ids);
    const rows = out.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; ok: boolean; error: { message: string } });
    assert.deepEqual(
      rows.map((row) => [row.id, row.ok]),
      ids.map((id) => [id, false]),
    );
    for (const row of rows) assert.match(row.error.message, /may have been applied/, row.id);
  });
});
