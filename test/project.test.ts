/** --columns for json and ndjson: only the listed keys, dotted paths as nested keys (as gh's --json). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { projector } from '../src/output/project.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';

describe('projector', () => {
  const record = {
    id: '7',
    url: 'u',
    author: { id: 'a', name: 'n' },
    tags: [{ id: 1, name: 'x' }, { id: 2 }],
    channels: [
      { name: 'c0', id: 10 },
      { name: 'c1', id: 11 },
    ],
    assigned_to: null,
  };

  test('dotted paths become nested keys, in the order given; a missing key is null', () => {
    assert.deepEqual(projector(['author.id', 'id', 'nothing', 'assigned_to.id'])(record), { author: { id: 'a' }, id: '7', nothing: null, assigned_to: null });
  });

  test('a name on an array keeps that key of each element; numbers pick elements, in the order named', () => {
    assert.deepEqual(projector(['tags.name'])(record), { tags: [{ name: 'x' }, { name: null }] });
    assert.deepEqual(projector(['channels.1.name', 'channels.0.id', 'channels.5.id'])(record), { channels: [{ name: 'c1' }, { id: 10 }] });
  });

  test('a shorter path keeps the whole value, whichever comes first', () => {
    assert.deepEqual(projector(['author', 'author.id'])(record), { author: { id: 'a', name: 'n' } });
    assert.deepEqual(projector(['author.id', 'author'])(record), { author: { id: 'a', name: 'n' } });
  });

  test('a segment named __proto__ is a key like any other, not a prototype', () => {
    const projected = projector(['author.__proto__'])(record);
    assert.equal(JSON.stringify(projected), '{"author":{"__proto__":null}}');
  });
});

describe('json and ndjson with --columns, end to end', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());

  test('-o json --columns prints only those keys, and asks the service for only their fields', async () => {
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'list', '--status', 'unread', '--limit', '2', '-o', 'json', '--columns', 'id,author.id,status', '--quiet'], {
      sandbox,
    });
    assert.equal(result.code, 0, result.stderr);
    const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ['id', 'author', 'status']);
      assert.deepEqual(Object.keys(row.author as object), ['id']);
      assert.equal(row.status, 'unread');
    }
    const [request] = apiRequests(sandbox, from);
    assert.equal(new URL(request!.url, 'http://x').searchParams.get('fields'), 'author,status');
  });

  test("-o ndjson --columns, computed columns included (a report's state)", async () => {
    const result = await runCli(['reports', 'list', '--limit', '2', '-o', 'ndjson', '--columns', 'id,state', '--quiet'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(lines.length, 2);
    for (const line of lines) assert.deepEqual(Object.keys(line), ['id', 'state']);
  });

  test('get -o json --columns keeps those keys of the one record', async () => {
    const result = await runCli(['tags', 'get', '7005', '-o', 'json', '--columns', 'name'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(Object.keys(JSON.parse(result.stdout) as object), ['name']);
  });

  test('without --columns json keeps whole records', async () => {
    const result = await runCli(['tags', 'get', '7005', '-o', 'json'], { sandbox });
    assert.ok(Object.keys(JSON.parse(result.stdout) as object).length > 2);
  });
});
