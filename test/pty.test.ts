/**
 * What a person sees in a real terminal of a given size (test/pty.ts): carectl as a separate
 * process on a pseudo-terminal, talking to this test's sandbox. Skipped, saying why, only where
 * the machine has no way to make a pseudo-terminal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLEAR_LINE } from '../src/output/progress.js';
import { displayWidth } from '../src/output/width.js';
import { cellText, valueAt } from '../src/output/cells.js';
import { shortHeader } from '../src/output/grid.js';
import { tsvField } from '../src/output/index.js';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { openSandbox, runCli, sandboxEnv } from './helpers.js';
import { ptyRunner, runInPty } from './pty.js';

const runner = ptyRunner();
const skip = typeof runner === 'string' ? runner : false;

/**
 * The lines as they stand on the screen (escape sequences of colour removed): a line redrawn in
 * place (a live count, on a machine slow enough for one to show) is what follows its last \r.
 */
function lines(screen: string): string[] {
  return screen
    .replace(/\x1b\[[\d;]*m/g, '')
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r') + 1).replaceAll('\x1b[2K', ''));
}

/**
 * The screen's lines apart from the notices on stderr (`left out …` before a table, `stopped at …`
 * after it), each wrapped at spaces to the terminal onto lines of their own; and the `left out`
 * notice as one line.
 */
function splitNotices(shown: readonly string[]): { table: string[]; leftOut: string | undefined } {
  const table: string[] = [];
  const leftOut: string[] = [];
  let notice: 'left out' | 'stopped at' | undefined;
  for (const line of shown) {
    if (line.startsWith('left out') || line.startsWith('stopped at')) notice = line.startsWith('left out') ? 'left out' : 'stopped at';
    if (notice === undefined) table.push(line);
    else if (notice === 'left out') {
      leftOut.push(line);
      if (leftOut.join(' ').endsWith('shows them all')) notice = undefined;
    }
  }
  return { table, leftOut: leftOut.length > 0 ? leftOut.join(' ') : undefined };
}

function assertFits(screen: string, columns: number, what: string): void {
  for (const line of lines(screen)) assert.ok(displayWidth(line) <= columns, `${what} at ${columns} columns:\n${line}`);
}

describe('in a pseudo-terminal', { skip }, () => {
  let sandbox: Sandbox;
  let env: Record<string, string>;
  before(async () => {
    sandbox = await openSandbox();
    env = { ...sandboxEnv(sandbox), NO_COLOR: '1' };
  });
  after(() => sandbox.close());

  test('conversations get at 80 columns: every field on a key/value line of its own, nothing past the edge', async () => {
    const { code, screen } = await runInPty(['conversations', 'get', FIXTURES.multiPlatformConversationId], { columns: 80, env });
    assert.equal(code, 0, screen);
    assertFits(screen, 80, 'get');
    const shown = lines(screen);
    assert.match(shown[0]!, /^id {2,}500002$/);
    for (const key of ['status', 'is_priority', 'tags', 'author.id', 'channels', 'assigned_to.id'])
      assert.ok(
        shown.some((line) => line.startsWith(`${key}  `)),
        key,
      );
    // with colour (a terminal, no NO_COLOR) the keys are bold
    const coloured = await runInPty(['tags', 'get', '7005'], { columns: 80, env: sandboxEnv(sandbox) });
    assert.match(coloured.screen, /^\x1b\[1mid\x1b\[22m {2,}7005\n/);
  });

  test('get at 40, 60, 80 and 160 columns: a wrapped value, an address too, goes on under the value column, never at the first', async () => {
    const base = sandbox.baseUrl;
    // A 5-digit port (every system's ephemeral range): the cuts below fall where they do for it.
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d{5}$/);
    const shown = (key: number, values: ReadonlyArray<readonly [string, ...string[]]>): string =>
      values
        .map(([name, ...lines]) => lines.map((line, index) => `${index === 0 ? name.padEnd(key) : ' '.repeat(key)}${line}`.trimEnd()).join('\n'))
        .join('\n') + '\n';
    const expected: Record<number, string> = {
      40: shown(18, [
        ['id', '500002'],
        ['url', base, '/v1.3/conversations/', '500002'],
        ['status', 'assigned'],
        ['is_priority', 'true'],
        ['contains_private', 'false'],
        ['tags', 'praise-follow-up', '(7005)'],
        ['author.id', 'm:777000001'],
        ['author.url', base, '/v1.3/authors/', 'm:777000001'],
        ['channels', 'Acme Microblog (201),', 'Acme Facebook (202)'],
        ['assigned_to.id', '3001'],
        ['assigned_to.url', base, '/v1.2/users/3001'],
        ['handling_times.first_response_seconds', '', '300'],
        ['handling_times.resolution_seconds', ''],
        ['close_reason', ''],
      ]),
      60: shown(22, [
        ['id', '500002'],
        ['url', `${base}/v1.3/`, 'conversations/500002'],
        ['status', 'assigned'],
        ['is_priority', 'true'],
        ['contains_private', 'false'],
        ['tags', 'praise-follow-up (7005)'],
        ['author.id', 'm:777000001'],
        ['author.url', `${base}/v1.3/authors/`, 'm:777000001'],
        ['channels', 'Acme Microblog (201), Acme Facebook', '(202)'],
        ['assigned_to.id', '3001'],
        ['assigned_to.url', `${base}/v1.2/users/3001`],
        ['handling_times.first_response_seconds', '', '300'],
        ['handling_times.resolution_seconds', ''],
        ['close_reason', ''],
      ]),
    };
    for (const [columns, key] of [
      [80, 28],
      [160, 39],
    ] as const) {
      expected[columns] = shown(key, [
        ['id', '500002'],
        ['url', `${base}/v1.3/conversations/500002`],
        ['status', 'assigned'],
        ['is_priority', 'true'],
        ['contains_private', 'false'],
        ['tags', 'praise-follow-up (7005)'],
        ['author.id', 'm:777000001'],
        ['author.url', `${base}/v1.3/authors/m:777000001`],
        ['channels', 'Acme Microblog (201), Acme Facebook (202)'],
        ['assigned_to.id', '3001'],
        ['assigned_to.url', `${base}/v1.2/users/3001`],
        ...(columns === 160
          ? ([['handling_times.first_response_seconds', '300']] as const)
          : ([['handling_times.first_response_seconds', '', '300']] as const)),
        ['handling_times.resolution_seconds', ''],
        ['close_reason', ''],
      ]);
    }
    for (const [columns, screen] of Object.entries(expected)) {
      const run = await runInPty(['conversations', 'get', FIXTURES.multiPlatformConversationId], { columns: Number(columns), env });
      assert.equal(run.code, 0, run.screen);
      assert.equal(run.screen, screen, `at ${columns} columns`);
    }
  });

  test('get at 40 columns: every line fits, and none but a key starts at the first column', async () => {
    for (const argv of [
      ['users', 'get', '3001'],
      ['authors', 'get', 'm:777000001'],
    ]) {
      const { code, screen } = await runInPty(argv, { columns: 40, env });
      assert.equal(code, 0, screen);
      const shown = lines(screen);
      assert.ok(
        shown.some((line) => /:\/\/|@/.test(line)),
        screen,
      );
      assertFits(screen, 40, argv.join(' '));
      for (const line of shown) assert.doesNotMatch(line, /^\S*(?::\/\/|@)/, `${argv.join(' ')}: an address at the first column reads as a key:\n${screen}`);
    }
  });

  test('conversations content at 80 columns: the message text is kept, other columns left out for it', async () => {
    const { code, screen } = await runInPty(['conversations', 'content', '--status', 'closed', '--limit', '5'], { columns: 80, env });
    assert.equal(code, 0, screen);
    const shown = lines(screen);
    const { table, leftOut } = splitNotices(shown);
    assertFits(table.join('\n'), 80, 'content rows');
    // The long header of the conversation id is cut to leave the item ids and platforms their reserve.
    const header = shown.find((line) => line.startsWith('CONVE'))!;
    assert.ok(header, screen);
    assert.match(header, / {2}TEXT$/);
    assert.match(header, /^CONVE\S* {2}ID  +CREATED\S* {2}/);
    // A third of the terminal at least, for the text.
    assert.ok(80 - header.indexOf('TEXT') >= 26, header);
    assert.ok(
      shown.some((line) => /Could you tell us/.test(line)),
      screen,
    );
    assert.ok(leftOut !== undefined && /^left out [\w.]+(?:, [\w.]+)* to fit 80 columns/.test(leftOut) && !/text/.test(leftOut.split(' to fit')[0]!), screen);
  });

  test('conversations content at 50 columns: blocks of wrapped text, placeholders said to be unavailable', async () => {
    const { code, screen } = await runInPty(['conversations', 'content', FIXTURES.multiPlatformConversationId], { columns: 50, env });
    assert.equal(code, 0, screen);
    assertFits(screen, 50, 'content');
    const blocks = screen.trimEnd().split('\n\n');
    assert.equal(blocks.length, 4, screen);
    assert.match(blocks[0]!, /time unavailable; imported/);
    assert.match(blocks[0]!, /\n\(text unavailable\)\n/);
    assert.match(blocks[2]!, /\nHi Sam, your flight is on time\.\n/);
  });

  test('conversations content at 40 columns: a header too long for a line breaks at spaces, a timestamp whole', async () => {
    const { code, screen } = await runInPty(['conversations', 'content', FIXTURES.multiPlatformConversationId], { columns: 40, env });
    assert.equal(code, 0, screen);
    assertFits(screen, 40, 'content');
    assert.match(screen, /imported\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\)/, screen);
  });

  for (const columns of [60, 120]) {
    test(`help at ${columns} columns fits the terminal and uses its width`, async () => {
      let widest = 0;
      for (const argv of [['--help'], ['conversations'], ['conversations', 'list', '--help'], ['reports', 'create', '--help'], ['help', 'options']]) {
        const { code, screen } = await runInPty(argv, { columns, env });
        assert.equal(code, 0, screen);
        assertFits(screen, columns, argv.join(' '));
        widest = Math.max(widest, ...lines(screen).map((line) => displayWidth(line)));
      }
      assert.ok(widest > columns - 10, `widest line ${widest}`);
    });
  }

  for (const columns of [40, 80, 132]) {
    test(`every list's table at ${columns} columns: no line wider than the terminal, ids whole, columns left out named`, async () => {
      const lists = [
        ['users', 'list'],
        ['conversations', 'list', '--status', 'unread'],
        ['reports', 'list'],
        ['channels', 'list'],
        ['accounts', 'list'],
        ['tags', 'list'],
        ['teams', 'list'],
      ];
      for (const argv of lists) {
        const { code, screen } = await runInPty(argv, { columns, env });
        assert.equal(code, 0, screen);
        // The notice on stderr is wrapped to the terminal at spaces (lines of its own): the table's lines must fit.
        const { table, leftOut } = splitNotices(lines(screen));
        assertFits(table.join('\n'), columns, argv.join(' '));
        const [header = '', ...rows] = table.filter((line) => line !== '');
        assert.match(header, /^ID {2}/, argv.join(' '));
        // The first cell of every row is a whole id (digits, no ellipsis).
        // (or a line of a row's cells too wide for their columns on it: readGrid)
        for (const row of rows) assert.match(row, /^(?:\d+(?: |$)| +\S)/, `${argv.join(' ')}: ${row}`);
        // Said before the table: whoever reads its top knows columns are missing.
        if (leftOut) assert.ok(lines(screen)[0]!.startsWith('left out'), `${argv.join(' ')}:\n${screen}`);
        if (leftOut)
          assert.match(leftOut, new RegExp(`^left out [\\w.]+(?:, [\\w.]+)* to fit ${columns} columns: --columns picks the columns, -o tsv shows them all$`));
      }
    });
  }

  /**
   * Reads a table off the screen by the header's column starts: a row's cells are the slices
   * between them; a line whose first cell is blank carries, under their columns, the values of
   * the row above left blank there (a value too wide for its column, as ids are never cut, or
   * the rest of a row whose id stands alone). Gives the cells of each row.
   */
  function readGrid(shown: readonly string[]): { columns: string[]; rows: string[][] } {
    const [header = '', ...lines] = shown;
    const starts = [...header.matchAll(/\S+/g)].map((match) => match.index);
    const columns = [...header.matchAll(/\S+/g)].map((match) => match[0]);
    const rows: string[][] = [];
    for (const line of lines) {
      const cells = starts.map((start, index) => {
        const end = starts[index + 1];
        // Two blanks before the next column: a cell that runs into them has left the grid.
        if (end !== undefined && line[0] !== ' ')
          assert.match(line.slice(end - 2, end).padEnd(2), /^ {2}$/, `a cell runs into column ${columns[index + 1]}:\n${header}\n${line}`);
        return line.slice(start, end === undefined ? undefined : end - 2).trim();
      });
      if (cells[0] !== '') {
        rows.push(cells);
        continue;
      }
      const row = rows.at(-1)!;
      starts.forEach((start, index) => {
        const value = /^\S+(?: \S+)*/.exec(line.slice(start))?.[0];
        if (value !== undefined && (start === 0 || line[start - 1] === ' ') && row[index] === '') row[index] = value;
      });
    }
    return { columns, rows };
  }

  for (const columns of [40, 80]) {
    test(`a small first page at ${columns} columns: every row on the header's grid, page after page, ids and codes whole`, async () => {
      const argv = ['conversations', 'list', '--page-size', '3', '--limit', '200'];
      const { code, screen } = await runInPty(argv, { columns, env });
      assert.equal(code, 0, screen);
      const shown = splitNotices(lines(screen)).table.filter((line) => line !== '');
      assertFits(shown.join('\n'), columns, argv.join(' '));
      const grid = readGrid(shown);
      // Each cell as the table shows it whole: the record's value as text, lists joined, escaped as tsv escapes text.
      const names = (await runCli([...argv, '-o', 'tsv'], { env })).stdout.split('\n')[0]!.split('\t');
      const records = JSON.parse((await runCli([...argv, '-o', 'json'], { env })).stdout) as Array<Record<string, unknown>>;
      const index = names.map((name) => name.toUpperCase());
      assert.equal(grid.rows.length, records.length);
      grid.rows.forEach((cells, row) => {
        const values = names.map((name) => tsvField(cellText(valueAt(records[row], name))));
        cells.forEach((cell, column) => {
          const name = grid.columns[column]!;
          // A header shown in its short form (IS_PRIORITY as PRIO…) names its column as well.
          const at = index.findIndex((full) => full === name || shortHeader(full, displayWidth(name)) === name);
          const expected = values[at]!;
          if (/^(?:ID|STATUS|IS_PRIORITY|.*\.ID)$/.test(index[at]!)) assert.equal(cell, expected, `${name} of row ${row}:\n${shown[0]}`);
          else assert.ok(cell === expected || (cell.endsWith('…') && expected.startsWith(cell.slice(0, -1))), `${name} of row ${row}: ${cell} for ${expected}`);
        });
      });
    });
  }

  test('TERM=dumb gets no escape sequences: no bold, no live line; --color still forces colour', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 100 });
    try {
      const dumb = { ...sandboxEnv(sandbox), TERM: 'dumb' };
      const argv = ['--parallel', '1', 'conversations', 'list', '--status', 'unread', '--page-size', '5', '--columns', 'id,status'];
      const list = await runInPty(argv, { columns: 80, env: dumb });
      assert.equal(list.code, 0, list.screen);
      assert.doesNotMatch(list.screen, /\x1b/, JSON.stringify(list.screen.slice(0, 200)));
      assert.match(list.screen, /^ID {6,}STATUS\n/);
      const get = await runInPty(['tags', 'get', '7005'], { columns: 80, env: dumb });
      assert.doesNotMatch(get.screen, /\x1b/);
      const forced = await runInPty(['--color', 'tags', 'get', '7005'], { columns: 80, env: dumb });
      assert.match(forced.screen, /\x1b\[1m/);
    } finally {
      sandbox.setFaults(undefined);
    }
  });

  test('a long list shows a live count on the terminal, gone at the end; --quiet shows none', async () => {
    // each page takes 100 ms, one at a time: the list runs for about two seconds
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 100 });
    try {
      const argv = ['--parallel', '1', 'conversations', 'list', '--status', 'unread', '--page-size', '5', '-o', 'csv'];
      const live = await runInPty(argv, { columns: 80, env, redirect: '> /dev/null' });
      assert.equal(live.code, 0, live.screen);
      const drawn = live.screen.split(CLEAR_LINE).slice(1);
      assert.ok(drawn.length >= 2, JSON.stringify(live.screen));
      assert.match(drawn[0]!, /^[\d,]+ conversations \([\d,]+\/s\)$/);
      assert.equal(drawn.at(-1), '', 'the line is cleared when the list ends');
      const quiet = await runInPty(['--quiet', ...argv], { columns: 80, env, redirect: '> /dev/null' });
      assert.equal(quiet.code, 0, quiet.screen);
      assert.equal(quiet.screen, '');
    } finally {
      sandbox.setFaults(undefined);
    }
  });
});
