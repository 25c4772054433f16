/**
 * `conversations content` beyond one conversation: every item of every conversation the list
 * filters match (or of ids from stdin), one row each with its conversation_id, through the list
 * engine (resumable, parallel); and `list --include content` in a row format saying where the items are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { itemTime } from '../src/catalogue/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

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

describe('conversations content --created RANGE: the items, filtered by carectl', () => {
  // The sandbox's anchor day, noon: 7d..today is 2026-06-23..2026-06-30.
  const now = (): number => Date.parse('2026-06-30T12:00:00Z');
  const PLACEHOLDER = '1970-01-01T00:00:00';
  /** The day an item was written, read off its row by the spec's rule: a restricted item's import date stands in for its placeholder. */
  const dayOf = (row: string): string => {
    const [, , created = '', imported = ''] = row.split('\t');
    return (created === PLACEHOLDER ? imported : created).slice(0, 10);
  };
  const columns = ['--columns', 'conversation_id,id,created_date,imported_date'];

  test('--newest picks the conversations, --created their items: each item of the week, none older', async () => {
    const conversationsOfTheWeek = ['conversations', 'content', '--newest', '7d..today', ...columns];
    const all = await runCli(conversationsOfTheWeek, { sandbox, now });
    assert.equal(all.code, 0, all.stderr);
    const [header, ...rows] = all.stdout.trimEnd().split('\n');
    const week = rows.filter((row) => dayOf(row) >= '2026-06-23' && dayOf(row) <= '2026-06-30');
    assert.ok(week.length > 20 && week.length < rows.length, `some items of these conversations are older: ${rows.length - week.length}`);
    assert.ok(
      week.some((row) => row.split('\t')[2] === PLACEHOLDER),
      'restricted items, by their import date',
    );
    const filtered = await runCli([...conversationsOfTheWeek, '--created', '7d..today'], { sandbox, now });
    assert.equal(filtered.code, 0, filtered.stderr);
    assert.equal(filtered.stderr, '');
    assert.equal(filtered.stdout, [header, ...week].join('\n') + '\n');
    // The same rows, by ids from stdin.
    const ids = [...new Set(rows.map((row) => row.split('\t')[0]))].join('\n');
    const piped = await runCli(['conversations', 'content', '-', ...columns, '--created', '7d..today'], { sandbox, now, stdin: ids });
    assert.equal(piped.stdout, filtered.stdout);
  });

  test('one conversation: a restricted item goes by its import date, any other by its creation date, to the second', async () => {
    const thread = async (range: string): Promise<string> => {
      const result = await runCli(['conversations', 'content', '500002', '--columns', 'id', '--no-header', '--created', range], { sandbox, now });
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    // 5000021 and 5000022: restricted, imported 10:00:42 and 10:02:42; 5000023 created 10:07:00 (imported 10:07:42); 5000024 created 10:20:00.
    assert.equal(await thread('2026-06-25T10:01:00..'), '5000022\n5000023\n5000024\n');
    assert.equal(await thread('gt:2026-06-25T10:07:00'), '5000024\n');
    assert.equal(await thread('gte:2026-06-25T10:07:00,lt:2026-06-25T10:20:00'), '5000023\n');
    assert.equal(await thread('..2026-06-25T10:00:42'), '5000021\n');
    const none = await runCli(['conversations', 'content', '500002', '--created', '..2026-06-24'], { sandbox, now });
    assert.equal(none.code, 0);
    assert.equal(none.stdout, 'conversation_id\tid\tcreated_date\timported_date\tplatform\ttype\tauthor.id\tis_by_source\ttext\n');
    assert.equal(none.stderr, '--created ..2026-06-24: no content item falls in it\n');
  });

  test('a --resume token holds to the --created it was printed with', async () => {
    const argv = [
      'conversations',
      'content',
      '--status',
      'closed',
      '--columns',
      'conversation_id,id',
      '--page-size',
      '5',
      '--retries',
      '0',
      '--created',
      '30d..',
    ];
    const whole = await runCli(argv, { sandbox, now });
    sandbox.setFaults({ failListAfterPages: 3 });
    let first;
    try {
      first = await runCli(argv, { sandbox, now });
    } finally {
      sandbox.setFaults(undefined);
    }
    const token = /--resume (\S+)/.exec(first.stderr)?.[1];
    assert.ok(token, first.stderr);
    const other = await runCli([...argv.slice(0, -1), '60d..', '--resume', token], { sandbox, now });
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /--resume: the token belongs to a different command/);
    const rest = await runCli([...argv, '--resume', token], { sandbox, now });
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(first.stdout + rest.stdout, whole.stdout);
  });

  test('a RANGE that is not one is exit 2 naming the flag and the forms, nothing sent', async () => {
    const from = sandbox.requests.length;
    const bad = await runCli(['conversations', 'content', '500002', '--created', 'last week'], { sandbox, now });
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr,
      'carectl: --created: "last week" is not a range; use FROM..TO, FROM.., ..TO, or gt:DATE, gte:DATE, lt:DATE, lte:DATE (two joined by a comma)\n',
    );
    // one DATE where a RANGE goes (the last 7 days, as the user meant): the ranges it can start, end or be
    const day = await runCli(['conversations', 'content', '500002', '--created', '7d'], { sandbox, now });
    assert.deepEqual(day, {
      code: 2,
      stdout: '',
      stderr: 'carectl: --created: "7d" is one date, not a range: 7d.. (from it on), ..7d (up to it) or 7d..7d (that alone)\n',
    });
    const backwards = await runCli(['conversations', 'content', '--status', 'closed', '--created', '2026-06-30..2026-06-01'], { sandbox, now });
    assert.equal(backwards.code, 2);
    assert.equal(backwards.stderr, 'carectl: --created: "2026-06-30..2026-06-01" matches no date; the start is after the end\n');
    assert.equal(apiRequests(sandbox, from).length, 0);
  });

  test("a service's restricted items: by imported_date, whatever their placeholder; one with no date to go by is left out and counted", async () => {
    const item = (id: string, dates: Record<string, string>, platform = 'microblog'): Row => ({ id, parent: '9', platform, type: 'post', ...dates });
    const content = [
      item('1', { created_date: PLACEHOLDER, imported_date: '2026-06-22T23:59:59.999' }),
      item('2', { created_date: PLACEHOLDER, imported_date: '2026-06-23T00:00:00.000' }),
      item('3', { created_date: PLACEHOLDER }),
      // A placeholder with fractional seconds is still one.
      item('4', { created_date: `${PLACEHOLDER}.000`, imported_date: '2026-06-30T23:59:59.999' }),
      item('5', { created_date: '2026-06-22T23:59:59', imported_date: '2026-06-23T00:00:03.000' }, 'facebook'),
      item('6', { created_date: '2026-06-30T23:59:59', imported_date: '2026-07-01T00:00:04.000' }, 'facebook'),
      item('7', { created_date: '2026-07-01T00:00:00', imported_date: '2026-07-01T00:00:01.000' }, 'facebook'),
      item('8', { created_date: 'not a date' }, 'facebook'),
    ];
    const api = await scriptedApi(() => ({ json: { conversation: { id: '9', content_ids: content.map((each) => each.id) }, content } }));
    try {
      const result = await runCli(['conversations', 'content', '9', '--columns', 'id', '--no-header', '--created', '2026-06-23..2026-06-30'], {
        env: scriptedEnv(api),
        now,
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '2\n6\n4\n');
      assert.equal(result.stderr, '--created: left out 2 content items with no date to go by\n');
      assert.equal(api.requests.length, 1);
      assert.match(api.requests[0]!.url, /^\/v1\.3\/conversations\/9\?/);
    } finally {
      await api.close();
    }
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
