import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { FORMATS, cellText, createWriter, csvField, safeJsonStringify, sanitizeForTerminal, tsvField, valueAt } from '../src/output/index.js';
import type { Format, WriterOptions } from '../src/output/index.js';
import { StreamSink, writeText } from '../src/core/stream-sink.js';
import { createBlockWriter } from '../src/output/blocks.js';
import { withComputed } from '../src/output/computed.js';
import { shortHeader } from '../src/output/grid.js';
import { InterruptedError, OutputError } from '../src/core/errors.js';
import { runCli, writerOptions } from './helpers.js';

type Row = Record<string, unknown>;

/** In-memory stdout: keeps every chunk as written, so tests can check "one write per record". */
class Collector extends Writable {
  readonly chunks: string[] = [];
  constructor() {
    super({ decodeStrings: false });
  }
  override _write(chunk: unknown, _encoding: BufferEncoding, done: (error?: Error) => void): void {
    this.chunks.push(String(chunk));
    done();
  }
  get text(): string {
    return this.chunks.join('');
  }
}

/** Writes the pages (endPage() after each), ends the document and returns what reached the stream. */
async function render(format: Format, pages: Row[][], overrides: Partial<WriterOptions> = {}, terminalColumns?: number): Promise<string> {
  const collector = new Collector();
  const writer = createWriter(format, writerOptions(collector, overrides, terminalColumns));
  for (const page of pages) {
    for (const record of page) await writer.write(record);
    await writer.endPage();
  }
  await writer.end();
  return collector.text;
}

const people: Row[] = [
  {
    id: 1,
    name: 'Ada',
    author: { id: 7, name: 'Lovelace' },
    channels: [
      { id: 3, name: 'mail' },
      { id: 4, name: 'chat' },
    ],
  },
  { id: 22, name: 'Grace Hopper', author: { id: 8 }, channels: [] },
];
const peopleColumns = ['id', 'name', 'author.id', 'channels.0.name'];

/** C0 (except the LF that ends lines), DEL, C1, bidi controls and zero-width characters: what must never reach a terminal raw. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;
/** Every bidi control and zero-width character the contract names, in one string. */
const BIDI_AND_ZERO_WIDTH = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff';
/** The same, as table, tsv and csv on a terminal show it. */
const BIDI_AND_ZERO_WIDTH_SHOWN = '\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c\\u200b\\u200c\\u200d\\u2060\\ufeff';

describe('valueAt', () => {
  const record = { id: 5, author: { id: 7, tags: ['x', 'y'] }, channels: [{ name: 'mail' }] };

  it('follows dotted paths and indexes arrays with numeric segments', () => {
    assert.equal(valueAt(record, 'id'), 5);
    assert.equal(valueAt(record, 'author.id'), 7);
    assert.equal(valueAt(record, 'author.tags.1'), 'y');
    assert.equal(valueAt(record, 'channels.0.name'), 'mail');
    assert.deepEqual(valueAt(record, 'author'), { id: 7, tags: ['x', 'y'] });
  });

  it('takes a name segment on an array from each element, like jq .channels[].name', () => {
    const conversation = {
      tags: [{ id: 1, name: 'vip' }, { id: 2 }, { id: 3, name: 'billing' }],
      channels: [
        { name: 'mail', owners: [{ id: 8 }, { id: 9 }] },
        { name: 'chat', owners: [{ id: 10 }] },
      ],
    };
    // An element without the field keeps its place (as jq's null does), so tags.id and tags.name line up.
    assert.deepEqual(valueAt(conversation, 'tags.name'), ['vip', null, 'billing']);
    assert.deepEqual(valueAt(conversation, 'tags.id'), [1, 2, 3]);
    assert.deepEqual(valueAt(conversation, 'channels.owners.id'), [8, 9, 10]);
    assert.deepEqual(valueAt(conversation, 'channels.1.owners.id'), [10]);
    assert.equal(cellText(valueAt(conversation, 'tags.name')), 'vip,,billing');
    assert.deepEqual(valueAt({ tags: [] }, 'tags.name'), []);
    assert.deepEqual(valueAt(conversation, 'tags.nope'), [null, null, null]);
  });

  it('gives undefined for anything missing, without reaching inherited properties', () => {
    assert.equal(valueAt(record, 'nope'), undefined);
    assert.equal(valueAt(record, 'author.nope.deeper'), undefined);
    assert.equal(valueAt(record, 'channels.5.name'), undefined);
    assert.equal(valueAt(record, 'id.x'), undefined);
    assert.equal(valueAt(record, 'constructor'), undefined);
    assert.equal(valueAt(record, 'author.toString'), undefined);
    assert.equal(valueAt(null, 'id'), undefined);
  });
});

