/**
 * Escaping: hostile text from strangers stays inert in every output format and on stderr
 * (control characters shown escaped, formulas quoted in csv, exact text kept in json).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { FIXTURES, HOSTILE, type Sandbox } from '../src/sandbox/index.js';
import { runCli, sandboxAndScratch } from './helpers.js';
import { json, localServer } from './scripted-server.js';

let sandbox: Sandbox;
sandboxAndScratch((opened) => (sandbox = opened));

/** Raw control characters a terminal would act on; `allowed` names the separators a format uses. */
function rawControls(text: string, allowed: string): string[] {
  return [...text].filter((char) => /[\u0000-\u001f\u007f-\u009f]/.test(char) && !allowed.includes(char));
}

describe("the sandbox's demo tags", () => {
  it("read as a care team's: every ordinary tag first, the four hostile ones last, escaped", async () => {
    const result = await runCli(['-o', 'tsv', 'tags', 'list'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    const [header, ...rows] = result.stdout.trimEnd().split('\n');
    assert.equal(header, 'id\tname\tis_active');
    const ordinary = rows.slice(0, -4);
    assert.ok(ordinary.length > 0);
    for (const row of ordinary) assert.match(row, /^\d+\t[a-z]+(-[a-z]+)+\t(true|false)$/);
    assert.deepEqual(rows.slice(-4), [
      '7071\t=HYPERLINK("http://evil.example","x")\ttrue',
      '7072\tvip\\x1b]52;c;ZWNobyBwd25lZA==\\x07\ttrue',
      '7073\t\\x1b[2J\\x1b[Hurgent\\x07\ttrue',
      '7074\t+1+1\ttrue',
    ]);
  });

  it('are named in the README as hostile on purpose, with the ids they have', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## The sandbox'));
    const tags = FIXTURES.hostile.tagIds;
    assert.match(
      section,
      new RegExp(
        `hostile values on purpose, after the ordinary\\s+ones: the last four tags \\(${tags[0]}–${tags[3]}\\), and conversation ${FIXTURES.hostile.conversationId} `,
      ),
    );
  });
});

describe('hostile text stays inert', () => {
  const hostileTags = (): Array<{ id: string; name: string }> =>
    sandbox.data.tags.filter((tag) => (FIXTURES.hostile.tagIds as readonly string[]).includes(tag.id));

  it('table shows control characters escaped, never raw', async () => {
    for (const argv of [
      ['tags', 'list', '--columns', 'id,name'],
      ['authors', 'get', FIXTURES.hostile.authorIds[0], '--columns', 'id,screen_name,real_name,location,description'],
      ['conversations', 'content', FIXTURES.hostile.conversationId],
    ]) {
      const result = await runCli(['--no-color', '-o', 'table', ...argv], { sandbox, stdoutTTY: true, columns: 400 });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(rawControls(result.stdout, '\n'), [], argv.join(' '));
    }
    const tags = await runCli(['--no-color', '-o', 'table', 'tags', 'list', '--columns', 'id,name'], { sandbox, stdoutTTY: true, columns: 400 });
    assert.ok(tags.stdout.includes('vip\\x1b]52;c;ZWNobyBwd25lZA==\\x07'), 'OSC 52 shown as text');
    assert.ok(tags.stdout.includes('\\x1b[2J\\x1b[Hurgent\\x07'), 'CSI clear screen and BEL shown as text');
  });

  it('tsv escapes control characters and never splits a value with a raw tab or newline', async () => {
    const columns = ['id', 'screen_name', 'real_name', 'location', 'description'];
    const result = await runCli(['-o', 'tsv', 'authors', 'get', FIXTURES.hostile.authorIds[0], '--columns', columns.join(',')], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(rawControls(result.stdout, '\t\n'), []);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    const cells = lines[1]?.split('\t') ?? [];
    assert.equal(cells.length, columns.length);
    assert.equal(cells[1], '\\x1b]8;;https://evil.example/\\x1b\\\\click\\x1b]8;;\\x1b\\\\');
    assert.equal(cells[2], 'ok\\rPWNED');
    assert.equal(cells[3], '\\x9b31mred');
    assert.equal(cells[4], 'col1\\tcol2\\nline2\\x7f\\x07');

    const content = await runCli(['-o', 'tsv', 'conversations', 'content', FIXTURES.hostile.conversationId], { sandbox });
    assert.equal(content.code, 0, content.stderr);
    assert.deepEqual(rawControls(content.stdout, '\t\n'), []);
    const [header, ...rows] = content.stdout.trimEnd().split('\n');
    for (const row of rows) assert.equal(row.split('\t').length, header?.split('\t').length);
  });

  it('json and ndjson escape them as JSON does and keep the exact text', async () => {
    for (const format of ['json', 'ndjson']) {
      const result = await runCli(['-o', format, 'tags', 'list'], { sandbox });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(rawControls(result.stdout, '\n'), [], format);
      const records =
        format === 'json'
          ? (JSON.parse(result.stdout) as Array<{ id: string; name: string }>)
          : result.stdout
              .trimEnd()
              .split('\n')
              .map((line) => JSON.parse(line) as { id: string; name: string });
      for (const tag of hostileTags()) assert.equal(records.find((record) => record.id === tag.id)?.name, tag.name);
    }
    const author = await runCli(['-o', 'json', 'authors', 'get', FIXTURES.hostile.authorIds[0]], { sandbox });
    assert.deepEqual(rawControls(author.stdout, '\n'), []);
    assert.equal((JSON.parse(author.stdout) as { real_name: string }).real_name, HOSTILE.crOverwrite);
  });

  it('csv prefixes formula cells with a quote; --no-escape-formulas keeps them as they are', async () => {
    const [formula, , , plus] = FIXTURES.hostile.tagIds;
    const escaped = await runCli(['-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox });
    assert.equal(escaped.code, 0, escaped.stderr);
    assert.ok(escaped.stdout.includes(`\r\n${formula},"'=HYPERLINK(""http://evil.example"",""x"")"\r\n`), escaped.stdout.slice(-300));
    assert.ok(escaped.stdout.includes(`\r\n${plus},'+1+1\r\n`));
    const author = await runCli(['-o', 'csv', 'authors', 'get', FIXTURES.hostile.authorIds[1], '--columns', 'screen_name,real_name,location,website'], {
      sandbox,
    });
    assert.equal(author.stdout.split(/\r?\n/)[1], "'@SUM(A1),'-2+3,'＝1+1,'+1+1");

    const raw = await runCli(['--no-escape-formulas', '-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox });
    assert.ok(raw.stdout.includes(`\r\n${formula},"=HYPERLINK(""http://evil.example"",""x"")"\r\n`));
    assert.ok(raw.stdout.includes(`\r\n${plus},+1+1\r\n`));
  });

  it('csv on a terminal shows control characters escaped; into a file or pipe it keeps the exact text', async () => {
    const shown = await runCli(['-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox, stdoutTTY: true });
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(rawControls(shown.stdout, '\r\n'), []);
    assert.ok(shown.stdout.includes('vip\\x1b]52;c;ZWNobyBwd25lZA==\\x07'), shown.stdout);
    const piped = await runCli(['-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox });
    for (const tag of hostileTags()) assert.ok(piped.stdout.includes(tag.name.includes('"') ? tag.name.replaceAll('"', '""') : tag.name), tag.id);
  });

  it('usage errors show control characters in the arguments escaped', async () => {
    for (const argv of [
      ['tags', 'list', '--x\u001b]0;PWN\u0007'],
      ['tags', 'frob\u001b[2J'],
      ['completion', 'b\u001b[1m'],
    ]) {
      const result = await runCli(argv, { sandbox });
      assert.equal(result.code, 2, argv.join(' '));
      assert.deepEqual(rawControls(result.stderr, '\n'), [], result.stderr);
      assert.match(result.stderr, /\\x1b/);
      assert.equal(result.stderr.split('\n').length, 2, 'one line');
    }
  });

  it("the service's error messages reach stderr escaped", async () => {
    const fromSandbox = await runCli(['api', 'v1.3/%1B%5D52%3Bc%3BZWNobw%3D%3D%07'], { sandbox });
    assert.equal(fromSandbox.code, 4);
    assert.deepEqual(rawControls(fromSandbox.stderr, '\n'), []);
    assert.ok(fromSandbox.stderr.includes("Unknown resource '\\x1b]52;c;ZWNobw==\\x07'"), fromSandbox.stderr);

    const message = `bad ${HOSTILE.osc8Hyperlink} ${HOSTILE.crOverwrite} ${HOSTILE.c1Csi} ${HOSTILE.del}${HOSTILE.bell}\u202eevil`;
    const server = await localServer((_req, res) => json(res, 400, { status: 'error', message }));
    try {
      const result = await runCli(['--verbose', 'tags', 'list'], { env: { CARECTL_BASE_URL: server.url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' } });
      assert.equal(result.code, 1);
      assert.deepEqual(rawControls(result.stderr, '\n'), []);
      assert.ok(
        result.stderr.includes(
          'carectl: bad \\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\ ok\\rPWNED \\x9b31m \\x7f\\x07\\u202eevil (HTTP 400)\n',
        ),
        result.stderr,
      );
    } finally {
      await server.close();
    }
  });
});
