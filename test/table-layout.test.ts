/**
 * The list table is one grid: widths fixed by the first window of rows, every later row laid out
 * on them, fitted to a terminal by cutting free text first, and laid out in time linear in what
 * it shows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWriter } from '../src/output/index.js';
import type { WriterOptions } from '../src/output/index.js';
import { columnPolicy } from '../src/output/grid.js';
import { cutToWidth, displayWidth } from '../src/output/width.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { Collector, openSandbox, runCli, writerOptions } from './helpers.js';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

type Row = Record<string, unknown>;

/** Writes the pages to a table writer (endPage() after each) and returns what reached stdout. */
async function table(pages: Row[][], overrides: Partial<WriterOptions> = {}, terminalColumns?: number): Promise<string> {
  const collector = new Collector();
  const writer = createWriter('table', writerOptions(collector, overrides, terminalColumns));
  for (const page of pages) {
    for (const record of page) await writer.write(record);
    await writer.endPage();
  }
  await writer.end();
  return collector.text;
}

/** Where each header name starts, in columns. */
function headerStarts(header: string): number[] {
  return [...header.matchAll(/\S+/g)].map((match) => displayWidth(header.slice(0, match.index)));
}

/** Asserts that every line has at least two blanks before each column start (or ends before it). */
function assertOnGrid(output: string, starts: number[]): void {
  for (const line of output.split('\n').filter(Boolean)) {
    const chars = Array.from(line);
    let column = 0;
    const at = new Map<number, string>();
    for (const char of chars) {
      at.set(column, char);
      column += Math.max(1, displayWidth(char));
    }
    for (const start of starts.slice(1)) {
      if (column <= start) continue;
      assert.equal(at.get(start - 1), ' ', `column ${start} of ${JSON.stringify(line)}`);
      assert.equal(at.get(start - 2), ' ', `column ${start} of ${JSON.stringify(line)}`);
    }
  }
}