describe('cellText', () => {
  it('renders scalars, arrays and embedded objects', () => {
    assert.equal(cellText(null), '');
    assert.equal(cellText(undefined), '');
    assert.equal(cellText('text'), 'text');
    assert.equal(cellText(0), '0');
    assert.equal(cellText(-1.5), '-1.5');
    assert.equal(cellText(false), 'false');
    assert.equal(cellText(['a', 2, null, true]), 'a,2,,true');
    assert.equal(cellText({ id: 3, name: 'mail' }), 'mail');
    assert.equal(cellText({ id: 3, name: 42 }), '3');
    assert.equal(cellText({ id: 'abc' }), 'abc');
    assert.equal(cellText({ url: 'https://x', n: 1 }), '{"url":"https://x","n":1}');
    assert.equal(cellText([{ id: 1, name: 'a' }, { id: 2 }]), 'a,2');
  });
});

describe('sanitizeForTerminal', () => {
  const cases: [string, string, string][] = [
    ['OSC 52 clipboard write', '\x1b]52;c;ZWNobyBwd25lZA==\x07', '\\x1b]52;c;ZWNobyBwd25lZA==\\x07'],
    ['OSC 8 hyperlink', '\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\', '\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\'],
    ['CSI clear screen', '\x1b[2J', '\\x1b[2J'],
    ['carriage-return overwrite', 'ok\rPWNED', 'ok\\rPWNED'],
    ['bell', 'ding\x07', 'ding\\x07'],
    ['C1 CSI', '\u009b31mred', '\\x9b31mred'],
    ['DEL', 'a\x7fb', 'a\\x7fb'],
    ['NUL', 'a\0b', 'a\\x00b'],
    ['newline and tab', 'a\nb\tc', 'a\\nb\\tc'],
    ['bidi override', 'abc\u202edcba', 'abc\\u202edcba'],
    ['bidi isolates', '\u2066x\u2069', '\\u2066x\\u2069'],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'a\\u2028b\\u2029c'],
    ['bidi marks', 'a\u200eb\u200fc\u061cd', 'a\\u200eb\\u200fc\\u061cd'],
    ['a right-to-left mark hiding a file extension', 'invoice\u200ftxt.exe', 'invoice\\u200ftxt.exe'],
    ['zero-width space, joiners, word joiner and BOM', 'p\u200ba\u200cy\u200dp\u2060a\ufeffl', 'p\\u200ba\\u200cy\\u200dp\\u2060a\\ufeffl'],
    ['every bidi control and zero-width character', BIDI_AND_ZERO_WIDTH, BIDI_AND_ZERO_WIDTH_SHOWN],
  ];
  for (const [label, input, expected] of cases) {
    it(`shows ${label} visibly`, () => {
      assert.equal(sanitizeForTerminal(input), expected);
    });
  }

  it('never lets any control character through', () => {
    const controls: number[] = [];
    for (let code = 0; code <= 0x9f; code++) if (code < 0x20 || code >= 0x7f) controls.push(code);
    controls.push(0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069);
    controls.push(0x200e, 0x200f, 0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff);
    for (const code of controls) {
      const result = sanitizeForTerminal(`a${String.fromCharCode(code)}b`);
      assert.doesNotMatch(result, RAW_CONTROL, `U+${code.toString(16)}`);
      assert.doesNotMatch(result, /[\n\u2028\u2029]/, `U+${code.toString(16)}`);
    }
  });

  it('leaves ordinary text, including non-ASCII, untouched', () => {
    const text = 'héllo 日本 👍 \\x1b';
    assert.equal(sanitizeForTerminal(text), text);
  });
});

describe('errors on stderr', () => {
  it('show bidi controls and zero-width characters from the arguments escaped', async () => {
    const column = await runCli(['tags', 'list', '--columns', 'id,na\u200bme']);
    assert.equal(column.code, 2);
    assert.equal(
      column.stderr,
      'carectl: --columns: unknown column "na\\u200bme" (closest: name); accepted: id, url, name, is_active (dotted paths allowed; --columns help lists them)\n',
    );
    const format = await runCli(['--output', 'ta\u202eble\u2069', 'tags', 'list']);
    assert.equal(format.code, 2);
    assert.equal(format.stderr, 'carectl: --output: "ta\\u202eble\\u2069" is not one of table, json, ndjson, csv, tsv\n');
  });
});

