/**
 * How a table fits a terminal: a column is as wide as what it shows (and, when more rows may
 * follow, the room kept for a longer id or status), headers give way before free text is cut, and
 * columns are left out only when what they show cannot fit even so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createWriter } from '../src/output/index.js';
import type { WriterOptions } from '../src/output/index.js';
import { columnPolicy } from '../src/output/grid.js';
import { displayWidth } from '../src/output/width.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { Collector, openSandbox, runCli, writerOptions } from './helpers.js';

type Row = Record<string, unknown>;

/** One page of rows through a table writer at `columns` wide: what stdout and the notices got. */
async function table(rows: Row[], overrides: Partial<WriterOptions>, columns: number): Promise<{ stdout: string; notices: string[] }> {
  const collector = new Collector();
  const notices: string[] = [];
  const writer = createWriter('table', writerOptions(collector, { notice: (message) => notices.push(message), ...overrides }, columns));
  for (const row of rows) await writer.write(row);
  await writer.endPage();
  await writer.end();
  return { stdout: collector.text, notices };
}

describe('the field test: conversations list --limit 5', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(async () => {
    await sandbox.close();
  });

  // At 40 columns STATUS is as wide as the statuses shown, and author.id is shown with IS_PRIORITY
  // whole; CHANNELS would need 8 columns (6 and the gap) where 7 are left with IS_PRIORITY cut to
  // PR…. At 60 every column, the headers of short values cut before the free text.
  const expected: Record<number, { stdout: string; leftOut?: string }> = {
    40: {
      stdout:
        'ID      STATUS    IS_PRIORITY  AUTHOR.ID\n' +
        '500083  unread    true         f:1000182\n' +
        '500481  on_hold   true         m:1000025\n' +
        '500515  unread    true         w:1000192\n' +
        '500528  assigned  true         i:1000075\n' +
        '500352  closed    true         m:1000009\n',
      leftOut: 'channels, tags, assigned_to.id',
    },
    60: {
      stdout:
        'ID      STATUS    PRIOR…  AUTHOR.ID  CHANNE…  TAGS    ASSIG…\n' +
        '500083  unread    true    f:1000182  Globex…  prais…\n' +
        '500481  on_hold   true    m:1000025  Globex…  outag…  3098\n' +
        '500515  unread    true    w:1000192  Globex…  featu…\n' +
        '500528  assigned  true    i:1000075  Acme I…  prais…  3055\n' +
        '500352  closed    true    m:1000009  Acme M…  outag…\n',
    },
  };
  for (const [columns, { stdout, leftOut }] of Object.entries(expected)) {
    it(`at ${columns} columns: columns as wide as what they show, left out only when they cannot fit`, async () => {
      const result = await runCli(['--no-color', 'conversations', 'list', '--limit', '5'], { sandbox, stdoutTTY: true, columns: Number(columns) });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, stdout);
      assert.equal(/^left out (.*) to fit /m.exec(result.stderr)?.[1], leftOut, result.stderr);
    });
  }
});

describe('leaving columns out', () => {
  const rows: Row[] = [
    { id: '7001', name: 'Acme Facebook', is_active: 'true', account_id: '31' },
    { id: '7002', name: 'Globex Microblog', is_active: 'false', account_id: '32' },
  ];
  const columns = ['id', 'name', 'is_active', 'account_id'];

  it('cuts a header down to 3 columns rather than leave its column out', async () => {
    // 4 + 6 + 5 + 3 and three gaps: IS_ACTIVE as ACTI… over false, ACCOUNT_ID as AC… over 31 (it was left out).
    const { stdout, notices } = await table(rows, { columns, most: 2 }, 24);
    assert.deepEqual(notices, []);
    assert.equal(stdout, 'ID    NAME    ACTI…  AC…\n7001  Acme…   true   31\n7002  Globe…  false  32\n');
  });

  it('leaves a column out when even that does not fit, and says so', async () => {
    const { stdout, notices } = await table(rows, { columns, most: 2 }, 23);
    assert.deepEqual(notices, ['left out account_id to fit 23 columns: --columns picks the columns, -o tsv shows them all']);
    assert.equal(stdout, 'ID    NAME       ACTIVE\n7001  Acme Fac…  true\n7002  Globex M…  false\n');
  });

  it('keeps room for the longest status the catalogue knows while more rows may follow, none once they are all in', async () => {
    const known = { state: ['on', 'off', 'pending_approval'] };
    const states = [
      { id: '7001', state: 'on', account_id: '31' },
      { id: '7002', state: 'off', account_id: '32' },
    ];
    const more = await table(states, { columns: ['id', 'state', 'account_id'], known }, 40);
    assert.equal(more.stdout, 'ID    STATE             ACCOUNT_ID\n7001  on                31\n7002  off               32\n');
    const all = await table(states, { columns: ['id', 'state', 'account_id'], known, most: 2 }, 40);
    assert.equal(all.stdout, 'ID    STATE  ACCOUNT_ID\n7001  on     31\n7002  off    32\n');
  });
});