describe('one grid', () => {
  const first: Row[] = [
    { id: 1, name: 'Ada Lovelace', status: 'open', note: 'first' },
    { id: 22, name: 'Grace Hopper', status: 'on_hold', note: 'second' },
  ];
  const second: Row[] = [{ id: 3, name: 'Edsger Wybe Dijkstra', status: 'closed', note: 'a much longer note than before' }];
  const third: Row[] = [{ id: 4, name: 'Alan Turing', status: 'open', note: 'fourth' }];
  const columns = ['id', 'name', 'status', 'note'];

  it('fixes the widths on the first page: a later wider cell is cut with …, never moving a column; a key column has its reserve (off a terminal)', async () => {
    assert.equal(
      await table([first, second, third], { columns }),
      'ID  NAME          STATUS     NOTE\n' +
        '1   Ada Lovelace  open       first\n' +
        '22  Grace Hopper  on_hold    second\n' +
        '3   Edsger Wybe…  closed     a much longer note than before\n' +
        '4   Alan Turing   open       fourth\n',
    );
  });

  it('on a terminal, the last column may reach its edge and is cut there; key columns get their reserve from its spare room', async () => {
    const output = await table([first, second, third], { columns }, 40);
    assert.equal(
      output,
      'ID  NAME          STATUS     NOTE\n' +
        '1   Ada Lovelace  open       first\n' +
        '22  Grace Hopper  on_hold    second\n' +
        '3   Edsger Wybe…  closed     a much lon…\n' +
        '4   Alan Turing   open       fourth\n',
    );
    for (const line of output.split('\n')) assert.ok(displayWidth(line) <= 40, line);
  });

  it('keeps the grid with --no-header', async () => {
    assert.equal(
      await table([first, second, third], { columns, header: false }),
      '1   Ada Lovelace  open       first\n' +
        '22  Grace Hopper  on_hold    second\n' +
        '3   Edsger Wybe…  closed     a much longer note than before\n' +
        '4   Alan Turing   open       fourth\n',
    );
  });

  it('keeps a row with a later id longer than its column on one line: the id whole, the free text after it cut, the rest on the grid', async () => {
    const later: Row[] = [
      { id: 333, name: 'Short', status: 'open', note: 'x' },
      { id: 4444, name: 'A name long enough to cut', status: 'open', note: 'y' },
      { id: 5, name: 'Five', status: 'open', note: 'z' },
    ];
    assert.equal(
      await table([first, later], { columns }),
      'ID  NAME          STATUS     NOTE\n' +
        '1   Ada Lovelace  open       first\n' +
        '22  Grace Hopper  on_hold    second\n' +
        '333  Short        open       x\n' +
        '4444  A name lo…  open       y\n' +
        '5   Five          open       z\n',
    );
  });

  it('keeps a row with a later code longer than its column and its reserve on one line, the code whole', async () => {
    const later: Row[] = [
      { id: 5, name: 'Short', status: 'pending_approval', note: 'x' },
      { id: 6, name: 'Six', status: 'open', note: 'y' },
    ];
    assert.equal(
      await table([first, later], { columns }),
      'ID  NAME          STATUS     NOTE\n' +
        '1   Ada Lovelace  open       first\n' +
        '22  Grace Hopper  on_hold    second\n' +
        '5   Short         pending_approval  x\n' +
        '6   Six           open       y\n',
    );
  });

  it('gives a key column a quarter more room than its values, at most four columns', async () => {
    const records: Row[] = [{ id: 1, code: 'f:10', email: 'mei.nguyen.1@sandbox.example', name: 'Mei' }];
    const output = await table([records], { columns: ['id', 'code', 'email', 'name'] });
    const header = output.split('\n')[0] as string;
    assert.deepEqual(headerStarts(header), [0, 4, 11, 45]);
    assert.equal(output, `${header}\n1   f:10   mei.nguyen.1@sandbox.example      Mei\n`);
  });

  it('never re-aligns across many pages, on a terminal or off one', async () => {
    const pages: Row[][] = [];
    for (let page = 0; page < 6; page++) {
      pages.push(
        Array.from({ length: 10 }, (_, index) => ({
          id: 100 + page * 10 + index,
          name: 'n'.repeat(page * 7 + index),
          status: page % 2 ? 'closed' : 'open',
          note: `note ${'w'.repeat(page * 5)}`,
        })),
      );
    }
    for (const width of [undefined, 50, 80]) {
      const output = await table(pages, { columns }, width);
      const [header = ''] = output.split('\n');
      assert.equal(header, 'ID   NAME       STATUS  NOTE');
      assertOnGrid(output, headerStarts(header));
      assert.equal(output.split('\n').length, 62);
      assert.match(output, /\n159 +nnnnnnnn… {2}closed {2}note w/);
    }
  });
});