describe('json', () => {
  const records: Row[] = [
    { id: 1, name: 'Ada', tags: ['a', 'b'] },
    { id: 2, name: null },
  ];

  it('prints a list as one pretty array', async () => {
    assert.equal(
      await render('json', [records]),
      [
        '[',
        '  {',
        '    "id": 1,',
        '    "name": "Ada",',
        '    "tags": [',
        '      "a",',
        '      "b"',
        '    ]',
        '  },',
        '  {',
        '    "id": 2,',
        '    "name": null',
        '  }',
        ']',
        '',
      ].join('\n'),
    );
  });

  it('prints an empty list as []', async () => {
    assert.equal(await render('json', [[]]), '[]\n');
    assert.equal(await render('json', []), '[]\n');
  });

  it('prints a single record as one object', async () => {
    assert.equal(await render('json', [[{ id: 1, author: { id: 7 } }]], { shape: 'single' }), '{\n  "id": 1,\n  "author": {\n    "id": 7\n  }\n}\n');
  });

  it('escapes DEL, C1 and bidi controls, staying parseable with the same value', async () => {
    const record = { text: 'a\u009b[2Jb\x7f\u202ec\x1b]52;c;eA==\x07', [`k\u0085`]: 1 };
    const array = await render('json', [[record]]);
    const single = await render('json', [[record]], { shape: 'single' });
    const line = await render('ndjson', [[record]]);
    for (const output of [array, single, line]) {
      assert.doesNotMatch(output, RAW_CONTROL);
      assert.match(output, /\\u009b\[2Jb\\u007f\\u202ec\\u001b\]52/);
    }
    assert.deepEqual(JSON.parse(array), [record]);
    assert.deepEqual(JSON.parse(single), record);
    assert.deepEqual(JSON.parse(line), record);
  });

  it('escapes bidi marks and zero-width characters too, with the same value', async () => {
    const record = { text: 'invoice\u200ftxt.exe', [`k\u200b`]: `a${BIDI_AND_ZERO_WIDTH}b` };
    const line = await render('ndjson', [[record]]);
    assert.equal(line, `{"text":"invoice\\u200ftxt.exe","k\\u200b":"a${BIDI_AND_ZERO_WIDTH_SHOWN}b"}\n`);
    assert.deepEqual(JSON.parse(line), record);
  });

  it('leaves text without such characters exactly as JSON.stringify writes it', () => {
    const value = { a: 'héllo 日本 \u2028', b: [1, null] };
    assert.equal(safeJsonStringify(value), JSON.stringify(value));
    assert.equal(safeJsonStringify(value, 2), JSON.stringify(value, null, 2));
  });
});

describe('ndjson', () => {
  it('prints one compact line per record', async () => {
    assert.equal(
      await render('ndjson', [[people[0] as Row], [people[1] as Row]]),
      '{"id":1,"name":"Ada","author":{"id":7,"name":"Lovelace"},"channels":[{"id":3,"name":"mail"},{"id":4,"name":"chat"}]}\n' +
        '{"id":22,"name":"Grace Hopper","author":{"id":8},"channels":[]}\n',
    );
  });

  it('prints a single record as one line and an empty list as nothing', async () => {
    assert.equal(await render('ndjson', [[{ id: 1 }]], { shape: 'single' }), '{"id":1}\n');
    assert.equal(await render('ndjson', [[]]), '');
  });
});

