/**
 * `conversations content` beyond one conversation: every item of every conversation the list
 * filters match (or of ids from stdin), one row each with its conversation_id, through the list
 * engine (resumable, parallel); and `list --include content` in a row format saying where the items are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { itemTime } from '../src/api/catalogue/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox();
});
after(() => sandbox.close());

type Row = Record<string, unknown>;

/** conversation_id and item id of every item of the conversations, each thread oldest first: the oracle from -o json --include content. */
async function expectedRows(filters: string[]): Promise<string> {
  const json = await runCli(['conversations', 'list', ...filters, '--include', 'content', '-o', 'json', '--quiet'], { sandbox });
  assert.equal(json.code, 0, json.stderr);
  const records = JSON.parse(json.stdout) as Row[];
  return records
    .flatMap((record) =>
      [...((record.content as Row[] | undefined) ?? [])]
        .sort((a, b) => (itemTime(a) < itemTime(b) ? -1 : itemTime(a) > itemTime(b) ? 1 : 0))
        .map((item) => `${String(record.id)}\t${String(item.id)}\n`),
    )
    .join('');
}

describe('conversations content by list filters or ids', () => {
  test('the list filters: one row per item of every matching conversation, with its conversation_id', async () => {
    const filters = ['--status', 'closed'];
    const want = await expectedRows(filters);
    assert.ok(want.split('\n').length > 50, 'many items');
    const result = await runCli(['conversations', 'content', ...filters, '--columns', 'conversation_id,id', '--parallel', '4'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'conversation_id\tid\n' + want);
    const csv = await runCli(['conversations', 'content', ...filters, '-o', 'csv', '--limit', '1'], { sandbox });
    assert.match(csv.stdout, /^conversation_id,id,created_date,imported_date,platform,type,author\.id,is_by_source,text\r\n/);
  });

  test("ids from stdin, a list's header line included", async () => {
    const ids = await runCli(['conversations', 'list', '--status', 'on_hold', '--columns', 'id', '--limit', '7', '--quiet'], { sandbox });
    const want = await expectedRows(['--status', 'on_hold', '--limit', '7']);
    const result = await runCli(['conversations', 'content', '-', '--columns', 'conversation_id,id'], { sandbox, stdin: ids.stdout });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'conversation_id\tid\n' + want);
  });

  test('one id, several ids and ids from stdin give rows of one shape, each with its conversation_id', async () => {
    for (const format of ['json', 'csv', 'tsv']) {
      const one = await runCli(['conversations', 'content', '500002', '-o', format], { sandbox });
      assert.equal(one.code, 0, one.stderr);
      const piped = await runCli(['conversations', 'content', '-', '-o', format], { sandbox, stdin: '500002\n' });
      assert.equal(one.stdout, piped.stdout, format);
    }
    const json = await runCli(['conversations', 'content', '500002', '-o', 'json', '--columns', 'conversation_id'], { sandbox });
    const rows = JSON.parse(json.stdout) as Row[];
    assert.ok(rows.length > 1 && rows.every((row) => row.conversation_id === '500002'), json.stdout);
  });

  test('a run that fails part-way continues with --resume: no item lost or repeated', async () => {
    const argv = ['conversations', 'content', '--status', 'closed', '--columns', 'conversation_id,id', '--page-size', '5', '--retries', '0'];
    const whole = await runCli(argv, { sandbox });
    sandbox.setFaults({ failListAfterPages: 3 });
    let first;
    try {
      first = await runCli(argv, { sandbox });
    } finally {
      sandbox.setFaults(undefined);
    }
    assert.equal(first.code, 1, first.stderr);
    const token = /--resume (\S+)/.exec(first.stderr)?.[1];
    assert.ok(token, first.stderr);
    const rest = await runCli([...argv, '--resume', token], { sandbox });
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(first.stdout + rest.stdout, whole.stdout);
  });

  test('ids and filters together are a usage error, nothing sent', async () => {
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'content', '500002', '--status', 'closed'], { sandbox });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /ids or list filters/);
    assert.equal(apiRequests(sandbox, from).length, 0);
  });
});

describe('list --include content in a row format', () => {
  test('says where the items are instead of dropping them silently; json and --columns content.* say nothing', async () => {
    const csv = await runCli(['conversations', 'list', '--status', 'closed', '--include', 'content', '-o', 'csv', '--limit', '1'], { sandbox });
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(
      csv.stderr,
      /^--include content: csv rows hold each conversation's own fields; the included items are in -o json or -o ndjson, or one row per content item with carectl conversations content and the same filters$/m,
    );
    const json = await runCli(['conversations', 'list', '--status', 'closed', '--include', 'content', '-o', 'json', '--limit', '1', '--quiet'], { sandbox });
    assert.equal(json.stderr, '');
    const columns = await runCli(
      ['conversations', 'list', '--status', 'closed', '--include', 'content', '-o', 'csv', '--limit', '1', '--columns', 'id,content.text'],
      { sandbox },
    );
    assert.doesNotMatch(columns.stderr, /--include/);
  });
});