describe('a later value wider than its column', () => {
  const columns = ['id', 'status', 'author.id', 'channel', 'tags'];
  const first: Row[] = [
    { id: '500081', status: 'unread', author: { id: 'w:1000084' }, channel: 'Globex WhatsApp', tags: 'warranty-question,app-request' },
    { id: '500083', status: 'on_hold', author: { id: 'f:1000182' }, channel: 'Globex Facebook', tags: 'praise-request' },
  ];
  const later: Row[] = [
    // Two characters longer than the first page's: within the key column's reserve.
    { id: '500001', status: 'unread', author: { id: 'f:666000001' }, channel: 'Acme Facebook', tags: 'vip' },
    // Far longer: the free text after it in its row gives up the room.
    { id: '500002', status: 'closed', author: { id: 'x:12345678901234567' }, channel: 'Acme Microblog', tags: 'praise-follow-up' },
    // A code longer than any the first page showed, pushing an id after it.
    { id: '500003', status: 'pending_approval', author: { id: 'f:1000007' }, channel: 'Acme Mail', tags: 'billing' },
  ];
  // With room for the free text, the same lines off a terminal and at 80 and 120 columns.
  const roomy = [
    'ID      STATUS     AUTHOR.ID     CHANNEL          TAGS',
    '500081  unread     w:1000084     Globex WhatsApp  warranty-question,app-request',
    '500083  on_hold    f:1000182     Globex Facebook  praise-request',
    '500001  unread     f:666000001   Acme Facebook    vip',
    '500002  closed     x:12345678901234567  Acme Mi…  praise-follow-up',
    '500003  pending_approval  f:1000007  Acme Mail    billing',
  ];
  const expected: Record<string, string[]> = {
    off: roomy,
    40: [
      'ID      STATUS     AUTHOR.ID     CHANNEL',
      '500081  unread     w:1000084     Globex…',
      '500083  on_hold    f:1000182     Globex…',
      '500001  unread     f:666000001   Acme F…',
      '500002  closed     x:12345678901234567',
      '500003  pending_approval  f:1000007  Ac…',
    ],
    60: [
      'ID      STATUS     AUTHOR.ID     CHANNEL        TAGS',
      '500081  unread     w:1000084     Globex Whats…  warranty-qu…',
      '500083  on_hold    f:1000182     Globex Faceb…  praise-requ…',
      '500001  unread     f:666000001   Acme Facebook  vip',
      '500002  closed     x:12345678901234567  Acme…   praise-foll…',
      '500003  pending_approval  f:1000007  Acme Mail  billing',
    ],
    80: roomy,
    120: roomy,
  };

  for (const width of [undefined, 40, 60, 80, 120]) {
    it(`keeps each record on one line, the value whole, the row back on the grid after the free text it cut (${width ?? 'off a terminal'})`, async () => {
      const output = await table([first, later], { columns }, width);
      const lines = output.trimEnd().split('\n');
      assert.deepEqual(lines, expected[width ?? 'off']);
      assert.equal(lines.length, 1 + first.length + later.length, 'one line a record');
      const [header = '', ...rows] = lines;
      const starts = headerStarts(header);
      rows.forEach((line, index) => {
        const record = [...first, ...later][index] as { id: string; status: string; author: { id: string } };
        assert.ok(line.startsWith(`${record.id}  ${record.status} `), line);
        if (starts.length > 2)
          assert.ok(line.includes(` ${record.author.id} `) || line.endsWith(` ${record.author.id}`), `${record.author.id} whole in ${line}`);
        if (width !== undefined) assert.ok(displayWidth(line) <= width, `${width}: ${line}`);
      });
      // The records that fit their columns, the first page's and the id within the reserve, are on the grid.
      assertOnGrid(rows.slice(0, 3).join('\n'), starts);
      // The last column is back on the grid after a wide value, but at 40 columns, where CHANNEL
      // is the last column and gives up its room (all of it, for the longest id).
      if (width !== 40) assertOnGrid(rows.slice(3).join('\n'), [0, starts.at(-1) as number]);
    });
  }
});

describe('column policy', () => {
  const kind = (name: string, cells: string[], wrap = false): string => columnPolicy(name, cells, wrap).kind;

  it('knows ids by name: id, *.id, *_id, whatever their values', () => {
    assert.equal(kind('id', ['a long value with spaces']), 'key');
    assert.equal(kind('author.id', ['f:1000182']), 'key');
    assert.equal(kind('tags.0.id', []), 'key');
    assert.equal(kind('assigned_to_id', ['3098']), 'key');
    assert.equal(kind('idea', ['x']), 'key', 'a short identifier by its values');
    assert.equal(kind('paid', ['it was paid in full']), 'text');
  });

  it('knows short identifiers, numbers, booleans and dates by their values', () => {
    assert.equal(kind('status', ['on_hold', 'pending_approval', '']), 'key');
    assert.equal(kind('uuid', ['9b2f0c1e-2a4b-4c8e-9f1a-0b7d3e5c6a21']), 'key');
    assert.equal(kind('count', ['12', '-3.5', '1e6']), 'fixed');
    assert.equal(kind('is_priority', ['true', 'false']), 'fixed');
    assert.equal(kind('created', ['2026-06-01', '2026-06-02T17:40:12Z', '2026-06-02 17:40:12.5+02:00']), 'fixed');
    assert.equal(kind('status', ['on hold']), 'text');
    assert.equal(kind('code', ['x'.repeat(41)]), 'text', 'not short');
    assert.equal(kind('channels', ['日本語']), 'text');
  });

  it('takes free text by its name even when its values look like identifiers, and a wrapped column as text', () => {
    assert.equal(kind('name', ['Ada']), 'text');
    assert.equal(kind('tags', ['vip']), 'text');
    assert.equal(kind('channels.0.name', ['mail']), 'text');
    assert.equal(kind('message', ['ok']), 'text');
    assert.equal(kind('outcome', ['ok'], true), 'text');
  });

  it('calls a column with no value in the first window empty', () => {
    assert.equal(kind('assigned_to', ['', '']), 'empty');
    assert.equal(kind('assigned_to', []), 'empty');
  });

  it('keeps later key and fixed values whole only when they are still identifiers or numbers', () => {
    assert.equal(columnPolicy('status', ['open'], false).keeps('pending_approval'), true);
    assert.equal(columnPolicy('status', ['open'], false).keeps('a sentence instead'), false);
    assert.equal(columnPolicy('count', ['1'], false).keeps('12345'), true);
    assert.equal(columnPolicy('count', ['1'], false).keeps('many'), false);
    assert.equal(columnPolicy('author.id', ['1'], false).keeps('anything at all'), true);
    assert.equal(columnPolicy('name', ['Ada'], false).keeps('Ada'), false);
  });
});

