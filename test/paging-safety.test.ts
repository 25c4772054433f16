/**
 * Paging against a service whose links cannot be trusted (a scripted API): empty pages are
 * followed, loops and repeated pages end the list with an error and a --resume token, and links
 * that drop the query's filters are repaired where the paging style allows it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli, type RunResult } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi, type ScriptedReply, type ScriptedRequest } from './scripted.js';

type Answer = (request: ScriptedRequest, params: URLSearchParams, base: string) => ScriptedReply | undefined;

/** Runs `argv` against a scripted API answering with `answer`, then closes it. */
async function against(answer: Answer, argv: string[], run?: (api: ScriptedApi, result: RunResult) => Promise<void>): Promise<{ result: RunResult; api: ScriptedApi }> {
  let base = '';
  const api = await scriptedApi((request) => answer(request, new URL(request.url, 'http://x').searchParams, base));
  base = api.baseUrl;
  try {
    const result = await runCli(argv, { env: scriptedEnv(api) });
    await run?.(api, result);
    return { result, api };
  } finally {
    await api.close();
  }
}

const tags = (...ids: number[]): Array<{ id: string; name: string; is_active: boolean }> => ids.map((id) => ({ id: String(id), name: `t${id}`, is_active: true }));
const lines = (ids: number[]): string => ids.map((id) => `${JSON.stringify({ id: String(id), name: `t${id}`, is_active: true })}\n`).join('');
const tokenOf = (stderr: string): string | undefined => /--resume (\S+)/.exec(stderr)?.[1];

describe('paging follows what a service sends, but never loops', () => {
  test('an empty page that carries a next_page is followed', async () => {
    const { result, api } = await against((_request, params, base) => {
      const skip = params.get('skip');
      if (skip === null) return { json: { tags: tags(1, 2), paging: { next_page: `${base}/v1.3/tags?page_size=50&skip=2` } } };
      if (skip === '2') return { json: { tags: [], paging: { next_page: `${base}/v1.3/tags?page_size=50&skip=3` } } };
      return { json: { tags: tags(3), paging: { next_page: null } } };
    }, ['tags', 'list', '-o', 'ndjson']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, lines([1, 2, 3]));
    assert.equal(api.requests.length, 3);
  });

  test('a link back to a page already read (A→B→A) ends the list with an error and a token that continues it', async () => {
    let fixed = false;
    const answer: Answer = (_request, params, base) => {
      const skip = params.get('skip');
      if (skip === null) return { json: { tags: tags(1, 2), paging: { next_page: `${base}/v1.3/tags?page_size=50&skip=2` } } };
      if (skip === '2') return { json: { tags: tags(3, 4), paging: { next_page: fixed ? `${base}/v1.3/tags?page_size=50&skip=4` : `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50` } } };
      return { json: { tags: tags(5), paging: { next_page: null } } };
    };
    await against(answer, ['tags', 'list', '-o', 'ndjson'], async (api, result) => {
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^carectl: the service sent a next_page link back to a page already read \(v1\.3\/tags\?fields=name%2Cis_active&page_size=50\); the list stopped after 4 records: to continue, run the same command with --resume \S+\n$/);
      assert.equal(result.stdout, lines([1, 2, 3, 4]));
      assert.equal(api.requests.length, 2, 'the page already read is not asked for again');
      fixed = true;
      const rest = await runCli(['tags', 'list', '-o', 'ndjson', '--resume', tokenOf(result.stderr) as string], { env: scriptedEnv(api) });
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(result.stdout + rest.stdout, lines([1, 2, 3, 4, 5]));
    });
  });

  test('the same address with its query in another order is the same page', async () => {
    const { result, api } = await against((_request, params, base) => {
      if (params.get('skip') === null) return { json: { tags: tags(1), paging: { next_page: `${base}/v1.3/tags?page_size=50&skip=1` } } };
      return { json: { tags: tags(2), paging: { next_page: `${base}/v1.3/tags?skip=1&page_size=50` } } };
    }, ['tags', 'list', '-o', 'ndjson']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /a page already read \(v1\.3\/tags\?skip=1&page_size=50\).*--resume \S+\n$/);
    assert.equal(result.stdout, lines([1, 2]));
    assert.equal(api.requests.length, 2);
  });

  test('a page that repeats the ids of the page before it is not written, and ends the list', async () => {
    const { result } = await against((_request, params, base) => {
      const skip = Number(params.get('skip') ?? 0);
      return { json: { tags: tags(1, 2), paging: { next_page: `${base}/v1.3/tags?page_size=50&skip=${skip + 2}` } } };
    }, ['tags', 'list', '-o', 'ndjson']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^carectl: the service sent the same records as the page before it \(v1\.3\/tags\?page_size=50&skip=2\) with a link to more: paging would not end; the list stopped after 2 records: .*--resume \S+\n$/);
    assert.equal(result.stdout, lines([1, 2]));
  });

  test('empty pages that go on linking end at the second one in a row', async () => {
    const { result, api } = await against((_request, params, base) => {
      const skip = Number(params.get('skip') ?? 0);
      return { json: { tags: skip === 0 ? tags(1) : [], paging: { next_page: `${base}/v1.3/tags?page_size=50&skip=${skip + 1}` } } };
    }, ['tags', 'list', '-o', 'ndjson']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /a second empty page in a row .*--resume \S+\n$/);
    assert.equal(result.stdout, lines([1]));
    assert.equal(api.requests.length, 3);
  });
});