describe('csv', () => {
  const columns = ['id', 'name', 'author.id', 'channels'];

  it('prints a header and RFC 4180 records with CRLF', async () => {
    assert.equal(await render('csv', [people], { columns }), 'id,name,author.id,channels\r\n1,Ada,7,"[""mail"",""chat""]"\r\n22,Grace Hopper,8,[]\r\n');
  });

  it('drops the header with header=false, and prints only the header for an empty list', async () => {
    assert.equal(await render('csv', [people], { columns, header: false }), '1,Ada,7,"[""mail"",""chat""]"\r\n22,Grace Hopper,8,[]\r\n');
    assert.equal(await render('csv', [[]], { columns }), 'id,name,author.id,channels\r\n');
    assert.equal(await render('csv', [[]], { columns, header: false }), '');
  });

  it('prints a single record as header plus one row', async () => {
    assert.equal(await render('csv', [[{ id: 1, name: 'Ada' }]], { shape: 'single' }), 'id,name\r\n1,Ada\r\n');
  });

  it('quotes fields with quotes, commas, CR or LF', () => {
    assert.equal(csvField('plain text', true), 'plain text');
    assert.equal(csvField('say "hi"', true), '"say ""hi"""');
    assert.equal(csvField('a,b', true), '"a,b"');
    assert.equal(csvField('two\nlines', true), '"two\nlines"');
    assert.equal(csvField('cr\rhere', true), '"cr\rhere"');
    assert.equal(csvField('"', true), '""""');
    assert.equal(csvField('', true), '');
    assert.equal(csvField(null, true), '');
  });

  it('prefixes every formula trigger with a quote', () => {
    const cases: [unknown, string][] = [
      ['=1+2', "'=1+2"],
      ['+1+2', "'+1+2"],
      ['-2+3', "'-2+3"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['\tcmd', "'\tcmd"],
      ['\rcmd', `"'\rcmd"`],
      ['\ncmd', `"'\ncmd"`],
      ['＝1+2', "'＝1+2"],
      ['＋1', "'＋1"],
      ['－1', "'－1"],
      ['＠x', "'＠x"],
      ['=SUM(A1,B1)', `"'=SUM(A1,B1)"`],
      ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
      // A list is a JSON array: it starts with '[', which no spreadsheet runs.
      [['=cmd', 'b'], `"[""=cmd"",""b""]"`],
      [{ id: 1, name: '@evil' }, "'@evil"],
    ];
    for (const [value, expected] of cases) assert.equal(csvField(value, true), expected, JSON.stringify(value));
  });

  it('keeps numbers as numbers, and escapes every string the contract names, signed numbers included', () => {
    assert.equal(csvField(-5, true), '-5');
    assert.equal(csvField(-0.25, true), '-0.25');
    assert.equal(csvField('-5', true), "'-5");
    assert.equal(csvField('+1.5', true), "'+1.5");
    assert.equal(csvField('42', true), '42');
    assert.equal(csvField('a=b', true), 'a=b');
  });

  it('leaves formulas alone with escapeFormulas=false', () => {
    assert.equal(csvField('=1+2', false), '=1+2');
    assert.equal(csvField('＠x', false), '＠x');
    assert.equal(csvField('=SUM(A1,B1)', false), '"=SUM(A1,B1)"');
  });

  it('on a terminal shows bidi controls and zero-width characters escaped; off one keeps the exact text', async () => {
    const record = { id: 'a\u200bb', name: `x${BIDI_AND_ZERO_WIDTH}y` };
    assert.equal(await render('csv', [[record]], {}, 80), `id,name\r\na\\u200bb,x${BIDI_AND_ZERO_WIDTH_SHOWN}y\r\n`);
    assert.equal(await render('csv', [[record]]), `id,name\r\na\u200bb,x${BIDI_AND_ZERO_WIDTH}y\r\n`);
  });

  it('escapes header cells and record cells in the writer', async () => {
    assert.equal(await render('csv', [[{ '-x': '=cmd', id: '-7' }]], { columns: ['-x', 'id'] }), "'-x,id\r\n'=cmd,'-7\r\n");
    assert.equal(await render('csv', [[{ '-x': '=cmd', id: '-7' }]], { columns: ['-x', 'id'], escapeFormulas: false }), '-x,id\r\n=cmd,-7\r\n');
  });
});

describe('tsv', () => {
  const columns = ['id', 'name', 'author.id', 'channels'];

  it('prints tab-separated lines with a header', async () => {
    assert.equal(await render('tsv', [people], { columns }), 'id\tname\tauthor.id\tchannels\n1\tAda\t7\t["mail","chat"]\n22\tGrace Hopper\t8\t[]\n');
  });

  it('drops the header with header=false; single is header plus one line', async () => {
    assert.equal(await render('tsv', [people], { columns, header: false }), '1\tAda\t7\t["mail","chat"]\n22\tGrace Hopper\t8\t[]\n');
    assert.equal(await render('tsv', [[{ id: 1, name: 'Ada' }]], { shape: 'single' }), 'id\tname\n1\tAda\n');
    assert.equal(await render('tsv', [[]]), 'id\tname\n');
  });

  it('escapes backslash, tab, newline, CR and other controls', () => {
    assert.equal(tsvField('a\tb\nc\rd\\e'), 'a\\tb\\nc\\rd\\\\e');
    assert.equal(tsvField('\x1b[31mred\u009b\x7f'), '\\x1b[31mred\\x9b\\x7f');
    assert.equal(tsvField('abc\u202edcba'), 'abc\\u202edcba');
    assert.equal(tsvField('=not a formula here'), '=not a formula here');
  });

  it('shows bidi controls and zero-width characters escaped, in values and in the header', async () => {
    assert.equal(
      await render('tsv', [[{ id: 'a\u200bb', 'na\u200dme': `x${BIDI_AND_ZERO_WIDTH}y` }]], { columns: ['id', 'na\u200dme'] }),
      `id\tna\\u200dme\na\\u200bb\tx${BIDI_AND_ZERO_WIDTH_SHOWN}y\n`,
    );
    assert.equal(tsvField('invoice\u200ftxt.exe'), 'invoice\\u200ftxt.exe');
  });

  it('never writes a raw tab or newline inside a value', async () => {
    const nasty = { id: 'a\tb', name: 'line1\nline2\r\n\x1b]52;c;eA==\x07' };
    const output = await render('tsv', [[nasty, nasty]]);
    const lines = output.split('\n');
    assert.equal(lines.pop(), '');
    assert.equal(lines.length, 3);
    for (const line of lines) {
      assert.equal(line.split('\t').length, 2);
      assert.doesNotMatch(line, /[\n\r\x1b\x07]/);
    }
    assert.equal(lines[1], 'a\\tb\tline1\\nline2\\r\\n\\x1b]52;c;eA==\\x07');
  });
});

describe('table', () => {
  it('prints a borderless table with an upper-case header', async () => {
    assert.equal(
      await render('table', [people], { columns: peopleColumns }),
      'ID  NAME          AUTHOR.ID  CHANNELS.0.NAME\n' + '1   Ada           7          mail\n' + '22  Grace Hopper  8\n',
    );
  });

  it('drops the header with header=false, sizing columns from the data alone and the reserve of an id column', async () => {
    assert.equal(await render('table', [people], { columns: peopleColumns, header: false }), '1   Ada           7   mail\n22  Grace Hopper  8\n');
  });

  it('prints nothing at all for an empty list', async () => {
    assert.equal(await render('table', [[]], { columns: peopleColumns }), '');
    assert.equal(await render('table', [], { columns: peopleColumns }), '');
  });

  it("keeps the first page's widths for later pages: longer text is cut, a longer id is shown whole with its row on one line, the last column runs on", async () => {
    const later: Row[] = [
      { id: 333, name: 'A much longer name here', author: { id: 9 }, channels: [{ name: 'a much longer channel name' }] },
      { id: 4, name: 'Alan Turing', author: { id: 10 }, channels: [] },
    ];
    const firstPage = 'ID  NAME          AUTHOR.ID  CHANNELS.0.NAME\n' + '1   Ada           7          mail\n' + '22  Grace Hopper  8\n';
    // Off a terminal the last column is not cut; the id too wide for its column stands whole, and
    // the name after it gives up the room, so the rest of its row stays on the grid.
    assert.equal(
      await render('table', [people, later], { columns: peopleColumns }),
      firstPage + '333  A much lon…  9          a much longer channel name\n' + '4   Alan Turing   10\n',
    );
    // On a terminal the last column is cut at its edge.
    assert.equal(
      await render('table', [people, later], { columns: peopleColumns }, 44),
      firstPage + '333  A much lon…  9          a much longer…\n' + '4   Alan Turing   10\n',
    );
    assert.equal(
      await render('table', [people, later], { columns: peopleColumns }, 48),
      firstPage + '333  A much lon…  9          a much longer chan…\n' + '4   Alan Turing   10\n',
    );
  });

  it('writes each page at endPage(), the first with the header', async () => {
    const collector = new Collector();
    const writer = createWriter('table', writerOptions(collector));
    await writer.write({ id: 1, name: 'a' });
    assert.equal(collector.text, '');
    await writer.endPage();
    assert.equal(collector.text, 'ID  NAME\n1   a\n');
    await writer.write({ id: 2, name: 'b' });
    await writer.write({ id: 3, name: 'c' });
    assert.equal(collector.text, 'ID  NAME\n1   a\n');
    await writer.endPage();
    assert.equal(collector.text, 'ID  NAME\n1   a\n2   b\n3   c\n');
    await writer.write({ id: 4, name: 'd' });
    await writer.end();
    assert.equal(collector.text, 'ID  NAME\n1   a\n2   b\n3   c\n4   d\n');
  });

  it('flushes every 1000 rows even without endPage()', async () => {
    const collector = new Collector();
    const writer = createWriter('table', writerOptions(collector, { columns: ['id'] }));
    for (let id = 0; id < 999; id++) await writer.write({ id });
    assert.equal(collector.text, '');
    await writer.write({ id: 999 });
    assert.equal(collector.text.split('\n').length, 1002);
    await writer.write({ id: 12345 });
    for (let id = 1; id < 999; id++) await writer.write({ id });
    assert.equal(collector.text.split('\n').length, 1002, 'the next rows wait for their page');
    await writer.write({ id: 1 });
    assert.equal(collector.text.split('\n').length, 2002);
    assert.match(collector.text, /\n999\n12345\n1\n/);
  });

  it('does not fix the widths on an empty first page', async () => {
    assert.equal(await render('table', [[], [{ id: 12345, name: 'x' }]]), 'ID     NAME\n12345  x\n');
  });

  it('measures display width, not string length', async () => {
    assert.equal(
      await render(
        'table',
        [
          [
            { name: '日本語', id: 1 },
            { name: 'ab', id: 2 },
          ],
          [{ name: '日本語テキスト', id: 3 }],
        ],
        { columns: ['name', 'id'] },
        10,
      ),
      'NAME    ID\n日本語  1\nab      2\n日本…   3\n',
    );
  });

  it('counts an emoji as two columns and a combining mark as none', async () => {
    assert.equal(
      await render(
        'table',
        [
          [
            { name: '✅', id: 1 },
            { name: 'e\u0301', id: 2 },
            { name: 'abc', id: 3 },
          ],
        ],
        {
          columns: ['name', 'id'],
        },
      ),
      'NAME  ID\n✅    1\ne\u0301     2\nabc   3\n',
    );
  });

  it('cuts very long later values the same way, and marks a cut that would otherwise not show', async () => {
    const firstPage: Row[] = [{ id: 1, name: '日本語' }];
    const long: Row = { id: 2, name: '日本語'.repeat(2000) };
    const marks: Row = { id: 3, name: 'e' + '\u0301'.repeat(100) };
    const output = await render('table', [firstPage, [long, marks]], {}, 10);
    const lines = output.split('\n');
    assert.equal(lines.slice(0, 3).join('\n'), 'ID  NAME\n1   日本語\n2   日本…');
    assert.match(lines[3] ?? '', /^3 {3}e\u0301+…$/);
  });

  it('cuts a later value to an ellipsis alone in a one-column-wide column', async () => {
    assert.equal(await render('table', [[{ id: 1, name: 'a' }], [{ id: 2, name: 'abc' }]], { header: false }, 4), '1  a\n2  …\n');
  });

  it('shortens a header to its documented short form: no IS_/HAS_/CONTAINS_ prefix, no .ID/_ID suffix, then cut', () => {
    assert.equal(shortHeader('IS_PRIORITY', 11), 'IS_PRIORITY');
    assert.equal(shortHeader('IS_PRIORITY', 8), 'PRIORITY');
    assert.equal(shortHeader('IS_PRIORITY', 6), 'PRIOR…');
    assert.equal(shortHeader('ASSIGNED_TO.ID', 11), 'ASSIGNED_TO');
    assert.equal(shortHeader('CONVERSATION_ID', 12), 'CONVERSATION');
    assert.equal(shortHeader('CONTAINS_PRIVATE', 7), 'PRIVATE');
    assert.equal(shortHeader('ID', 1), '…');
  });

  it('shrinks the blank under long headers first, then free text, to fit the terminal width, never the ids', async () => {
    const output = await render('table', [people], { columns: peopleColumns }, 30);
    // AUTHOR.ID over a one-digit id gives way to its short form (AUTHOR) before a name is cut.
    assert.equal(output, 'ID  NAME      AUTHOR  CHANNEL…\n' + '1   Ada       7       mail\n' + '22  Grace H…  8\n');
    for (const line of output.split('\n')) assert.ok(line.length <= 30, line);
  });

  it('shows control characters in cells visibly', async () => {
    const output = await render('table', [[{ id: 1, name: 'ok\rPWNED\x1b[2J\u009b\u202e' }]]);
    assert.equal(output, 'ID  NAME\n1   ok\\rPWNED\\x1b[2J\\x9b\\u202e\n');
    assert.doesNotMatch(output, RAW_CONTROL);
  });

  it('shows bidi controls and zero-width characters visibly, in cells and in the header', async () => {
    const rows: Row[] = [
      { id: 1, 'na\u200dme': 'invoice\u200ftxt.exe' },
      { id: 2, 'na\u200dme': 'p\u200bay\ufeff' },
      { id: 3, 'na\u200dme': `x${BIDI_AND_ZERO_WIDTH}y` },
    ];
    const output = await render('table', [rows], { columns: ['id', 'na\u200dme'] });
    assert.equal(output, 'ID  NA\\u200dME\n' + '1   invoice\\u200ftxt.exe\n' + '2   p\\u200bay\\ufeff\n' + `3   x${BIDI_AND_ZERO_WIDTH_SHOWN}y\n`);
    assert.doesNotMatch(output, RAW_CONTROL);
    // They take columns now that they are visible: the grid holds on a terminal too.
    assert.equal(
      await render(
        'table',
        [
          [
            { id: 1, name: 'a\u200bb' },
            { id: 2, name: 'abcdefghij' },
          ],
        ],
        {},
        80,
      ),
      'ID  NAME\n1   a\\u200bb\n2   abcdefghij\n',
    );
  });

  it('styles the header bold only when color is on', async () => {
    const colored = await render('table', [[{ id: 1, name: 'a' }]], { color: true });
    assert.equal(colored, '\x1b[1mID\x1b[22m  \x1b[1mNAME\x1b[22m\n1   a\n');
    assert.doesNotMatch(await render('table', [[{ id: 1, name: 'a' }]]), /\x1b/);
  });

  it('prints a single record as key/value lines, every column, values never cut off a terminal', async () => {
    const columns = ['id', 'name', 'author.id', 'channels'];
    const longName = 'x'.repeat(80);
    const record = { ...people[0], name: longName };
    const output = await render('table', [[record]], { shape: 'single', columns });
    assert.equal(output, 'id         1\n' + `name       ${longName}\n` + 'author.id  7\n' + 'channels   mail (3), chat (4)\n');
    assert.equal(await render('table', [[{ id: 1, note: 'a\x07b' }]], { shape: 'single', columns: ['id', 'note'], header: false }), 'id    1\nnote  a\\x07b\n');
  });
});

describe('streaming', () => {
  const streaming: Format[] = ['json', 'ndjson', 'csv', 'tsv'];

  it('knows every format', () => {
    assert.deepEqual([...FORMATS], ['table', 'json', 'ndjson', 'csv', 'tsv']);
  });

  for (const format of streaming) {
    it(`${format}: writes each record at once, as one chunk`, async () => {
      const collector = new Collector();
      const writer = createWriter(format, writerOptions(collector));
      for (let id = 0; id < 5; id++) {
        await writer.write({ id, name: `marker-${id}` });
        assert.equal(collector.chunks.length, id + 1);
        assert.match(collector.chunks[id] ?? '', new RegExp(`marker-${id}`));
      }
      await writer.end();
    });
  }

  for (const format of [...streaming, 'table'] as Format[]) {
    it(`${format}: honours backpressure and keeps order with a slow consumer`, async () => {
      const received: string[] = [];
      let maxBufferedBeforeWrite = 0;
      const slow = new Writable({
        highWaterMark: 16,
        decodeStrings: false,
        write(chunk, _encoding, done) {
          setImmediate(() => {
            received.push(String(chunk));
            done();
          });
        },
      });
      const originalWrite = slow.write.bind(slow);
      slow.write = ((...args: Parameters<Writable['write']>) => {
        maxBufferedBeforeWrite = Math.max(maxBufferedBeforeWrite, slow.writableLength);
        return originalWrite(...args);
      }) as Writable['write'];
      const writer = createWriter(format, writerOptions(slow, { columns: ['id'] }));
      const count = 300;
      for (let page = 0; page < count / 50; page++) {
        for (let i = 0; i < 50; i++) await writer.write({ id: `r${String(page * 50 + i).padStart(4, '0')}` });
        await writer.endPage();
      }
      await writer.end();
      assert.ok(maxBufferedBeforeWrite < 16, `wrote while ${maxBufferedBeforeWrite} bytes were buffered`);
      const ids = received.join('').match(/r\d+/g) ?? [];
      assert.deepEqual(
        ids,
        Array.from({ length: count }, (_, i) => `r${String(i).padStart(4, '0')}`),
      );
    });
  }
});

describe('write errors', () => {
  it('rejects write() when the stream fails synchronously', async () => {
    const failing = new Writable({
      write(_chunk, _encoding, done) {
        done(new Error('EPIPE simulated'));
      },
    });
    const writer = createWriter('ndjson', writerOptions(failing));
    await assert.rejects(writer.write({ id: 1 }), /EPIPE simulated/);
    await assert.rejects(writer.write({ id: 2 }), /EPIPE simulated/);
    await assert.rejects(writer.end(), /EPIPE simulated/);
  });

  it('surfaces an error that arrives after write() resolved, on the next call', async () => {
    let calls = 0;
    const failingLater = new Writable({
      highWaterMark: 1 << 20,
      write(_chunk, _encoding, done) {
        calls += 1;
        if (calls === 2) setImmediate(() => done(new Error('reader went away')));
        else done();
      },
    });
    const writer = createWriter('csv', writerOptions(failingLater));
    await writer.write({ id: 1 });
    await writer.write({ id: 2 });
    await assert.rejects(async () => {
      for (let id = 3; id < 100; id++) {
        await writer.write({ id });
        await new Promise((resolve) => setImmediate(resolve));
      }
    }, /reader went away/);
    await assert.rejects(writer.end(), /reader went away/);
  });

  it('turns any other write failure into one line that says what happened', async () => {
    const disk = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' }));
      },
    });
    disk.on('error', () => undefined);
    const sink = new StreamSink(disk, undefined);
    await assert.rejects(
      sink.write('x\n'),
      (error: Error) => error instanceof OutputError && error.message === 'cannot write the output: no space left on device (ENOSPC)',
    );
  });

  it('into a regular file, a write after a failed one rejects with its error and gathers nothing (no throw at the call)', async () => {
    const chunks: string[] = [];
    const disk = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' }));
      },
    });
    disk.on('error', () => undefined);
    const sink = new StreamSink(disk, undefined, true);
    await sink.write('a\n');
    await assert.rejects(sink.flush(), OutputError);
    const written = sink.write('b\n');
    await assert.rejects(written, OutputError);
    await assert.rejects(sink.end(), OutputError);
    assert.deepEqual(chunks, ['a\n']);
  });

  it('rejects with EPIPE when the reading process has exited', async () => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: ['pipe', 'ignore', 'ignore'] });
    await once(child, 'exit');
    const writer = createWriter('ndjson', writerOptions(child.stdin));
    await assert.rejects(
      async () => {
        for (let id = 0; id < 100_000; id++) await writer.write({ id, padding: 'x'.repeat(100) });
      },
      (error: NodeJS.ErrnoException) => error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED',
    );
  });

  it('rejects on a stream that was already destroyed', async () => {
    const collector = new Collector();
    collector.destroy();
    const writer = createWriter('json', writerOptions(collector));
    await assert.rejects(writer.write({ id: 1 }));
  });
});