describe('fitting the terminal', () => {
  const columns = ['id', 'status', 'created', 'author.id', 'assigned_to', 'tags', 'message'];
  const records: Row[] = [
    {
      id: '5083',
      status: 'unread',
      created: '2026-06-01',
      author: { id: 'f:182' },
      assigned_to: null,
      tags: [{ name: 'praise-request' }],
      message: 'Thanks a lot for the quick help with my order yesterday!',
    },
    {
      id: '5481',
      status: 'on_hold',
      created: '2026-06-02',
      author: { id: 'm:25' },
      assigned_to: null,
      tags: [{ name: 'outage-follow-up' }, { name: 'invoice-escalated' }],
      message: 'The app has been down since this morning and I cannot see my invoices.',
    },
  ];

  it('off a terminal every column has its natural width and a key column its reserve; an empty column its header width', async () => {
    assert.equal(
      await table([records], { columns }),
      'ID    STATUS     CREATED     AUTHOR.ID  ASSIGNED_TO  TAGS                                MESSAGE\n' +
        '5083  unread     2026-06-01  f:182                   praise-request                      Thanks a lot for the quick help with my order yesterday!\n' +
        '5481  on_hold    2026-06-02  m:25                    outage-follow-up,invoice-escalated  The app has been down since this morning and I cannot see my invoices.\n',
    );
  });

  it('at 150 columns a column with no value in the first window goes first, before any text is cut', async () => {
    const notices: string[] = [];
    const output = await table([records], { columns, notice: (message) => notices.push(message) }, 150);
    assert.equal(
      output,
      'ID    STATUS     CREATED     AUTHOR.ID  TAGS                                MESSAGE\n' +
        '5083  unread     2026-06-01  f:182      praise-request                      Thanks a lot for the quick help with my order yesterday!\n' +
        '5481  on_hold    2026-06-02  m:25       outage-follow-up,invoice-escalated  The app has been down since this morning and I cannot see my invoices.\n',
    );
    assert.deepEqual(notices, ['left out assigned_to to fit 150 columns: --columns picks the columns, -o tsv shows them all']);
    for (const line of output.split('\n')) assert.ok(displayWidth(line) <= 150, line);
  });

  it('at 80 columns the headers wider than their values give way first, then free text; ids, identifiers and dates stay whole', async () => {
    const output = await table([records], { columns }, 80);
    assert.equal(
      output,
      'ID    STATUS     CREATED     AUTHOR   TAGS                  MESSAGE\n' +
        '5083  unread     2026-06-01  f:182    praise-request        Thanks a lot for th…\n' +
        '5481  on_hold    2026-06-02  m:25     outage-follow-up,in…  The app has been do…\n',
    );
    for (const line of output.split('\n')) assert.ok(displayWidth(line) <= 80, line);
  });

  it('at 60 columns free text shrinks, widest first, once the headers have given way; never a value', async () => {
    const output = await table([records], { columns }, 60);
    assert.equal(
      output,
      'ID    STATUS     CREATED     AUTHOR   TAGS        MESSAGE\n' +
        '5083  unread     2026-06-01  f:182    praise-re…  Thanks a…\n' +
        '5481  on_hold    2026-06-02  m:25     outage-fo…  The app h…\n',
    );
    for (const line of output.split('\n')) assert.ok(displayWidth(line) <= 60, line);
  });

  it('leaves columns out from the right, naming them, when even the ids do not fit: no line wider than the terminal', async () => {
    const notices: string[] = [];
    const output = await table([records], { columns, notice: (message) => notices.push(message) }, 30);
    // The room the last column does not need goes to the key columns' reserves.
    assert.equal(output, 'ID    STATUS     CREATED\n' + '5083  unread     2026-06-01\n' + '5481  on_hold    2026-06-02\n');
    assert.deepEqual(notices, ['left out author.id, assigned_to, tags, message to fit 30 columns: --columns picks the columns, -o tsv shows them all']);
    for (const width of [40, 45, 52, 57]) {
      const fitted = await table([records], { columns }, width);
      for (const line of fitted.split('\n')) assert.ok(displayWidth(line) <= width, `${width}: ${line}`);
    }
  });

  it('cuts later rows to the fitted widths, ids still whole', async () => {
    const later: Row = {
      ...records[0],
      id: '900001',
      author: { id: 'f:77' },
      message: 'ok',
      tags: [],
      assigned_to: { id: 3, name: 'Someone with a long name' },
    };
    // A first window where every column has a value: none is left out.
    const output = await table([[{ ...records[0], assigned_to: { id: 2, name: 'Al' } }, records[1]], [later]], { columns }, 80);
    // The longer id stands whole at the start of its row; the row is back on the grid after the cut name.
    const lines = output.split('\n');
    assert.equal(lines.length, 5);
    assert.equal(lines[3], '900001  unread   2026-06-01  f:77     Someo…                    ok');
    assert.equal(lines[3]!.indexOf('ok'), lines[0]!.indexOf('MESSAGE'));
  });

  it('styles the header bold outside the padding, so colour changes no width', async () => {
    const plain = await table([records], { columns }, 60);
    const colored = await table([records], { columns, color: true }, 60);
    assert.notEqual(colored, plain);
    assert.equal(colored.replace(/\x1b\[\d+m/g, ''), plain);
  });
});

describe('wrapped columns', () => {
  const message =
    'Unknown tag id nosuchtag (HTTP 400); --add-tags nosuchtag: it takes the ids of active tags, not names (carectl tags list --active shows both)';

  it('wraps a long result within its cell by default, continuation lines under the column', async () => {
    const records: Row[] = [
      { id: '500083', status: 'closing', tags: '7059', result: 'ok' },
      { id: '500481', status: null, tags: null, result: message },
      { id: '12', status: null, tags: null, result: "No conversation with id '12' (HTTP 404)" },
    ];
    const output = await table([records], { columns: ['id', 'status', 'tags', 'result'] }, 50);
    assert.equal(
      output,
      'ID      STATUS     TAGS  RESULT\n' +
        '500083  closing    7059  ok\n' +
        '500481                   Unknown tag id nosuchtag\n' +
        '                         (HTTP 400); --add-tags\n' +
        '                         nosuchtag: it takes the\n' +
        '                         ids of active tags, not\n' +
        '                         names (carectl tags list\n' +
        '                         --active shows both)\n' +
        '12                       No conversation with id\n' +
        "                         '12' (HTTP 404)\n",
    );
    for (const line of output.split('\n')) assert.ok(displayWidth(line) <= 50, line);
  });

  it('on a terminal with too little room for the result column, results go under their row, wrapped at words', async () => {
    const records: Row[] = [
      { id: '500352', status: 'on_hold', tags: '7049,7013', result: 'ok' },
      { id: '500562', status: 'on_hold', tags: '7069,7029,7005', result: 'ok' },
      {
        id: '500534',
        status: null,
        tags: null,
        result:
          "Tag 7024 is inactive (HTTP 400); carectl kept the conversation's tags, and the service refuses refund-urgent (7024): --drop-inactive-tags leaves it out",
      },
    ];
    const output = await table([records], { columns: ['id', 'status', 'tags', 'result'] }, 40);
    assert.equal(
      output,
      'ID      STATUS     TAGS           RESULT\n' +
        '500352  on_hold    7049,7013      ok\n' +
        '500562  on_hold    7069,7029,70…  ok\n' +
        '500534\n' +
        '        Tag 7024 is inactive (HTTP 400);\n' +
        "        carectl kept the conversation's\n" +
        '        tags, and the service refuses\n' +
        '        refund-urgent (7024):\n' +
        '        --drop-inactive-tags leaves it\n' +
        '        out\n',
    );
  });

  it('off a terminal, a later result wider than its column wraps at the column width', async () => {
    const output = await table([[{ id: 1, result: 'ok' }], [{ id: 2, result: 'this one is longer' }]], { columns: ['id', 'result', 'tags'], wrap: ['result'] });
    assert.equal(output, 'ID  RESULT  TAGS\n1   ok\n2   this\n    one is\n    longer\n');
  });

  it('keeps the grid with a wrapped column in the middle: the row goes on beside the first line', async () => {
    const output = await table(
      [
        [
          { id: 1, note: 'a note that needs three lines here', tags: 'vip' },
          { id: 2, note: 'short', tags: 'billing' },
        ],
      ],
      { columns: ['id', 'note', 'tags'], wrap: ['note'] },
      26,
    );
    assert.equal(output, 'ID  NOTE           TAGS\n' + '1   a note that    vip\n' + '    needs three\n' + '    lines here\n' + '2   short          billing\n');
  });

  it('cuts instead with wrap: [] (a result column no longer wraps)', async () => {
    const output = await table([[{ id: 1, result: message }]], { columns: ['id', 'result'], wrap: [] }, 30);
    assert.equal(output, 'ID  RESULT\n1   Unknown tag id nosuchtag…\n');
  });
});

describe('a 200 KB cell', () => {
  const size = 200 * 1024;
  const spaces = 'start' + ' '.repeat(size) + 'end';
  const words = 'word '.repeat(size / 5);
  const cjk = '日本語テキスト'.repeat(Math.ceil(size / 7)).slice(0, size);
  const cut = (text: string, columns: number): string => cutToWidth(text, columns);

  it('lays out off a terminal, cut at 4096 columns', { timeout: 10_000 }, async () => {
    assert.equal(await table([[{ id: 1, name: spaces }]]), 'ID  NAME\n1   start…\n');
    const wordsCut = 'word '.repeat(819).trimEnd() + '…';
    assert.equal(displayWidth(wordsCut), 4095);
    assert.equal(await table([[{ id: 1, name: words }]]), `ID  NAME\n1   ${wordsCut}\n`);
    const cjkCut = Array.from(cjk).slice(0, 2047).join('') + '…';
    assert.equal(await table([[{ id: 1, name: cjk }], [{ id: 2, name: cjk }]]), `ID  NAME\n1   ${cjkCut}\n2   ${cjkCut}\n`);
    assert.equal(cut(cjk, 4096), cjkCut);
  });

  it('lays out on a terminal, cut to the column', { timeout: 10_000 }, async () => {
    assert.equal(
      await table(
        [
          [
            { id: 1, name: words },
            { id: 2, name: spaces },
          ],
          [{ id: 3, name: cjk }],
        ],
        {},
        40,
      ),
      'ID  NAME\n' + '1   word word word word word word word…\n' + '2   start…\n' + `3   ${'日本語テキスト'.repeat(2)}日本語…\n`,
    );
  });

  it('in a column that is not the last one, and in every column at once', { timeout: 10_000 }, async () => {
    const output = await table([[{ id: 1, name: spaces, note: cjk, tags: words }]], { columns: ['id', 'name', 'note', 'tags'] }, 80);
    assert.equal(
      output,
      'ID  NAME    NOTE                               TAGS\n' + '1   start…  日本語テキスト日本語テキスト日本…  word word word word word word wo…\n',
    );
  });

  it('wraps whole in a result column', { timeout: 10_000 }, async () => {
    const output = await table([[{ id: 1, result: words }]], { columns: ['id', 'result'] }, 80);
    const lines = output.split('\n');
    assert.equal(lines.pop(), '');
    assert.equal(lines[0], 'ID  RESULT');
    assert.equal(lines.length, 1 + Math.ceil(size / 5 / 15));
    for (const line of lines.slice(1)) assert.ok(line.length <= 80, line);
    assert.equal(
      lines
        .slice(1)
        .map((line) => line.slice(4))
        .join(' '),
      words.trimEnd(),
    );
  });

  it('is shown whole, wrapped, by a single record (get)', { timeout: 10_000 }, async () => {
    for (const value of [spaces, words, cjk]) {
      const output = await table([[{ id: 1, text: value }]], { shape: 'single', columns: ['id', 'text'], header: false }, 80);
      // On a terminal the one-record view wraps long values under themselves: every character stays.
      assert.ok(output.startsWith('id    1\ntext  '), output.slice(0, 40));
      assert.equal(output.replace(/\s+/g, ''), `id1text${value}`.replace(/\s+/g, ''));
    }
  });
});

describe('end to end', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(async () => {
    await sandbox.close();
  });

  type Listed = { id: string; author: { id: string } }[];

  /** The rows of a table (one line a record), checked against the records: ids whole, at their headers' starts. */
  function assertRecordLines(output: string, records: Listed, columns: number): { header: string; rows: string[] } {
    const [header = '', ...rows] = output.trimEnd().split('\n');
    assert.equal(rows.length, records.length, 'one line a record');
    for (const line of [header, ...rows]) assert.ok(displayWidth(line) <= columns, `${columns}: ${line}`);
    assertOnGrid(rows.join('\n'), headerStarts(header));
    const authorAt = header.indexOf('AUTHOR.ID');
    rows.forEach((line, index) => {
      const { id, author } = records[index] as Listed[number];
      assert.ok(line.startsWith(`${id} `), line);
      if (authorAt >= 0) assert.equal(line.slice(authorAt).split(' ')[0], author.id, line);
    });
    return { header, rows };
  }

  // The README's quick start: conversation 500001's author id is two characters longer than any on the first page.
  const quickStart: Record<number, [string, string]> = {
    40: ['ID      STATUS  IS_PRIORITY  AUTHOR.ID', '500001  unread  false        f:666000001'],
    60: ['ID      STATUS  PRIOR…  AUTHOR.ID     CHANNELS    TAGS', '500001  unread  false   f:666000001   Acme Face…  =HYPERLIN…'],
    80: ['ID      STATUS  PRIOR…  AUTHOR.ID     CHANNELS           TAGS', '500001  unread  false   f:666000001   Acme Facebook      =HYPERLINK("http://evi…'],
    120: [
      'ID      STATUS  IS_PRIORITY  AUTHOR.ID     CHANNELS           TAGS',
      '500001  unread  false        f:666000001   Acme Facebook      =HYPERLINK("http://evil.example","x"),vip\\x1b]52;c;ZWNoby…',
    ],
  };
  for (const [width, [expectedHeader, expectedRow]] of Object.entries(quickStart)) {
    const columns = Number(width);
    it(`the README quick start at ${columns} columns: one line a record, every cell under its header, ids whole`, async () => {
      const argv = ['--no-color', 'conversations', 'list', '--status', 'unread'];
      const result = await runCli(argv, { sandbox, stdoutTTY: true, columns });
      assert.equal(result.code, 0, result.stderr);
      const json = JSON.parse((await runCli([...argv, '-o', 'json'], { sandbox })).stdout) as Listed;
      assert.ok(json.some(({ author }) => author.id === 'f:666000001'));
      const { header, rows } = assertRecordLines(result.stdout, json, columns);
      assert.equal(header, expectedHeader);
      assert.equal(
        rows.find((line) => line.startsWith('500001 ')),
        expectedRow,
      );
      // A status column as wide as the statuses shown leaves author.id its room at 40 columns too; the
      // column with no value on the first page goes first wherever text would be cut.
      const leftOut = columns === 40 ? 'channels, tags, assigned_to.id' : 'assigned_to.id';
      assert.equal(result.stderr, `left out ${leftOut} to fit ${columns} columns: --columns picks the columns, -o tsv shows them all\n`);
    });
  }

  for (const [columns, priority] of [
    [50, 'PRIOR…'],
    [80, 'PRIOR…'],
    [160, 'IS_PRIORITY'],
  ] as const) {
    it(`at ${columns} columns a column of true and false gives way to its short header (6 columns) before text is cut`, async () => {
      const result = await runCli(['--no-color', 'conversations', 'list', '--status', 'unread', '--limit', '20', '--quiet'], {
        sandbox,
        stdoutTTY: true,
        columns,
      });
      const [header = '', ...rows] = result.stdout.trimEnd().split('\n');
      const start = header.indexOf(priority);
      assert.ok(start > 0, header);
      assert.equal(header.slice(start).split(/ {2,}/)[0], priority);
      for (const row of rows) assert.match(row.slice(start), /^(?:true {2}|false ) {2}/, row);
      // An empty column never keeps a cut header: it is shown whole, or left out (and named) where text would be cut.
      assert.doesNotMatch(header, /ASSIGNED_T…|ASSIG…/);
    });
  }

  it('a long list on an 80-column terminal is one grid, ids whole', async () => {
    const argv = ['--no-color', 'conversations', 'list', '--limit', '230', '-o', 'table'];
    const result = await runCli(argv, { sandbox, stdoutTTY: true, columns: 80 });
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse((await runCli([...argv.slice(0, -1), 'json'], { sandbox })).stdout) as Listed;
    // An author id longer than any on the first page, within the column's reserve.
    assert.deepEqual(
      json.filter(({ author }) => author.id.length > 'w:1000084'.length).map(({ id }) => id),
      ['500002'],
    );
    const { header, rows } = assertRecordLines(result.stdout, json, 80);
    // Headers wider than their values give way before the channels and tags are cut.
    assert.equal(header, 'ID      STATUS            PRIOR…  AUTHOR.ID     CHANNELS     TAGS         ASSIG…');
    assert.equal(
      rows.find((line) => line.startsWith('500002 ')),
      '500002  assigned          true    m:777000001   Acme Micro…  praise-fol…  3001',
    );
  });

  it('conversations update wraps its result messages on a terminal', async () => {
    const result = await runCli(['conversations', 'update', '999999', '12', '--status', 'closing', '--close-reason', 'resolved'], {
      sandbox,
      stdoutTTY: true,
      columns: 50,
    });
    assert.equal(result.code, 4);
    assert.equal(
      result.stdout,
      '\x1b[1mID\x1b[22m      \x1b[1mOK\x1b[22m     \x1b[1mSTATUS\x1b[22m  \x1b[1mTAGS\x1b[22m  \x1b[1mRESULT\x1b[22m\n' +
        '999999  false\n' +
        '        not_found: No conversation with id\n' +
        "        '999999' (HTTP 404)\n" +
        '12      false\n' +
        "        not_found: No conversation with id '12'\n" +
        '        (HTTP 404)\n',
    );
  });
});

