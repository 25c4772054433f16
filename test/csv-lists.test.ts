/**
 * List-valued csv cells (tags, content.text) are JSON arrays: split back with a real CSV parser
 * (Python's csv module, where python3 is installed) and a JSON parser, they give the lists the
 * service sent, commas in the values included.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { openSandbox, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox();
});
after(() => sandbox.close());

const python = spawnSync('python3', ['-c', 'import csv, json'], { encoding: 'utf8' });
const noPython = python.error || python.status !== 0 ? 'python3 (with its csv module) is not installed' : false;

/** Rows of the csv read by Python's csv module, each list cell read by json.loads. */
function readWithPython(csvText: string, listColumns: string[]): Array<Record<string, unknown>> {
  const script = `
import csv, io, json, sys
lists = set(sys.argv[1].split(','))
rows = [{k: (json.loads(v) if k in lists and v != '' else v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(sys.stdin.read(), newline=''))]
print(json.dumps(rows))
`;
  const result = spawnSync('python3', ['-c', script, listColumns.join(',')], { input: csvText, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as Array<Record<string, unknown>>;
}

test("tags.name and content.text round-trip through Python's csv module and json.loads", { skip: noPython }, async () => {
  const args = ['conversations', 'list', '--status', 'closed', '--include', 'content', '--quiet'];
  const csv = await runCli([...args, '-o', 'csv', '--columns', 'id,tags.name,content.text'], { sandbox });
  assert.equal(csv.code, 0, csv.stderr);
  const json = await runCli([...args, '-o', 'json', '--columns', 'id,tags.name,content.text'], { sandbox });
  const records = JSON.parse(json.stdout) as Array<{ id: string; tags: Array<{ name: string }>; content: Array<{ text: string | null }> }>;
  const expected = records.map((r) => ({ id: r.id, 'tags.name': r.tags.map((t) => t.name), 'content.text': r.content.map((c) => c.text) }));
  assert.ok(
    expected.some((r) => r['content.text'].some((text) => text?.includes(',') === true)),
    'some content text holds a comma',
  );
  assert.ok(
    expected.some((r) => r['tags.name'].length > 1),
    'some conversation has several tags',
  );
  assert.deepEqual(readWithPython(csv.stdout, ['tags.name', 'content.text']), expected);
});

test('an empty list is [] and a missing value an empty cell, so the two stay apart', async () => {
  const csv = await runCli(['conversations', 'list', '--status', 'closed', '--quiet', '-o', 'csv', '--columns', 'id,tags.name,assigned_to.id', '--no-header'], {
    sandbox,
  });
  const rows = csv.stdout.split('\r\n').filter(Boolean);
  assert.ok(
    rows.some((row) => /^\d+,\[\],/.test(row)),
    'a conversation without tags shows []',
  );
  assert.ok(
    rows.some((row) => row.endsWith(',')),
    'a conversation nobody is assigned to shows an empty cell',
  );
});

/** Rows of a tsv read as `help formats` says: split at tabs; a list cell is JSON as it is, any other cell has its escapes undone. */
function readTsv(tsvText: string, listColumns: string[]): Array<Record<string, unknown>> {
  const unescape = (cell: string): string =>
    cell.replace(/\\(x[0-9a-f]{2}|u[0-9a-f]{4}|.)/g, (_match, code: string) => {
      const simple: Record<string, string> = { t: '\t', n: '\n', r: '\r', '\\': '\\' };
      return simple[code] ?? String.fromCharCode(parseInt(code.slice(1), 16));
    });
  const [header, ...rows] = tsvText.split('\n').filter(Boolean);
  const names = (header as string).split('\t');
  return rows.map((row) =>
    Object.fromEntries(
      row.split('\t').map((cell, index) => {
        const name = names[index] as string;
        return [name, listColumns.includes(name) && cell !== '' ? (JSON.parse(cell) as unknown) : unescape(cell)];
      }),
    ),
  );
}

test('tsv list cells are JSON arrays too: a tag name with commas and a tab splits back exactly', async () => {
  const tricky = '=HYPERLINK("http://x","x"),vip\tlate\u001b]52;c;x\u0007\u202e\\end';
  const api = await scriptedApi(() => ({
    json: {
      conversations: [
        {
          id: '1',
          url: 'u',
          tags: [
            { id: '7', name: tricky },
            { id: '8', name: 'plain' },
          ],
        },
        { id: '2', url: 'u', tags: [] },
        { id: '3', url: 'u', tags: [{ id: '9' }] },
      ],
      paging: { next_page: null },
    },
  }));
  try {
    const out = await runCli(['conversations', 'list', '--status', 'closed', '-o', 'tsv', '--columns', 'id,tags.name', '--quiet'], { env: scriptedEnv(api) });
    assert.equal(out.code, 0, out.stderr);
    // The cell is the JSON text as it is (`cut -f2 | jq` reads it): its backslashes are not doubled, and nothing raw reaches the terminal.
    assert.equal(out.stdout.split('\n')[1], '1\t' + String.raw`["=HYPERLINK(\"http://x\",\"x\"),vip\tlate\u001b]52;c;x\u0007\u202e\\end","plain"]`);
    assert.deepEqual(readTsv(out.stdout, ['tags.name']), [
      { id: '1', 'tags.name': [tricky, 'plain'] },
      { id: '2', 'tags.name': [] },
      { id: '3', 'tags.name': [null] },
    ]);
  } finally {
    await api.close();
  }
});
