/** Ids holding a lone UTF-16 surrogate (valid JSON, in no URL): lists print them and their tokens keep them. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from './helpers.js';
import { keysetApi, keysetData } from './keyset.js';
import { scriptedEnv, type ScriptedApi } from './scripted-server.js';

describe('a --limit chain on keyset pages whose ids hold lone surrogates', () => {
  // Every id ends in half a surrogate pair, the high or the low one.
  const data = keysetData(240).map((record, i) => ({ ...record, id: `${record.id}${i % 2 === 0 ? '\ud800' : '\udc00'}` }));
  let api: ScriptedApi;
  before(async () => {
    api = await keysetApi(data);
  });
  after(() => api.close());

  test('each run prints its token, and the chain prints every record once, as one run does', async () => {
    const argv = ['conversations', 'list', '--status', 'unread', '-o', 'ndjson', '--fields', 'status', '--parallel', '1'];
    const whole = await runCli(argv, { env: scriptedEnv(api) });
    assert.equal(whole.code, 0, whole.stderr);
    const expected = whole.stdout.split('\n').filter(Boolean);
    assert.ok(expected.length > 60, `${expected.length} records`);
    assert.ok(
      expected.every((line) => /"id":"\d+\\ud[8c]00"/.test(line)),
      expected[0],
    );
    const printed: string[] = [];
    let token: string | undefined;
    for (let run = 0; run < 20; run++) {
      const result = await runCli([...argv, '--limit', '7', ...(token === undefined ? [] : ['--resume', token])], { env: scriptedEnv(api) });
      assert.equal(result.code, 0, result.stderr);
      printed.push(...result.stdout.split('\n').filter(Boolean));
      token = /--resume (\S+)\n$/.exec(result.stderr)?.[1];
      if (token === undefined) break;
    }
    assert.equal(token, undefined, 'the chain ends');
    assert.deepEqual(printed, expected);
  });
});
