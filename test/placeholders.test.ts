/**
 * `--placeholders null`: the microblog placeholders as null (json, ndjson) or an empty cell (csv,
 * tsv), on content rows and on side-loaded content; `imported_date` among the content columns;
 * and the SQLite and DuckDB loads `carectl help formats` shows, run as written on a sandbox export.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { FIXTURES, HOSTILE, MICROBLOG_PLACEHOLDER_LINK } from '../src/sandbox/fixtures.js';
import { openSandbox, runCli, sandboxEnv } from './helpers.js';
import { describeRun, openShellSession, type ShellSession } from './shell.js';

describe('--placeholders null', () => {
  let sandbox: Sandbox;
  let id: string;
  before(async () => {
    sandbox = await openSandbox();
    // A conversation whose first item is a restricted microblog item (both placeholders), whose second is not.
    const byParent = new Map<string, string[]>();
    const links = new Map<string, string | null>();
    for (const conversation of sandbox.data.conversations) byParent.set(conversation.id, []);
    const list = await runCli(['conversations', 'content', '--status', 'closed', '-o', 'ndjson', '--columns', 'conversation_id,id,created_date,link'], {
      env: sandboxEnv(sandbox),
    });
    for (const line of list.stdout.trim().split('\n')) {
      const row = JSON.parse(line) as { conversation_id: string; id: string; created_date: string; link: string | null };
      byParent.get(row.conversation_id)?.push(row.id);
      links.set(row.id, row.created_date.startsWith('1970') && row.link === MICROBLOG_PLACEHOLDER_LINK ? 'placeholder' : row.link);
    }
    id = [...byParent].find(([, ids]) => ids.length === 2 && links.get(ids[0]!) === 'placeholder' && links.get(ids[1]!) !== 'placeholder')![0];
  });
  after(() => sandbox.close());

  const content = async (...flags: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    runCli(['conversations', 'content', id, '--columns', 'id,created_date,imported_date,link', ...flags], { env: sandboxEnv(sandbox) });

  it('writes the placeholders as null in json and ndjson, and as an empty cell in csv and tsv', async () => {
    const plain = JSON.parse((await content('-o', 'json')).stdout) as Array<Record<string, string | null>>;
    const [first, second] = plain as [Record<string, string>, Record<string, string>];
    assert.equal(first.created_date, '1970-01-01T00:00:00');
    assert.equal(first.link, MICROBLOG_PLACEHOLDER_LINK);
    const nulled = { ...first, created_date: null, link: null };
    const expected: Record<string, string> = {
      json: `${JSON.stringify([nulled, second], null, 2)}\n`,
      ndjson: `${JSON.stringify(nulled)}\n${JSON.stringify(second)}\n`,
      csv: `id,created_date,imported_date,link\r\n${first.id},,${first.imported_date},\r\n${second.id},${second.created_date},${second.imported_date},${second.link ?? ''}\r\n`,
      tsv: `id\tcreated_date\timported_date\tlink\n${first.id}\t\t${first.imported_date}\t\n${second.id}\t${second.created_date}\t${second.imported_date}\t${second.link ?? ''}\n`,
    };
    for (const format of ['json', 'ndjson', 'csv', 'tsv']) {
      const result = await content('-o', format, '--placeholders', 'null');
      assert.deepEqual([result.code, result.stderr, result.stdout], [0, '', expected[format]], format);
    }
  });

  it('keeps the data as the service sent it by default', async () => {
    const result = await content('-o', 'tsv', '--no-header');
    assert.match(result.stdout.split('\n')[0]!, /^\S+\t1970-01-01T00:00:00\t\S+\thttps:\/\/microblog\.example\/status\/unavailable#this-info-is-unavailable$/);
  });

  it('nulls the side-loaded content of a conversation (--include content), nothing else', async () => {
    const nulled = await runCli(['conversations', 'get', id, '--include', 'content', '-o', 'json', '--placeholders', 'null'], { env: sandboxEnv(sandbox) });
    const plain = await runCli(['conversations', 'get', id, '--include', 'content', '-o', 'json'], { env: sandboxEnv(sandbox) });
    const record = JSON.parse(plain.stdout) as { content: Array<Record<string, unknown>> };
    const want = { ...record, content: [{ ...record.content[0], created_date: null, link: null }, record.content[1]] };
    assert.deepEqual(JSON.parse(nulled.stdout), want);
  });

  it('is a usage error naming the accepted value, nothing sent', async () => {
    const start = sandbox.requests.length;
    const result = await content('-o', 'csv', '--placeholders', 'empty');
    assert.deepEqual([result.code, result.stdout, result.stderr], [2, '', 'carectl: --placeholders: "empty" is not one of null\n']);
    assert.equal(sandbox.requests.length, start);
  });

  it('lists imported_date among the default content columns', async () => {
    const result = await runCli(['conversations', 'content', id, '-o', 'csv'], { env: sandboxEnv(sandbox) });
    assert.equal(result.stdout.split('\r\n')[0], 'conversation_id,id,created_date,imported_date,platform,type,author.id,is_by_source,text');
  });
});

/** `duckdb DB SQL` through DuckDB's Python module where its command line is missing; undefined when neither is there. */
function duckdbCommand(): string | undefined {
  if (spawnSync('duckdb', ['-version']).status === 0) return 'duckdb';
  if (spawnSync('python3', ['-c', 'import duckdb']).status === 0) return `python3 -c 'import sys, duckdb; duckdb.connect(sys.argv[1]).execute(sys.argv[2])'`;
  return undefined;
}

