/**
 * A name that is another record's id (round 5, item 13): tag 7007 is named "7004", channel 202 is
 * named "201". Such a value is ambiguous: exit 2 naming both, before anything is written, and
 * `id:VALUE` / `name:VALUE` say which.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

describe('a tag or channel named like another one id', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      if (/\/tags\?/.test(request.url))
        return {
          json: {
            tags: [
              { id: '7004', url: 'x', name: 'billing', is_active: true },
              { id: '7007', url: 'x', name: '7004', is_active: true },
            ],
          },
        };
      if (/\/channels\?/.test(request.url))
        return {
          json: {
            channels: [
              { id: '201', url: 'x', name: 'Support' },
              { id: '202', url: 'x', name: '201' },
            ],
            paging: { next_page: null },
          },
        };
      if (request.method === 'PATCH') return { json: { conversation: { id: '500001', url: 'x' } } };
      if (/\/conversations\?/.test(request.url)) return { json: { conversations: [], paging: { next_page: null } } };
      return { json: { conversation: { id: '500001', url: 'x', tags: [] } } };
    });
  });
  after(() => api.close());

  const update = (tags: string): ReturnType<typeof runCli> =>
    runCli(['conversations', 'update', '500001', '--status', 'on_hold', '--add-tags', tags, '-o', 'csv'], { env: scriptedEnv(api) });
  const sent = (from: number): string[] => api.requests.slice(from).flatMap((request) => (request.method === 'PATCH' ? [request.body] : []));

  test('--add-tags 7004: exit 2 naming both tags and how to say which; no PATCH', async () => {
    const from = api.requests.length;
    const out = await update('7004');
    assert.equal(out.code, 2, out.stderr);
    assert.equal(out.stdout, '');
    assert.equal(out.stderr, 'carectl: --add-tags: "7004" is the id of tag billing (7004) and the name of tag 7004 (7007); say which: id:7004 or name:7004\n');
    assert.deepEqual(sent(from), []);
  });

  test('id:7004 and name:7004 say which', async () => {
    const from = api.requests.length;
    assert.equal((await update('id:7004')).code, 0);
    assert.equal((await update('name:7004')).code, 0);
    assert.deepEqual(
      sent(from).map((body) => (JSON.parse(body) as { tag_ids: string[] }).tag_ids),
      [['7004'], ['7007']],
    );
  });

  test('--channel 201 on a list: exit 2 before the list is read; id:201 lists channel 201', async () => {
    const from = api.requests.length;
    const out = await runCli(['conversations', 'list', '--status', 'unread', '--channel', '201'], { env: scriptedEnv(api) });
    assert.equal(out.code, 2, out.stderr);
    assert.equal(out.stderr, 'carectl: --channel: "201" is the id of channel Support (201) and the name of channel 201 (202); say which: id:201 or name:201\n');
    assert.equal(api.requests.slice(from).filter((request) => request.url.includes('/conversations')).length, 0);
    const byId = await runCli(['conversations', 'list', '--status', 'unread', '--channel', 'id:201'], { env: scriptedEnv(api) });
    assert.equal(byId.code, 0, byId.stderr);
    const listed = api.requests.slice(from).filter((request) => request.url.includes('/conversations?'));
    assert.ok(listed.length > 0);
    for (const request of listed) assert.equal(new URL(request.url, 'http://x').searchParams.get('channel'), '201');
  });
});
