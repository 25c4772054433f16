/**
 * Records without an id (the spec's Annotation: type_id, value, created_date, moderator_id): a list
 * leaves out repeats by id, so records with none are each written, and a --resume token counts them
 * rather than naming ids they do not have. The sandbox's annotations are id-less too, as the spec's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const annotation = (n: number): Record<string, unknown> => ({
  type_id: '9007199254740993',
  value: `value ${n}`,
  created_date: `2026-11-0${n}T10:00:00Z`,
  moderator_id: 'm1',
});

describe('records without an id', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      const token = new URL(request.url, 'http://x').searchParams.get('page_token');
      if (token === 'p2') return { json: { annotations: [annotation(5)], paging: { next_page: null } } };
      return { json: { annotations: [1, 2, 3, 4].map(annotation), paging: { next_page: `${api.baseUrl}/api/1/annotations?page_token=p2` } } };
    });
  });
  after(async () => api.close());

  const values = (ndjson: string): string[] =>
    ndjson
      .trim()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { value: string }).value);

  test('are each written, at any --parallel', async () => {
    for (const parallel of ['1', '8']) {
      const out = await runCli(['annotations', 'list', '-o', 'ndjson', '--parallel', parallel], { env: scriptedEnv(api) });
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(values(out.stdout), ['value 1', 'value 2', 'value 3', 'value 4', 'value 5'], `--parallel ${parallel}`);
    }
  });

  test('a --limit run and its --resume write each once', async () => {
    const first = await runCli(['annotations', 'list', '-o', 'ndjson', '--limit', '3'], { env: scriptedEnv(api) });
    assert.equal(first.code, 0, first.stderr);
    const token = /--resume (\S+)/.exec(first.stderr)?.[1];
    assert.ok(token, first.stderr);
    const rest = await runCli(['annotations', 'list', '-o', 'ndjson', '--resume', token.replace(/^'|'$/g, '')], { env: scriptedEnv(api) });
    assert.equal(rest.code, 0, rest.stderr);
    assert.deepEqual([...values(first.stdout), ...values(rest.stdout)], ['value 1', 'value 2', 'value 3', 'value 4', 'value 5']);
  });
});