describe('a service that answers other statuses than --status asked for', () => {
  it('still prints each record on one line at 40 columns: the status and the id after it whole, the tags cut to the room left', async () => {
    // The STATUS column is as wide as `unread` (what was asked for); the second page ignores the filter.
    const pages = [
      [
        { id: '500081', status: 'unread', author: { id: 'w:1000084' }, tags: [{ name: 'warranty-question' }] },
        { id: '500083', status: 'unread', author: { id: 'f:1000182' }, tags: [{ name: 'praise-request' }] },
      ],
      [
        { id: '500085', status: 'pending_approval', author: { id: 'f:1000185' }, tags: [{ name: 'billing' }] },
        { id: '500087', status: 'unread', author: { id: 'f:1000187' }, tags: [] },
      ],
    ];
    const api = await scriptedApi((request) => {
      const url = new URL(request.url, 'http://x');
      const page = Number(url.searchParams.get('skip') ?? 0) / 2;
      url.searchParams.set('skip', String((page + 1) * 2));
      const next = page + 1 < pages.length ? `${api.baseUrl}${url.pathname}?${url.searchParams}` : null;
      return { json: { conversations: pages[page], paging: { next_page: next } } };
    });
    try {
      const argv = ['--no-color', 'conversations', 'list', '--status', 'unread', '--page-size', '2', '--columns', 'id,status,author.id,tags'];
      const result = await runCli(argv, { env: scriptedEnv(api), stdoutTTY: true, columns: 40 });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        result.stdout,
        'ID      STATUS  AUTHOR.ID     TAGS\n' +
          '500081  unread  w:1000084     warranty-…\n' +
          '500083  unread  f:1000182     praise-re…\n' +
          '500085  pending_approval  f:1000185  bi…\n' +
          '500087  unread  f:1000187\n',
      );
    } finally {
      await api.close();
    }
  });
});