/** The widest of `texts`, in columns. */
function widest(texts: readonly string[]): number {
  return Math.max(0, ...texts.map((text) => displayWidth(text)));
}

/** The fewest columns `column` can take: free text 6 (or less), a key or fixed value its values, a header 3 of them. */
function least(column: string, cells: readonly string[]): number {
  const header = column.toUpperCase().length;
  const values = widest(cells);
  if (columnPolicy(column, cells, false).kind === 'text') return Math.min(Math.max(header, values), 6);
  return Math.max(values, Math.min(header, 3));
}

describe('fitting a whole list, any rows, any width from 40 columns', () => {
  const word = fc.stringMatching(/^[a-z]{1,12}$/);
  const cell = {
    id: fc.integer({ min: 1, max: 10 ** 9 }).map(String),
    'author.id': fc.tuple(fc.constantFrom('f', 'm', 'w'), fc.integer({ min: 1, max: 10 ** 12 })).map(([p, n]) => `${p}:${n}`),
    status: fc.constantFrom('unread', 'on_hold', 'closed', 'pending_approval'),
    is_priority: fc.boolean().map(String),
    name: fc.array(word, { minLength: 1, maxLength: 5 }).map((words) => words.join(' ')),
    tags: fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(',')),
    handling_seconds: fc.integer({ min: 0, max: 10 ** 7 }).map(String),
  };
  const names = Object.keys(cell) as Array<keyof typeof cell>;
  const arbitrary = fc.record({
    columns: fc.shuffledSubarray(names.slice(1), { minLength: 1 }).map((rest) => ['id', ...rest]),
    rows: fc.array(fc.record(cell), { minLength: 1, maxLength: 6 }),
    width: fc.integer({ min: 40, max: 130 }),
  });

  it('no line is wider than the terminal, no column holds room it does not need, and a column left out truly cannot fit', async () => {
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ columns, rows, width }) => {
        // author.id is a path: the record holds an author with an id.
        const records = rows.map(({ 'author.id': id, ...rest }) => ({ ...rest, author: { id } }));
        const { stdout, notices } = await table(
          records,
          { columns, most: rows.length, known: { status: ['unread', 'on_hold', 'closed', 'pending_approval'] } },
          width,
        );
        const lines = stdout.trimEnd().split('\n');
        for (const line of lines) assert.ok(displayWidth(line) <= width, `${width}: ${line}`);
        const leftOut = notices.length === 0 ? [] : (/^left out (.*) to fit/.exec(notices[0] as string)?.[1]?.split(', ') ?? []);
        const shown = columns.filter((column) => !leftOut.includes(column));
        const [header = ''] = lines;
        const starts = [...header.matchAll(/\S+/g)].map((match) => match.index);
        assert.equal(starts.length, shown.length, header);
        const cells = (column: string): string[] => rows.map((row) => row[column as keyof typeof row]);
        shown.slice(0, -1).forEach((column, index) => {
          const columnWidth = (starts[index + 1] as number) - (starts[index] as number) - 2;
          assert.ok(columnWidth <= Math.max(column.length, widest(cells(column))), `${column} is ${columnWidth} wide:\n${stdout}`);
        });
        // Columns go from the right: the leftmost one left out, beside the others at their fewest, passes the edge.
        const first = columns.find((column) => leftOut.includes(column));
        if (first !== undefined) {
          const kept = columns.filter((column) => shown.includes(column) || column === first);
          const fewest = kept.reduce((total, column) => total + least(column, cells(column)), 2 * (kept.length - 1));
          assert.ok(fewest > width, `${first} would fit in ${width} (${fewest}):\n${stdout}`);
        }
      }),
      { seed: 20261128, numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  });
});
