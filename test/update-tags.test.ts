/** A tag-keeping update never sends an empty tag list by accident (issue: hardening, data loss). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { patchedIds, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

/** Conversation id → what its GET answers as `conversation`. */
const RECORDS: Record<string, unknown> = {
  good: { id: 'good', url: 'x', tags: [{ id: '7001', url: 'x' }] },
  missing: { id: 'missing', url: 'x' },
  null: { id: 'null', url: 'x', tags: null },
  text: { id: 'text', url: 'x', tags: '7001,7002' },
  noid: { id: 'noid', url: 'x', tags: [{ url: 'x' }] },
  numeric: { id: 'numeric', url: 'x', tags: [{ id: 7001, url: 'x' }] },
  empty: { id: 'empty', url: 'x', tags: [] },
};

describe('conversations update: current tags that cannot be read', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      // The tags options take names or ids: one tags list per run.
      if (/\/tags\?/.test(request.url)) return { json: { tags: [{ id: '7005', url: 'x', name: 'praise-follow-up', is_active: true }] } };
      const id = decodeURIComponent(/conversations\/([^/?]+)/.exec(request.url)?.[1] ?? '');
      if (request.method === 'PATCH') return { json: { conversation: { id, url: 'x' } } };
      return { json: { conversation: RECORDS[id] } };
    });
  });
  after(() => api.close());

  const patched = (from: number): string[] => patchedIds(api.requests.slice(from));

  for (const id of ['missing', 'null', 'text', 'noid', 'numeric']) {
    test(`${id}: no PATCH for that id, the row says why and suggests --tags, the batch goes on, exit 1`, async () => {
      const from = api.requests.length;
      const out = await runCli(['conversations', 'update', id, 'good', '--status', 'on_hold', '-o', 'csv'], { env: scriptedEnv(api) });
      assert.equal(out.code, 1, out.stderr);
      assert.deepEqual(patched(from), ['good']);
      const rows = out.stdout.trim().split('\n');
      assert.equal(rows[2], 'good,true,on_hold,"[""7001""]",,,');
      assert.match(rows[1]!, new RegExp(`^${id},false,,,network,,"?the service sent no usable tags list for conversation ${id}.*nothing was sent.*--tags`));
      assert.match(out.stderr, /1 of 2 updates failed/);
    });
  }

  test('--add-tags and --remove-tags need the current tags too', async () => {
    for (const flag of ['--add-tags', '--remove-tags']) {
      const from = api.requests.length;
      const out = await runCli(['conversations', 'update', 'null', '--status', 'on_hold', flag, '7005', '-o', 'csv'], { env: scriptedEnv(api) });
      assert.equal(out.code, 1);
      assert.deepEqual(patched(from), []);
    }
  });

  test('--tags sets the list without reading it, so it still works', async () => {
    const from = api.requests.length;
    const out = await runCli(['conversations', 'update', 'null', '--status', 'on_hold', '--tags', '7005', '-o', 'csv'], { env: scriptedEnv(api) });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(patched(from), ['null']);
    assert.deepEqual(JSON.parse(api.requests.at(-1)!.body), { status: 'on_hold', tag_ids: ['7005'] });
  });

  test('an empty list is a usable list: it is kept empty', async () => {
    const from = api.requests.length;
    const out = await runCli(['conversations', 'update', 'empty', '--status', 'on_hold', '--add-tags', '7005', '-o', 'csv'], { env: scriptedEnv(api) });
    assert.equal(out.code, 0, out.stderr);
    const bodies = api.requests
      .slice(from)
      .filter((r) => r.method === 'PATCH')
      .map((r) => JSON.parse(r.body));
    assert.deepEqual(bodies, [{ status: 'on_hold', tag_ids: ['7005'] }]);
  });
});
