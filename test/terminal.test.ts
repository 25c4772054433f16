/**
 * What a person sees at a terminal (contract: "At a terminal"): one record as `key  value` lines
 * with every field, a conversation's thread as blocks of wrapped text with the restricted
 * microblog placeholders said to be unavailable, and a report's state as a column. The text
 * helpers under them are tested first.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createBlockWriter } from '../src/output/blocks.js';
import { createWriter } from '../src/output/index.js';
import { describeEntries } from '../src/output/describe.js';
import { fitLine, hangingLines, wrapText } from '../src/output/text-width.js';
import { displayWidth } from '../src/output/width.js';
import { CONTENT_ITEM, hasPlaceholderDate, isPlaceholderLink, reportState, resourceByName } from '../src/catalogue/index.js';
import { fieldsParam } from '../src/cli/query-params.js';
import { FIXTURES, MICROBLOG_PLACEHOLDER_LINK, type Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';

class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('text measured in terminal columns', () => {
  test('fitLine cuts to columns - 1 with an ellipsis, and leaves text that fits', () => {
    assert.equal(fitLine('report 60001: generating (4s)', 80), 'report 60001: generating (4s)');
    assert.equal(fitLine('report 60001: generating (4s)', 11), 'report 60…');
    assert.equal(displayWidth(fitLine('日本語のテキストです', 9)), 7);
    assert.equal(fitLine('anything', undefined), 'anything');
  });

  test('wrapText breaks at spaces, cuts a word longer than a line, and measures wide characters', () => {
    assert.deepEqual(wrapText('the quick brown fox jumps', 10), ['the quick', 'brown fox', 'jumps']);
    assert.deepEqual(
      wrapText('see https://example.com/a/very/long/path now', 12),
      ['see', 'https://example.com/a/very/long/path', 'now'],
      'a URL whole on a line of its own',
    );
    assert.deepEqual(wrapText('abcdefghijklmnopqrstuvwxyz0123456789', 12), ['abcdefghijkl', 'mnopqrstuvwx', 'yz0123456789']);
    assert.deepEqual(wrapText('日本語 日本語', 7), ['日本語', '日本語']);
    assert.deepEqual(wrapText('short', undefined), ['short']);
    // A long word after text on the first line, wide characters, a one-column gap a wide one cannot use.
    assert.deepEqual(wrapText('ab 日本語日本語 x', 5, { firstWidth: 4 }), ['ab', '日本', '語日', '本語', 'x']);
    assert.deepEqual(wrapText('a😀😀😀', 3), ['a😀', '😀', '😀']);
    // A 200 KB word: every character once, in lines of the width.
    const lines = wrapText('y'.repeat(200_000), 80);
    assert.equal(lines.length, 2500);
    assert.ok(lines.every((line) => line === 'y'.repeat(80)));
  });

  test('hangingLines indents every line after the first under the value', () => {
    assert.deepEqual(hangingLines('name  ', 'one two three four five six seven', 26), ['name  one two three four', '      five six seven']);
    // a label wider than the indent: the value starts after it and goes on at the indent
    assert.deepEqual(hangingLines('a_long_key  ', 'one two three four five six seven', 30, 6), ['a_long_key  one two three four', '      five six seven']);
    assert.deepEqual(hangingLines('note  ', 'line one\nline two', undefined), ['note  line one', '      line two']);
  });
});

describe('one record as key/value lines (get in table form)', () => {
  const record = {
    id: '500002',
    status: 'assigned',
    tags: [
      { id: '7001', url: 'u' },
      { id: '7005', url: 'u', name: 'vip' },
    ],
    author: { id: 'm:1', url: 'http://x/authors/m:1' },
    handling_times: { first_response_seconds: 300 },
    attachments: [{ caption: null, media: [{ src: 'https://m/1.jpg', type: 'image' }] }],
    codes: ['a', 'b'],
    empty: [],
    note: null,
  };

  test('flattens objects to dotted keys and summarises lists of references by name and id', () => {
    assert.deepEqual(
      Object.entries(record).flatMap(([key, value]) => describeEntries(key, value)),
      [
        ['id', '500002'],
        ['status', 'assigned'],
        ['tags', '7001, vip (7005)'],
        ['author.id', 'm:1'],
        ['author.url', 'http://x/authors/m:1'],
        ['handling_times.first_response_seconds', '300'],
        ['attachments.0.caption', ''],
        ['attachments.0.media.0.src', 'https://m/1.jpg'],
        ['attachments.0.media.0.type', 'image'],
        ['codes', 'a, b'],
        ['empty', ''],
        ['note', ''],
      ],
    );
  });

  async function describeRecord(value: Record<string, unknown>, opts: { columns?: string[]; width?: number; color?: boolean } = {}): Promise<string> {
    const out = new Collector();
    const writer = createWriter('table', {
      out: { stream: out, isTTY: opts.width !== undefined, ...(opts.width !== undefined && { columns: opts.width }) },
      shape: 'single',
      columns: opts.columns ?? [],
      everyField: opts.columns === undefined,
      header: true,
      escapeFormulas: true,
      color: opts.color ?? false,
    });
    await writer.write(value);
    await writer.end();
    return out.text;
  }

  test('every field, keys aligned; long values wrap under their value on a terminal, never off one', async () => {
    const long = { id: '1', description: 'word '.repeat(20).trim(), url: 'http://example.com/' + 'x'.repeat(50) };
    assert.equal(await describeRecord(long), `id           1\ndescription  ${long.description}\nurl          ${long.url}\n`);
    const wrapped = (await describeRecord(long, { width: 40 })).split('\n');
    assert.ok(
      wrapped.every((line) => line.length <= 40),
      wrapped.join('\n'),
    );
    assert.equal(wrapped[1], 'description  word word word word word');
    assert.equal(wrapped[2], '             word word word word word');
    // An address wider than the room under the value is cut there, after a / where it can be: never at the first column.
    const url = wrapped.findIndex((line) => line.startsWith('url'));
    assert.deepEqual(wrapped.slice(url), ['url          http://example.com/', `             ${'x'.repeat(27)}`, `             ${'x'.repeat(23)}`, '']);
  });

  test("on a narrow terminal values start in one column: a key longer than the keys' column has a line of its own", async () => {
    const record = {
      id: '1',
      handling_times: { first_response_seconds: 300, resolution_seconds: null },
      author: { id: 'm:1', url: 'http://127.0.0.1:18626/v1.3/authors/m:777000001' },
      email: 'mei.nguyen.1@sandbox.example.com',
    };
    const lines = (await describeRecord(record, { width: 40 })).split('\n');
    assert.deepEqual(lines, [
      'id                1',
      'handling_times.first_response_seconds',
      '                  300',
      'handling_times.resolution_seconds',
      'author.id         m:1',
      // An address wider than the room after its key goes on under the value, broken after a / or an @ where it can be.
      'author.url        http://127.0.0.1:18626',
      '                  /v1.3/authors/',
      '                  m:777000001',
      'email             mei.nguyen.1@',
      '                  sandbox.example.com',
      '',
    ]);
  });

  test('--columns narrows it; keys bold only with colour; control characters shown escaped', async () => {
    assert.equal(await describeRecord(record, { columns: ['id', 'author'] }), 'id          500002\nauthor.id   m:1\nauthor.url  http://x/authors/m:1\n');
    assert.equal(await describeRecord({ id: '1', name: 'a\x1b[2Jb' }, { color: true }), '\x1b[1mid\x1b[22m    1\n\x1b[1mname\x1b[22m  a\\x1b[2Jb\n');
  });
});

describe('the fields a view needs', () => {
  test('one record in table form asks for every field; --columns for its own; a computed column for the fields it needs', () => {
    const conversations = resourceByName('conversations');
    const reports = resourceByName('reports');
    assert.deepEqual(fieldsParam(conversations, 'single', true, [], undefined), [['fields', conversations.fields.join(',')]]);
    assert.deepEqual(fieldsParam(conversations, 'single', false, ['id', 'author.id'], undefined), [['fields', 'author']]);
    assert.deepEqual(fieldsParam(reports, 'list', false, ['id', 'state'], undefined), [['fields', 'generation_start_date,generated_date,download,failure']]);
  });

  test("a report's state comes from its record (spec: Report lifecycle)", () => {
    assert.equal(reportState({ id: '1' }), 'queued');
    assert.equal(reportState({ id: '1', generation_start_date: '2026-06-30T12:00:00', generated_date: '' }), 'generating');
    assert.equal(reportState({ id: '1', generated_date: '2026-06-30T12:00:05', download: 'http://d/x.csv' }), 'generated');
    assert.equal(reportState({ id: '1', generation_start_date: 'x', failure: 'boom' }), 'failed');
  });

  test('the placeholders of restricted microblog items are recognised', () => {
    assert.equal(hasPlaceholderDate({ created_date: '1970-01-01T00:00:00' }), true);
    assert.equal(hasPlaceholderDate({ created_date: '2026-06-30T12:00:00' }), false);
    assert.equal(isPlaceholderLink(MICROBLOG_PLACEHOLDER_LINK), true);
    assert.equal(isPlaceholderLink('https://microblog.example/status/5000023'), false);
    assert.equal(isPlaceholderLink(null), false);
  });
});

describe('text blocks', () => {
  test('a header, the text wrapped to the terminal, a blank line between blocks', async () => {
    const out = new Collector();
    const writer = createBlockWriter({ stream: out, isTTY: true, columns: 20 }, false, new AbortController().signal);
    await writer.write({ header: ['m:1', '2026-06-30T12:00:00'], body: ['one two three four five six', 'second line'] });
    await writer.write({ header: ['f:2', 'microblog/reply', '(by source)'], body: ['\x07bell'] });
    await writer.end();
    // a header part stays whole: '(by source)' moves to the next line rather than breaking
    assert.equal(out.text, 'm:1\n2026-06-30T12:00:00\none two three four\nfive six\nsecond line\n\nf:2  microblog/reply\n(by source)\n\\x07bell\n');
  });
});

describe('at a terminal, end to end', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());
  const terminal = (columns: number) => ({ stdoutTTY: true, columns, env: { NO_COLOR: '1' } });

  test('get shows every field of the record, wrapped to the terminal, having asked the service for all of them', async () => {
    const start = sandbox.requests.length;
    const result = await runCli(['conversations', 'get', FIXTURES.multiPlatformConversationId], { ...terminal(60), sandbox });
    assert.equal(result.code, 0, result.stderr);
    const [request] = apiRequests(sandbox, start);
    assert.equal(new URL(request!.url, 'http://x').searchParams.get('fields'), resourceByName('conversations').fields.join(','));
    const lines = result.stdout.trimEnd().split('\n');
    // Every line fits but those of a URL, which is never broken.
    assert.ok(
      lines.every((line) => displayWidth(line) <= 60 || / http:\/\/\S+$/.test(line)),
      result.stdout,
    );
    assert.match(result.stdout, /^id {2,}500002\n/);
    assert.match(result.stdout, /\nstatus {2,}\w+\n/);
    assert.match(result.stdout, /\nauthor\.id {2,}m:777000001\n/);
    assert.match(result.stdout, /\nchannels {2,}Acme Microblog \(201\), Acme Facebook\n {2,}\(202\)\n/);
    // a key longer than the key column (a third of the width) has a line of its own, its value in the values' column
    assert.match(result.stdout, /\nhandling_times\.first_response_seconds\n {22}\d+\n/);
    assert.match(result.stdout, /\ntags {2,}\S/);
    // values go on in the value column
    const valueColumn = (lines[0] as string).indexOf('500002');
    for (const line of lines.filter((l) => l.startsWith(' '))) assert.equal(line.search(/\S/), valueColumn, line);
  });

  test('off a terminal -o table prints the same lines unwrapped; --columns narrows them and what is asked for', async () => {
    const wide = await runCli(['authors', 'get', FIXTURES.microblogAuthorId, '-o', 'table'], { sandbox, columns: 30 });
    assert.equal(wide.code, 0, wide.stderr);
    assert.ok(
      wide.stdout.split('\n').some((line) => line.length > 30),
      'not wrapped off a terminal',
    );
    assert.match(wide.stdout, /\nprofile_link {2,}https:\S+\n/);
    const start = sandbox.requests.length;
    const narrow = await runCli(['conversations', 'get', '500002', '--columns', 'status,author.id'], { ...terminal(80), sandbox });
    assert.match(narrow.stdout, /^status {5}\w+\nauthor\.id {2}m:777000001\n$/);
    const [request] = apiRequests(sandbox, start);
    assert.equal(new URL(request!.url, 'http://x').searchParams.get('fields'), 'status,author');
  });

  test('conversations content on a terminal: each item as a block, placeholders shown as unavailable', async () => {
    const result = await runCli(['conversations', 'content', FIXTURES.multiPlatformConversationId], { ...terminal(50), sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(
      result.stdout.split('\n').every((line) => displayWidth(line) <= 50),
      result.stdout,
    );
    const blocks = result.stdout.trimEnd().split('\n\n');
    assert.equal(blocks.length, 4);
    // restricted inbound item: no time, no text, no link, said so
    assert.match(
      blocks[0]!,
      /^m:777000001\s+\(time unavailable; imported 2026-\d\d-\d\dT[\d:]+\)\s+microblog\/post\n\(text unavailable\)\n\(link unavailable\)$/,
    );
    // restricted post of the channel itself: its text is kept
    assert.match(blocks[1]!, /\(by source\)\nWe are looking into delays on route 12\.\n\(link unavailable\)$/);
    // exempt reply written through the service: real time and link
    assert.match(
      blocks[2]!,
      /^m:880001 {2}2026-\d\d-\d\dT\d\d:\d\d:\d\d {2}microblog\/reply\s+\(by source\)\nHi Sam, your flight is on time\.\nhttps:\/\/microblog\.example\/status\/5000023$/,
    );
    assert.match(blocks[3]!, /facebook\/reply/);
    assert.doesNotMatch(result.stdout, /1970|this-info-is-unavailable/);
  });

  test('conversations content: csv and json keep the placeholders as the service sent them; a table on a terminal says them in words', async () => {
    const csv = await runCli(['conversations', 'content', '500002', '-o', 'csv'], { sandbox, stdoutTTY: true });
    assert.equal(csv.stdout.split('\r\n')[0], ['conversation_id', ...CONTENT_ITEM.defaultColumns].join(','));
    assert.match(csv.stdout, /1970-01-01T00:00:00/);
    const json = await runCli(['conversations', 'content', '500002', '-o', 'json'], { sandbox, stdoutTTY: true });
    assert.equal((JSON.parse(json.stdout) as Array<{ link: string }>)[0]?.link, MICROBLOG_PLACEHOLDER_LINK);
    const rows = await runCli(['conversations', 'content', '500002', '--columns', 'id,text'], { ...terminal(80), sandbox });
    assert.match(rows.stdout, /^ID +TEXT\n5000021 +\(text unavailable\)\n/);
    // Every terminal view alike: several ids as table rows, and get --include content.
    const several = await runCli(['conversations', 'content', '500002', '500068', '--columns', 'id,created_date,link'], { ...terminal(120), sandbox });
    assert.match(several.stdout, /^5000021 +\(time unavailable\) +\(link unavailable\)$/m);
    assert.doesNotMatch(several.stdout, /1970|this-info-is-unavailable/);
    const get = await runCli(['conversations', 'get', '500002', '--include', 'content'], { ...terminal(120), sandbox });
    assert.match(get.stdout, /^content\.0\.created_date +\(time unavailable\)$/m);
    assert.doesNotMatch(get.stdout, /1970-01-01|this-info-is-unavailable/);
  });

  test("reports list and get show the report's state, and ask for the fields it is derived from", async () => {
    const start = sandbox.requests.length;
    const list = await runCli(['reports', 'list', '-o', 'tsv'], { sandbox });
    assert.equal(list.code, 0, list.stderr);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    assert.equal(header, 'id\tname\tstate\tdate_from\tdate_to\tgenerated_date\tfailure');
    const states = new Map(rows.map((row) => row.split('\t')).map((cells) => [cells[0], cells[2]]));
    assert.equal(states.get(FIXTURES.reports.generatedId), 'generated');
    assert.equal(states.get(FIXTURES.reports.failedId), 'failed');
    const fields = new URL(apiRequests(sandbox, start)[0]!.url, 'http://x').searchParams.get('fields')!.split(',');
    for (const needed of ['generation_start_date', 'generated_date', 'download', 'failure']) assert.ok(fields.includes(needed), needed);

    const picked = await runCli(['reports', 'list', '--columns', 'id,state', '-o', 'csv', '--limit', '2', '--quiet'], { sandbox });
    assert.match(picked.stdout, /^id,state\r\n\d+,(queued|generating|generated|failed)\r\n/);
    const one = await runCli(['reports', 'get', FIXTURES.reports.failedId], { ...terminal(100), sandbox });
    assert.match(one.stdout, /^id {2,}60002\nstate {2,}failed\n/);
    // json prints the record as the service sent it
    const json = await runCli(['reports', 'get', FIXTURES.reports.failedId, '-o', 'json'], { sandbox });
    assert.equal('state' in (JSON.parse(json.stdout) as object), false);
  });
});
