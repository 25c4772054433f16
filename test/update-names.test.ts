/**
 * issue 49 (1–3): what `conversations update` says of tags. A table shows the names carectl read
 * for the tag ids (scripts' formats keep the ids); a refusal of a kept inactive tag names every
 * inactive tag of the conversation, and says what carectl did with its tags.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await openSandbox();
});
afterEach(() => sandbox.close());

const tagsOf = (id: string): string[] => sandbox.data.byId.conversations.get(id)!.tag_ids;

describe('update rows at a terminal: tag names', () => {
  // 500004: returns-question (7022), fraud-request (7006), privacy-request (7062); 500011:
  // login-urgent (7023), login-request (7055), fraud-request (7006). Given by name.
  const ARGV = [
    'conversations',
    'update',
    '500004',
    '500011',
    '999999',
    '--status',
    'on_hold',
    '--add-tags',
    'praise-follow-up',
    '--remove-tags',
    'fraud-request',
  ];
  const TABLES: Record<number, string> = {
    60:
      'ID      OK     STATUS   TAGS                          RESULT\n' +
      '500004  true   on_hold  returns-question,privacy-re…  ok\n' +
      '500011  true   on_hold  login-urgent,login-request,…  ok\n' +
      '999999  false\n' +
      "        not_found: No conversation with id '999999' (HTTP\n" +
      '        404)\n',
    80:
      'ID      OK     STATUS   TAGS                                              RESULT\n' +
      '500004  true   on_hold  returns-question,privacy-request,praise-follow-…  ok\n' +
      '500011  true   on_hold  login-urgent,login-request,praise-follow-up       ok\n' +
      '999999  false\n' +
      "        not_found: No conversation with id '999999' (HTTP 404)\n",
    160:
      'ID      OK     STATUS   TAGS                                               RESULT\n' +
      '500004  true   on_hold  returns-question,privacy-request,praise-follow-up  ok\n' +
      '500011  true   on_hold  login-urgent,login-request,praise-follow-up        ok\n' +
      "999999  false                                                              not_found: No conversation with id '999999' (HTTP 404)\n",
  };
  for (const [columns, expected] of Object.entries(TABLES)) {
    test(`a table at ${columns} columns shows the tags by name`, async () => {
      assert.deepEqual(
        [tagsOf('500004'), tagsOf('500011')],
        [
          ['7022', '7006', '7062'],
          ['7023', '7055', '7006'],
        ],
        'the fixture this layout was written for',
      );
      const result = await runCli(['--no-color', ...ARGV, '--parallel', '1'], { sandbox, stdoutTTY: true, columns: Number(columns) });
      assert.equal(result.code, 4);
      assert.equal(result.stdout, expected);
    });
  }

  // 500021 carries refund-urgent (7024) and login-info (7016), both inactive, and order-question (7028).
  const DROPPED: Record<number, string> = {
    60: 'ID      OK    STATUS   TAGS            DROPPED\n' + '500021  true  on_hold  order-question  refund-urgent,login-…\n',
    80:
      'ID      OK    STATUS   TAGS            DROPPED                   RESULT\n' +
      '500021  true  on_hold  order-question  refund-urgent,login-info\n' +
      '        ok; left out inactive refund-urgent, login-info\n',
    160:
      'ID      OK    STATUS   TAGS            DROPPED                   RESULT\n' +
      '500021  true  on_hold  order-question  refund-urgent,login-info  ok; left out inactive refund-urgent, login-info\n',
  };
  for (const [columns, expected] of Object.entries(DROPPED)) {
    test(`--drop-inactive-tags at ${columns} columns: what was left out, by name`, async () => {
      const argv = ['--no-color', 'conversations', 'update', '500021', '--status', 'on_hold', '--drop-inactive-tags'];
      const result = await runCli(argv, { sandbox, stdoutTTY: true, columns: Number(columns) });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, expected);
    });
  }

  test('json, ndjson, csv and tsv keep the ids', async () => {
    const ndjson = await runCli(['-o', 'ndjson', ...ARGV, '--columns', 'id,tags'], { sandbox });
    assert.equal(ndjson.code, 4);
    const rows = [
      { id: '500004', tags: ['7022', '7062', '7005'] },
      { id: '500011', tags: ['7023', '7055', '7005'] },
      { id: '999999', tags: null },
    ];
    assert.equal(ndjson.stdout, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
    const json = await runCli(['-o', 'json', ...ARGV, '--columns', 'id,tags'], { sandbox });
    assert.deepEqual(JSON.parse(json.stdout), rows);
    const csv = await runCli(['-o', 'csv', ...ARGV, '--columns', 'id,tags'], { sandbox });
    assert.equal(csv.stdout, 'id,tags\r\n500004,"[""7022"",""7062"",""7005""]"\r\n500011,"[""7023"",""7055"",""7005""]"\r\n999999,\r\n');
    // tsv, also when stdout is a terminal's (a format chosen is what a script reads)
    const tsv = await runCli(['-o', 'tsv', ...ARGV, '--columns', 'id,tags'], { sandbox, stdoutTTY: true, columns: 80 });
    assert.equal(tsv.stdout, 'id\ttags\n500004\t["7022","7062","7005"]\n500011\t["7023","7055","7005"]\n999999\t\n');
  });

  // A status-only update reads no tags list; the names come with the conversation read before its PATCH.
  const STATUS_ONLY = ['--no-color', 'conversations', 'update', '500004', '500011', '--status', 'on_hold', '--parallel', '1'];

  test('a status-only update: the names the service sent with each conversation, and no tags list read', async () => {
    const from = sandbox.requests.length;
    const result = await runCli(STATUS_ONLY, { sandbox, stdoutTTY: true, columns: 80 });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      'ID      OK    STATUS   TAGS                                            RESULT\n' +
        '500004  true  on_hold  returns-question,fraud-request,privacy-request  ok\n' +
        '500011  true  on_hold  login-urgent,login-request,fraud-request        ok\n',
    );
    assert.deepEqual(
      apiRequests(sandbox, from).map((request) => `${request.method} ${request.url.split('?')[0]}`),
      ['GET /v1.3/conversations/500004', 'PATCH /v1.3/conversations/500004', 'GET /v1.3/conversations/500011', 'PATCH /v1.3/conversations/500011'],
    );
    const csv = await runCli([...STATUS_ONLY, '-o', 'csv', '--columns', 'id,tags'], { sandbox });
    assert.equal(csv.stdout, 'id,tags\r\n500004,"[""7022"",""7006"",""7062""]"\r\n500011,"[""7023"",""7055"",""7006""]"\r\n');
  });

  test('a status-only update against a service that sends {id, url} tags (as the spec has it): ids, and names where it sends them', async () => {
    const api = await scriptedApi((request) => {
      const id = /conversations\/([^/?]+)/.exec(request.url)?.[1] ?? '';
      const tags = [
        { id: '7001', url: 'x' },
        { id: '7002', url: 'x', name: 'vip' },
      ];
      return { json: { conversation: { id, url: 'x', ...(request.method === 'GET' && { tags }) } } };
    });
    try {
      const result = await runCli([...STATUS_ONLY, '--retries', '0'], { env: scriptedEnv(api), stdoutTTY: true, columns: 80 });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'ID      OK    STATUS   TAGS      RESULT\n500004  true  on_hold  7001,vip  ok\n500011  true  on_hold  7001,vip  ok\n');
      assert.ok(!api.requests.some((request) => request.url.includes('/tags')));
    } finally {
      await api.close();
    }
  });
});

describe('a refused kept tag: every inactive tag of the conversation named, and what carectl did', () => {
  // 500021 carries refund-urgent (7024) and login-info (7016), both inactive, and order-question (7028).
  const REFUSED =
    "Tag 7024 is inactive (HTTP 400); carectl kept the conversation's tags, and the service refuses refund-urgent (7024), login-info (7016): --drop-inactive-tags leaves them out";

  test('a status-only update: the row names both (the tags list read once the service refused)', async () => {
    assert.deepEqual(tagsOf('500021'), ['7024', '7028', '7016'], 'the fixture');
    const from = sandbox.requests.length;
    const result = await runCli(['-o', 'ndjson', 'conversations', 'update', '500021', '--status', 'on_hold'], { sandbox });
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      `${JSON.stringify({ id: '500021', ok: false, status: null, tags: null, error: { kind: 'refused', status: 400, message: REFUSED } })}\n`,
    );
    assert.equal(result.stderr, `carectl: 1 of 1 updates failed (first: 500021: ${REFUSED})\n`);
    assert.deepEqual(
      apiRequests(sandbox, from).map((r) => `${r.method} ${r.url.split('?')[0]}`),
      ['GET /v1.3/conversations/500021', 'PATCH /v1.3/conversations/500021', 'GET /v1.3/tags', 'GET /v1.3/tags'],
    );
  });

  const TABLES: Record<number, string> = {
    60:
      'ID      OK     STATUS   TAGS                          RESULT\n' +
      '500021  false\n' +
      '        refused: Tag 7024 is inactive (HTTP 400); carectl\n' +
      "        kept the conversation's tags, and the service\n" +
      '        refuses refund-urgent (7024), login-info (7016):\n' +
      '        --drop-inactive-tags leaves them out\n' +
      '500004  true   on_hold  returns-question,fraud-requ…  ok\n',
    80:
      'ID      OK     STATUS   TAGS                                            RESULT\n' +
      '500021  false\n' +
      '        refused: Tag 7024 is inactive (HTTP 400); carectl kept the\n' +
      "        conversation's tags, and the service refuses refund-urgent (7024),\n" +
      '        login-info (7016): --drop-inactive-tags leaves them out\n' +
      '500004  true   on_hold  returns-question,fraud-request,privacy-request  ok\n',
    160:
      'ID      OK     STATUS   TAGS                                            RESULT\n' +
      "500021  false                                                           refused: Tag 7024 is inactive (HTTP 400); carectl kept the conversation's tags, and the\n" +
      '                                                                        service refuses refund-urgent (7024), login-info (7016): --drop-inactive-tags leaves\n' +
      '                                                                        them out\n' +
      '500004  true   on_hold  returns-question,fraud-request,privacy-request  ok\n',
  };
  for (const [columns, expected] of Object.entries(TABLES)) {
    // No tag option: no tags list read before the rows; the names are those sent with the conversation.
    test(`a table at ${columns} columns`, async () => {
      const result = await runCli(['--no-color', 'conversations', 'update', '500021', '500004', '--status', 'on_hold', '--parallel', '1'], {
        sandbox,
        stdoutTTY: true,
        columns: Number(columns),
      });
      assert.equal(result.code, 1);
      assert.equal(result.stdout, expected);
    });
  }
});
