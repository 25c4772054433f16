/** Replies that are not what the API sends: refused with a clear error, never printed as blank rows. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeClock, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

/** Second pages of the tags list, by scenario (the first page is always good). */
const SECOND_PAGES: Record<string, unknown> = {
  'not-objects': { tags: [{ id: '3', name: 'c', is_active: true }, 'x', null] },
  'no-id': {
    tags: [
      { id: '3', name: 'c', is_active: true },
      { name: 'no id', is_active: true },
    ],
  },
  'empty-id': { tags: [{ id: '', name: 'empty id', is_active: true }] },
  'wrong-key': { items: [{ id: '3' }] },
};

describe('records that are not objects or have no id', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      const url = new URL(request.url, 'http://x');
      const scenario = url.pathname.split('/')[1] ?? '';
      if (url.pathname.endsWith('/tags/7001')) return { json: { tag: SECOND_PAGES[scenario] } };
      if (url.searchParams.get('skip') === '2') return { json: { ...(SECOND_PAGES[scenario] as object), paging: { next_page: null } } };
      url.searchParams.set('skip', '2');
      const next = `${api.baseUrl}${url.pathname}?${url.searchParams}`;
      return {
        json: {
          tags: [
            { id: '1', name: 'a', is_active: true },
            { id: '2', name: 'b', is_active: true },
          ],
          paging: { next_page: next },
        },
      };
    });
  });
  after(() => api.close());

  const list = (scenario: string) =>
    runCli(['tags', 'list', '--page-size', '2', '-o', 'csv', '--retries', '0'], {
      env: { ...scriptedEnv(api), CARECTL_BASE_URL: `${api.baseUrl}/${scenario}` },
    });

  for (const [scenario, message] of [
    ['not-objects', /unexpected reply: record 2 of the "tags" list is not an object \(a string\)/],
    ['no-id', /unexpected reply: record 2 of the "tags" list has no id/],
    ['empty-id', /unexpected reply: record 1 of the "tags" list has no id/],
    ['wrong-key', /unexpected reply: no "tags" list/],
  ] as const) {
    test(`${scenario}: exit 1, the records before stay whole, and a --resume token`, async () => {
      const out = await list(scenario);
      assert.equal(out.code, 1, out.stderr);
      assert.equal(out.stdout, 'id,name,is_active\r\n1,a,true\r\n2,b,true\r\n');
      assert.match(out.stderr, message);
      assert.match(out.stderr, /the list stopped after 2 records: to continue, run the same command with --resume \S+\n$/);
    });
  }

  test('a get whose record has no id: exit 1 with a clear message, nothing printed', async () => {
    const out = await runCli(['tags', 'get', '7001', '-o', 'json', '--retries', '0'], {
      env: { ...scriptedEnv(api), CARECTL_BASE_URL: `${api.baseUrl}/no-id` },
    });
    assert.equal(out.code, 1);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /^carectl: GET http:\/\/127\.0\.0\.1:\d+\/no-id\/v1\.3\/tags\/7001: unexpected reply: the "tag" record has no id\n$/);
  });
});

describe('a reply without the expected envelope is retried like a transient failure', () => {
  test('a wrong envelope key, then the right one: the list completes', async () => {
    let calls = 0;
    const api = await scriptedApi(() =>
      ++calls === 1 ? { json: { html: '<h1>proxy</h1>' } } : { json: { tags: [{ id: '1', name: 'a', is_active: true }], paging: {} } },
    );
    try {
      const clock = fakeClock();
      const out = await runCli(['tags', 'list', '-o', 'csv', '--verbose'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, 'id,name,is_active\r\n1,a,true\r\n');
      assert.equal(calls, 2);
      assert.match(out.stderr, /unexpected reply: no "tags" list/);
      assert.match(out.stderr, /retrying in \d+ ms/);
    } finally {
      await api.close();
    }
  });
});
