/**
 * `carectl help columns RESOURCE` and `--columns help` (issue 49 item 6): the columns and dotted
 * paths a resource's rows offer, as help (stdout, exit 0, nothing sent); every one of them taken
 * by --columns against the sandbox, and the paths the user found only in an error message
 * (channels.name of message rows) among them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RESOURCES } from '../src/catalogue/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { displayWidth } from '../src/output/width.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';
import { carectlTree } from '../src/program.js';
import { allCommands, isLeaf } from '../src/docs/tree.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox();
});
after(() => sandbox.close());

/** The columns and paths a help lists: the first word of each line indented by two. */
function listed(help: string): string[] {
  return [...help.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!);
}

const CLOSING =
  "A dotted path reaches inside a field: on a list it takes each element's\n(tags.name), a number picks one (channels.0.name); any path inside a column\nabove is taken as the service sends the field.\n";

describe('help columns RESOURCE', () => {
  test('tags: its columns, the defaults marked, on stdout, exit 0', async () => {
    const result = await runCli(['help', 'columns', 'tags']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.equal(
      result.stdout,
      [
        'The columns of tags list and get, for --columns LIST (comma-separated); those',
        'marked default are shown without it.',
        '',
        '  id         default',
        '  url',
        '  name       default',
        '  is_active  default',
        '',
        CLOSING,
      ].join('\n'),
    );
  });

  test("content: the message rows' columns, with the dotted paths inside their references (channels.name)", async () => {
    const result = await runCli(['help', 'columns', 'content']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^The columns of conversations content, for --columns LIST/);
    assert.match(result.stdout, /\n {2}conversation_id {2,}default\n {2}id {2,}default\n {2}parent\n/);
    assert.match(result.stdout, /\n {2}channels\n {2}channels\.id\n {2}channels\.url\n {2}channels\.name\n {2}channels\.platform_id\n/);
    assert.match(result.stdout, /\n {2}author\n {2}author\.id {2,}default\n {2}author\.url\n/);
    assert.match(result.stdout, /\n {2}sentiment\.created_by\.id\n/);
    // What it lists, a message row has: the channel's name.
    const rows = await runCli(['conversations', 'content', '500002', '--columns', 'id,channels.name', '-o', 'tsv'], { sandbox });
    assert.equal(
      rows.stdout,
      'id\tchannels.name\n5000021\t["Acme Microblog"]\n5000022\t["Acme Microblog"]\n5000023\t["Acme Microblog"]\n5000024\t["Acme Facebook"]\n',
    );
  });

  test('notes from the description: a field of the single reply only, side-loaded keys, a computed column', async () => {
    assert.match((await runCli(['help', 'columns', 'teams'])).stdout, /\n {2}is_active {2,}get only\n/);
    // and the paths inside such a field
    assert.match(
      (await runCli(['help', 'columns', 'users'])).stdout,
      /\n {2}account {2,}get only\n {2}account\.id {2,}get only\n {2}account\.url {2,}get only\n/,
    );
    assert.match((await runCli(['help', 'columns', 'conversations'])).stdout, /\n {2}content_ids {2,}with --include\n/);
    assert.match(
      (await runCli(['help', 'columns', 'reports'])).stdout,
      /\n {2}state {2,}default; made by carectl from generation_start_date,\n {20,}generated_date,/,
    );
  });

  test('every column and path listed is one --columns takes: a row of each list against the sandbox', async () => {
    for (const spec of RESOURCES.filter((each) => each.verbs.includes('list') && !each.listByIds)) {
      const help = await runCli(['help', 'columns', spec.name]);
      // A field of the single reply is a column of get, not of list.
      const columns = listed(help.stdout).filter((column) => !new RegExp(`\\n {2}${column} +get only\\n`).test(help.stdout));
      for (const column of spec.defaultColumns)
        assert.match(help.stdout, new RegExp(`\\n {2}${column.replaceAll('.', '\\.')} +default`), `${spec.name}: ${column}`);
      const extra = spec.name === 'conversations' ? ['--status', 'closed'] : [];
      const result = await runCli([spec.name, 'list', ...extra, '--columns', columns.join(','), '--limit', '1', '-o', 'tsv'], { sandbox });
      assert.equal(result.code, 0, `${spec.name}: ${result.stderr}`);
      assert.equal(result.stdout.split('\n')[0], columns.join('\t'));
    }
    const content = listed((await runCli(['help', 'columns', 'content'])).stdout);
    const rows = await runCli(['conversations', 'content', '500002', '--columns', content.join(','), '-o', 'tsv'], { sandbox });
    assert.equal(rows.code, 0, rows.stderr);
  });

  test('a group by an alias or its singular, as its commands are named', async () => {
    const conversations = (await runCli(['help', 'columns', 'conversations'])).stdout;
    assert.match(conversations, /^The columns of conversations list and get, /);
    assert.equal((await runCli(['help', 'columns', 'conv'])).stdout, conversations);
    assert.equal((await runCli(['help', 'columns', 'tag'])).stdout, (await runCli(['help', 'columns', 'tags'])).stdout);
  });

  test('an unknown RESOURCE, or none, is exit 2 naming the accepted values', async () => {
    const accepted = 'accepted: authors, conversations, channels, accounts, teams, queues, tags, users, reports, annotation-types, annotations, content';
    const unknown = await runCli(['help', 'columns', 'messages']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stdout, '');
    assert.equal(unknown.stderr, `carectl: help columns: no resource "messages"; ${accepted}\n`);
    const none = await runCli(['help', 'columns']);
    assert.equal(none.code, 2);
    assert.equal(none.stderr, `carectl: help columns: name one resource; ${accepted}\n`);
  });

  test('at 40 columns on a terminal every line fits', async () => {
    for (const name of ['reports', 'content', 'conversations']) {
      const result = await runCli(['help', 'columns', name], { stdoutTTY: true, columns: 40 });
      assert.equal(result.code, 0, result.stderr);
      assert.ok(listed(result.stdout).length > 10, result.stdout);
      for (const line of result.stdout.split('\n')) assert.ok(displayWidth(line) <= 40, `${name}: ${line}`);
    }
  });
});

describe('--columns help', () => {
  test("on a list, a get and content: that command's columns, as help columns gives them; nothing read or sent, no credentials needed", async () => {
    const from = sandbox.requests.length;
    for (const [argv, resource] of [
      [['conversations', 'list', '--status', 'closed'], 'conversations'],
      [['tags', 'get', '7005'], 'tags'],
      [['conversations', 'content', '--newest', '7d..today'], 'content'],
      [['conversations', 'content', '500002'], 'content'],
      [['reports', 'ls'], 'reports'],
    ] as const) {
      const want = (await runCli(['help', 'columns', resource])).stdout;
      for (const env of [undefined, { CARECTL_BASE_URL: sandbox.baseUrl }]) {
        const result = await runCli([...argv, '--columns', 'help', '-o', 'csv'], { sandbox, ...(env && { env }) });
        assert.equal(result.code, 0, `${argv.join(' ')}: ${result.stderr}`);
        assert.equal(result.stderr, '');
        assert.equal(result.stdout, want, argv.join(' '));
      }
      const bare = await runCli([...argv, '--columns', 'help']);
      assert.equal(bare.code, 0, `${argv.join(' ')} with no credentials: ${bare.stderr}`);
    }
    assert.equal(apiRequests(sandbox, from).length, 0);
  });

  test('on a get without an id, as with one (every resource, and reports): no "missing argument", exit 0, nothing sent', async () => {
    const from = sandbox.requests.length;
    for (const spec of RESOURCES.filter((each) => each.verbs.includes('get'))) {
      const want = (await runCli(['help', 'columns', spec.name])).stdout;
      const result = await runCli([spec.name, 'get', '--columns', 'help'], { sandbox });
      assert.deepEqual(result, { code: 0, stdout: want, stderr: '' }, spec.name);
    }
    assert.equal(apiRequests(sandbox, from).length, 0);
  });

  test('every command with a required argument, given none and --columns help: its columns, or exit 2 as the command does not take it', async () => {
    const commands = allCommands(carectlTree()).filter((command) => isLeaf(command) && command.usage.includes(' <'));
    assert.ok(commands.length > 10, String(commands.length));
    for (const { path } of commands) {
      const result = await runCli([...path, '--columns', 'help']);
      if (result.code === 0) assert.match(result.stdout, /^The columns of /, path.join(' '));
      else assert.deepEqual(result, { code: 2, stdout: '', stderr: `carectl: --columns: \`carectl ${path.join(' ')}\` does not take it\n` }, path.join(' '));
    }
  });

  test('every command taking ids, given none (a script that piped nothing): exit 2 saying the two ways to give them; nothing sent', async () => {
    const commands = allCommands(carectlTree()).filter((command) => isLeaf(command) && command.usage.includes('<ids...>'));
    assert.ok(commands.length >= 8, String(commands.length));
    const from = sandbox.requests.length;
    for (const { path } of commands) {
      const result = await runCli([...path], { sandbox });
      const want = "carectl: missing required argument 'ids': give ids, or - to read them from standard input\n";
      assert.deepEqual(result, { code: 2, stdout: '', stderr: want }, path.join(' '));
    }
    assert.equal(apiRequests(sandbox, from).length, 0);
    const report = await runCli(['reports', 'wait'], { sandbox });
    assert.deepEqual(report, { code: 2, stdout: '', stderr: "carectl: missing required argument 'id'\n" });
  });

  test("on conversations update: its result rows' columns, with or without ids; nothing read or sent", async () => {
    const from = sandbox.requests.length;
    const want = [
      'The columns of conversations update, for --columns LIST (comma-separated); those',
      'marked default are shown without it.',
      '',
      '  id             default',
      '  ok             default',
      '  status         default',
      '  tags           default',
      '  dropped        default with --drop-inactive-tags',
      '  error',
      '  error.kind     default but in a table',
      '  error.status   default but in a table',
      '  error.message  default but in a table',
      '  result         default in a table; made by carectl from ok, error, dropped',
      '',
      'error is null where ok is true. With --dry-run a row is the request it would',
      'send: id, method, path, body (and dropped).',
      '',
    ].join('\n');
    for (const ids of [[], ['500002'], ['-']]) {
      const result = await runCli(['conversations', 'update', ...ids, '--status', 'on_hold', '--columns', 'help'], { sandbox, stdin: '500002\n' });
      assert.deepEqual(result, { code: 0, stdout: want, stderr: '' }, ids.join(' '));
    }
    assert.equal(apiRequests(sandbox, from).length, 0);
    // each column listed is one it takes
    const rows = await runCli(['conversations', 'update', '500002', '--status', 'on_hold', '--columns', 'id,ok,dropped,error.kind,result', '-o', 'csv'], {
      sandbox,
    });
    assert.deepEqual(rows, { code: 0, stdout: 'id,ok,dropped,error.kind,result\r\n500002,true,,,ok\r\n', stderr: '' });
  });

  test('a column it does not offer: exit 2 with the closest one, its path kept, and where they are all listed; nothing sent', async () => {
    const from = sandbox.requests.length;
    const accepted =
      'accepted: id, url, status, is_priority, contains_private, tags, author, channels, assigned_to, handling_times, close_reason, content, content_ids, context_ids, unarchived_content_ids, notes, note_ids, actions, action_ids (dotted paths allowed; --columns help lists them)';
    const typo = await runCli(['conversations', 'list', '--status', 'closed', '--columns', 'id,chanel.name'], { sandbox });
    assert.deepEqual(typo, { code: 2, stdout: '', stderr: `carectl: --columns: unknown column "chanel.name" (closest: channels.name); ${accepted}\n` });
    const far = await runCli(['conversations', 'list', '--status', 'closed', '--columns', 'id,subject'], { sandbox });
    assert.deepEqual(far, { code: 2, stdout: '', stderr: `carectl: --columns: unknown column "subject"; ${accepted}\n` });
    assert.equal(apiRequests(sandbox, from).length, 0);
  });
});
