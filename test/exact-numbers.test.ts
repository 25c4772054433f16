/** Numbers a double cannot hold (ids past 2^53, 1e999) are printed as the service sent them. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ExactNumber, parseJson, stringifyJson } from '../src/core/exact-json.js';
import { runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

describe('parseJson', () => {
  test('keeps integers past 2^53, overflowing and underflowing numbers as their text', () => {
    const value = parseJson('{"a":9007199254740993,"b":-9007199254740993,"c":1e999,"d":1e-999,"e":[12345678901234567890]}') as Record<string, unknown>;
    assert.deepEqual(value, {
      a: new ExactNumber('9007199254740993'),
      b: new ExactNumber('-9007199254740993'),
      c: new ExactNumber('1e999'),
      d: new ExactNumber('1e-999'),
      e: [new ExactNumber('12345678901234567890')],
    });
  });

  test('numbers a double holds stay numbers, on both paths', () => {
    assert.deepEqual(parseJson('{"a":1,"b":2.5,"c":9007199254740991,"d":"9007199254740993 in a string"}'), {
      a: 1,
      b: 2.5,
      c: 9007199254740991,
      d: '9007199254740993 in a string',
    });
    assert.deepEqual(parseJson('[1, 1.50, 1e10]'), [1, 1.5, 1e10]);
  });

  test('a repeated key: the last wins, as with JSON.parse', () => {
    assert.deepEqual(parseJson('{"id":1,"id":9007199254740993}'), { id: new ExactNumber('9007199254740993') });
  });

  test('stringifyJson writes kept numbers bare, and leaves look-alike strings alone', () => {
    const text = '{"id":9007199254740993,"n":[1e999,2],"s":"9007199254740993"}';
    assert.equal(stringifyJson(parseJson(text)), text);
    assert.equal(stringifyJson(parseJson(text), 1), '{\n "id": 9007199254740993,\n "n": [\n  1e999,\n  2\n ],\n "s": "9007199254740993"\n}');
  });
});

describe('ids past 2^53 from the service', () => {
  let api: ScriptedApi;
  const page =
    '{"conversations":[{"id":9007199254740993,"url":"x","author":{"id":1e999}},{"id":9007199254740992,"url":"y","author":{"id":-1.5}}],"paging":{"next_page":null}}';
  before(async () => {
    api = await scriptedApi((request) => {
      if (request.url.includes('/conversations/9007199254740993')) return { text: '{"conversation":{"id":9007199254740993,"url":"x","author":{"id":1e999}}}' };
      return { text: request.url.includes('is_priority=false') ? '{"conversations":[],"paging":{"next_page":null}}' : page };
    });
  });
  after(() => api.close());

  const list = (...args: string[]) => runCli(['conversations', 'list', '--columns', 'id,author.id', ...args], { env: scriptedEnv(api) });

  test('csv, tsv and table print each id and number exactly', async () => {
    assert.equal((await list('-o', 'csv')).stdout, 'id,author.id\r\n9007199254740993,1e999\r\n9007199254740992,-1.5\r\n');
    assert.equal((await list('-o', 'tsv', '--no-header')).stdout, '9007199254740993\t1e999\n9007199254740992\t-1.5\n');
    const table = await list('-o', 'table', '--no-header');
    assert.equal(table.code, 0, table.stderr);
    assert.deepEqual(
      table.stdout
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/)),
      [
        ['9007199254740993', '1e999'],
        ['9007199254740992', '-1.5'],
      ],
    );
  });

  test('json and ndjson keep them numbers, exactly', async () => {
    const ndjson = await list('-o', 'ndjson');
    // --columns id,author.id projects json too: the exact numbers, nested as the service sent them
    assert.equal(ndjson.stdout, '{"id":9007199254740993,"author":{"id":1e999}}\n{"id":9007199254740992,"author":{"id":-1.5}}\n');
    const json = await runCli(['conversations', 'get', '9007199254740993', '-o', 'json'], { env: scriptedEnv(api) });
    assert.equal(json.stdout, '{\n  "id": 9007199254740993,\n  "url": "x",\n  "author": {\n    "id": 1e999\n  }\n}\n');
  });
});