describe("computed columns (a report's state)", () => {
  it("keep the writer's count of what the reader took, so a stopped list resumes at the first record not taken", async () => {
    const chunks: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => (chunks.push(chunk.toString()), done()) });
    const writer = withComputed(createWriter('csv', writerOptions(stream, { columns: ['id', 'state'] })), [{ name: 'state', from: () => 'generated' }]);
    await writer.write({ id: '1' });
    await writer.write({ id: '2' });
    assert.equal(typeof writer.delivered, 'function');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(writer.delivered?.(), 2, 'the stream has taken both lines');
    await writer.end();
    assert.equal(chunks.join(''), 'id,state\r\n1,generated\r\n2,generated\r\n');
  });
});

describe('a stopped command and a reader that is not reading', () => {
  /** A stream whose reader never takes anything: every write waits for a drain that never comes. */
  const stuck = (): Writable => new Writable({ highWaterMark: 1, write: () => undefined });
  const stopped = (): AbortSignal => AbortSignal.abort();
  const record = { id: '1', name: 'x'.repeat(100) };

  for (const [what, shape] of [
    ['json', 'list'],
    ['ndjson', 'list'],
    ['csv', 'list'],
    ['tsv', 'list'],
    ['table', 'list'],
    ['table', 'single'],
  ] as const) {
    it(`-o ${what} (${shape}): the writer gives up instead of waiting for ever`, async () => {
      const writer = createWriter(what, writerOptions(stuck(), { shape, signal: stopped() }, shape === 'single' ? 80 : undefined));
      await assert.rejects(async () => {
        await writer.write(record);
        await writer.endPage();
        await writer.end();
      }, InterruptedError);
    });
  }

  it('content blocks on a terminal and a one-off text (api, config get) do too', async () => {
    const blocks = createBlockWriter({ stream: stuck(), isTTY: true, columns: 80 }, false, stopped());
    await assert.rejects(async () => {
      await blocks.write({ header: ['someone'], body: ['x'.repeat(100)] });
      await blocks.end();
    }, InterruptedError);
    await assert.rejects(writeText(stuck(), 'x'.repeat(100), stopped()), InterruptedError);
  });

  for (const argv of [
    ['completion', 'bash'],
    ['help', 'options'],
  ]) {
    it(`carectl ${argv.join(' ')} (a one-off text) ends on a stop, exit 130`, async () => {
      const stop = new AbortController();
      const running = runCli(argv, { stdout: stuck(), signal: stop.signal });
      setTimeout(() => stop.abort(), 20);
      const timeout = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 3000).unref());
      const result = await Promise.race([running, timeout]);
      assert.notEqual(result, 'hung', 'still waiting for the reader 3 s after the stop');
      assert.equal((result as { code: number }).code, 130);
    });
  }
});