describe('the loads help formats shows', () => {
  let sandbox: Sandbox;
  let session: ShellSession;
  const shell = (): ShellSession => session;
  before(async () => {
    sandbox = await openSandbox();
    session = await openShellSession(sandbox);
  });
  after(async () => {
    await session.close();
    await sandbox.close();
  });

  it('run as written on a sandbox export: SQLite and DuckDB hold the placeholders as NULL, and text as the service sent it', async (t) => {
    // A closed conversation whose reply is a formula, as a stranger's text may be.
    const hostile = sandbox.data.byId.conversations.get(FIXTURES.hostile.conversationId)!;
    hostile.status = 'closed';
    sandbox.data.revision++;
    const formulaItem = sandbox.data.fixedContent.get(hostile.id)!.find((item) => item.text === HOSTILE.formulaHyperlink)!;
    const help = await shell().run('carectl help formats');
    // The example lines, continuation lines included, as a user copies them into a shell.
    const commands = help.stdout
      .split(/\n(?= {2}\$ )/)
      .filter((block) => block.startsWith('  $ '))
      .map((block) =>
        block
          .split('\n')
          .filter((line, index) => index === 0 || line.startsWith('      '))
          .join('\n')
          .slice(4),
      );
    assert.equal(commands.length, 3, help.stdout);
    const [exported, sqlite, duck] = commands as [string, string, string];
    const run = async (line: string, prefix = ''): Promise<void> => {
      const result = await shell().run(`${prefix}${line}`);
      assert.equal(result.code, 0, describeRun(line, result));
    };
    await run(exported);
    const rows = (await shell().run('cat messages.csv')).stdout.split('\r\n').slice(1, -1);
    const empty = rows.filter((row) => row.split(',')[2] === '').length;
    assert.ok(empty > 0 && empty < rows.length);

    if (spawnSync('sqlite3', ['-version']).status !== 0) t.diagnostic('sqlite3 is not installed: the SQLite load is not run');
    else {
      await run(sqlite);
      const counted = await shell().run(`sqlite3 care.db "SELECT count(*), count(created_date), count(imported_date) FROM messages"`);
      assert.equal(counted.stdout, `${rows.length}|${rows.length - empty}|${rows.length}\n`);
      const formula = await shell().run(`sqlite3 care.db "SELECT text FROM messages WHERE id = '${formulaItem.id}'"`);
      assert.equal(formula.stdout, `${HOSTILE.formulaHyperlink}\n`);
    }

    const duckdb = duckdbCommand();
    if (duckdb === undefined) t.diagnostic('neither the duckdb command nor its Python module is installed: the DuckDB load is not run');
    else {
      // Where only the Python module is there, `duckdb` is a function calling it with the same arguments.
      const python = process.env.PYTHONPATH ? `export PYTHONPATH='${process.env.PYTHONPATH}'; ` : '';
      const shim = duckdb === 'duckdb' ? '' : `${python}duckdb() { ${duckdb} "$@"; }; `;
      await run(duck, shim);
      const check = `SELECT count(*), count(created_date), typeof(created_date), typeof(imported_date) FROM messages GROUP BY ALL`;
      const counted = await shell().run(
        `${python}python3 -c 'import sys, duckdb; print(duckdb.connect(sys.argv[1]).execute(sys.argv[2]).fetchall())' care.duckdb "${check}" 2>/dev/null || duckdb -csv -noheader care.duckdb "${check}"`,
      );
      assert.match(
        counted.stdout,
        new RegExp(
          `^(\\[\\(${rows.length}, ${rows.length - empty}, 'TIMESTAMP', 'TIMESTAMP'\\)\\]|${rows.length},${rows.length - empty},TIMESTAMP,TIMESTAMP)\\n$`,
        ),
      );
    }
  });
});
