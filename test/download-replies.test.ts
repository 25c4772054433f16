/**
 * What a report's download address answers, from a server that is not the sandbox (field report
 * F5, F6, F11): a login page or an error body in place of the file is a failed download, not a
 * saved report; a relative download address is resolved against the report's own address; the
 * default file name takes its extension from what the reply says it holds.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { FIRST_BYTES, FirstBytes, formatOfType, type ReplyFacts } from '../src/http/download-check.js';
import { fakeClock, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

/** The file's reply: a body and its headers (no Content-Type unless given). */
interface FileReply {
  body: string | Buffer;
  headers?: Record<string, string>;
}

let api: ScriptedApi;
let folder: string;
/** The report's download field; `{base}` stands for the server's address. */
let downloadField: string;
let file: FileReply;

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const CSV = 'id,text\r\n1,hello\r\n2,world\r\n';
const LOGIN_PAGE = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><form>Please log in</form></body></html>';

before(async () => {
  api = await scriptedApi((request, res) => {
    if (request.method === 'POST') return { status: 201, json: { report: { id: 'R1', url: `${api.baseUrl}/v1.1/reports/R1` } } };
    if (request.url.startsWith('/v1.1/reports/R1?'))
      return {
        json: {
          report: {
            id: 'R1',
            url: `${api.baseUrl}/v1.1/reports/R1`,
            generation_start_date: '2026-06-08T10:00:00',
            generated_date: '2026-06-08T10:01:00',
            download: downloadField.replace('{base}', api.baseUrl),
          },
        },
      };
    if (request.url.startsWith('/files/') || request.url === '/v1.1/reports/R1/file') return void sendFile(res, file);
    return { status: 404, json: { status: 'error', message: 'unknown' } };
  });
});
after(() => api.close());
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'carectl-download-replies-'));
  downloadField = '{base}/files/r1';
  file = { body: CSV, headers: { 'content-type': 'text/csv' } };
});
afterEach(() => rm(folder, { recursive: true, force: true }));

function sendFile(res: ServerResponse, reply: FileReply): void {
  res.writeHead(200, reply.headers ?? {});
  res.end(reply.body);
}

function cli(args: string[]): ReturnType<typeof runCli> {
  const clock = fakeClock();
  return runCli(args, { env: scriptedEnv(api), cwd: folder, now: clock.now, sleep: clock.sleep });
}

const CREATE = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07'];

/** The requests for the file, with the credentials each carried. */
function fileRequests(from: number): { url: string; authorization: string | undefined }[] {
  return api.requests
    .slice(from)
    .filter((r) => !r.url.startsWith('/v1.1/reports?') && /\/files\/|\/file$/.test(r.url))
    .map(({ url, authorization }) => ({ url, authorization }));
}

describe('a download that is not the report (F5): exit 1, one line naming what came, nothing saved', () => {
  test('a 200 text/html login page', async () => {
    file = { body: LOGIN_PAGE, headers: { 'content-type': 'text/html; charset=utf-8' } };
    const out = await cli(['reports', 'download', 'R1', '--file', 'out.csv']);
    assert.equal(out.code, 1, out.stderr);
    assert.equal(
      out.stderr,
      `carectl: download from ${api.baseUrl} answered with an HTML page ("Sign in"), not the report (a login page?); ` +
        'nothing was saved; try again with: carectl reports download R1 --file out.csv\n',
    );
    assert.equal(out.stdout, '');
    assert.deepEqual(await readdir(folder), []);
  });

  test('an HTML page sent with no Content-Type or a generic one, after a BOM and blank lines: the same', async () => {
    for (const headers of [{}, { 'content-type': 'application/octet-stream' }] as Record<string, string>[]) {
      file = { body: `\ufeff\r\n  <HTML lang="en"><body>Please log in</body></html>`, headers };
      const out = await cli(['reports', 'wait', 'R1', '--download', 'out.csv']);
      assert.equal(out.code, 1, out.stderr);
      assert.match(
        out.stderr,
        /answered with an HTML page, not the report \(a login page\?\); nothing was saved; try again with: carectl reports wait R1 --download out\.csv\n$/,
      );
      assert.deepEqual(await readdir(folder), []);
    }
  });

  test("the spec's error shape: the service's message", async () => {
    file = { body: '{"status":"error","message":"report expired"}', headers: { 'content-type': 'application/json' } };
    const out = await cli(['reports', 'download', 'R1', '--file', 'x.csv']);
    assert.equal(out.code, 1, out.stderr);
    assert.equal(
      out.stderr,
      `carectl: download from ${api.baseUrl} answered with an error, not the report: report expired; nothing was saved; try again with: carectl reports download R1 --file x.csv\n`,
    );
    assert.deepEqual(await readdir(folder), []);
  });

  test('create --format csv: a JSON object of any shape is not the csv report', async () => {
    file = { body: ' {"error": "token expired"}\n', headers: { 'content-type': 'text/csv' } };
    const out = await cli([...CREATE, '--format', 'csv', '--download', 'out.csv', '--quiet']);
    assert.equal(out.code, 1, out.stderr);
    assert.match(
      out.stderr,
      /answered with JSON, not the csv report: token expired; nothing was saved; try again with: carectl reports wait R1 --download out\.csv\n$/,
    );
    assert.deepEqual(await readdir(folder), []);
  });

  test('create --format xlsx: a file that is not a ZIP archive is not an xlsx report', async () => {
    file = { body: CSV, headers: { 'content-type': 'application/octet-stream' } };
    const out = await cli([...CREATE, '--format', 'xlsx', '--download', 'out.xlsx', '--quiet']);
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stderr, /answered with a file that is not an xlsx workbook \(not a ZIP archive\), not the report; nothing was saved/);
    assert.deepEqual(await readdir(folder), []);
  });

  test('to stdout: not a byte of the page is written, and the message says nothing was saved', async () => {
    file = { body: LOGIN_PAGE, headers: {} };
    const out = await cli(['reports', 'download', 'R1', '--file', '-']);
    assert.equal(out.code, 1, out.stderr);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /not the report \(a login page\?\); nothing was saved; try again with: carectl reports download R1 --file -\n$/);
  });

  test('no retry: the same page would come again', async () => {
    file = { body: LOGIN_PAGE, headers: { 'content-type': 'text/html' } };
    const from = api.requests.length;
    const out = await cli(['reports', 'download', 'R1', '--file', 'out.csv']);
    assert.equal(out.code, 1, out.stderr);
    assert.equal(fileRequests(from).length, 1);
  });
});

describe('a download that is the report is saved as sent, whatever its type says', () => {
  const BIG_JSON = JSON.stringify({ status: 'error', rows: Array.from({ length: 3000 }, (_, i) => ({ id: i, status: 'error', message: 'x' })) });
  const XLSX = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(5000, 7)]);
  const cases: [string, string[], FileReply][] = [
    ['csv with no Content-Type', [], { body: CSV }],
    ['csv sent as application/octet-stream', [], { body: CSV, headers: { 'content-type': 'application/octet-stream' } }],
    [
      'a json report whose rows hold status "error"',
      ['--format', 'json'],
      { body: '{"rows":[{"status":"error","message":"m"}]}', headers: { 'content-type': 'application/json' } },
    ],
    ['a json report with a top-level status that is not "error"', [], { body: '{"status":"ok","rows":[]}', headers: { 'content-type': 'application/json' } }],
    [
      'a json report past the bytes looked at, though its first key is status "error"',
      ['--format', 'json'],
      { body: BIG_JSON, headers: { 'content-type': 'application/json' } },
    ],
    ['an xlsx workbook sent as application/octet-stream', ['--format', 'xlsx'], { body: XLSX, headers: { 'content-type': 'application/octet-stream' } }],
    ['a csv that starts with a tag-like cell', ['--format', 'csv'], { body: '<h1>,x\r\n1,2\r\n', headers: { 'content-type': 'text/csv' } }],
  ];
  for (const [name, flags, reply] of cases) {
    test(name, async () => {
      file = reply;
      const out = await cli([...CREATE, ...flags, '--download', 'out', '--quiet']);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stderr, '');
      assert.deepEqual(await readFile(join(folder, 'out')), Buffer.from(reply.body));
    });
  }
});

describe('a relative download address (F6)', () => {
  test("is resolved against the report's own address, and the download still carries no credentials", async () => {
    downloadField = '/v1.1/reports/R1/file';
    const from = api.requests.length;
    const out = await cli(['reports', 'wait', 'R1', '--download', 'rel.csv']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stderr, 'report R1: generated (0s)\nreport R1: saved 27 B to rel.csv\n');
    assert.equal(await readFile(join(folder, 'rel.csv'), 'utf8'), CSV);
    assert.deepEqual(fileRequests(from), [{ url: '/v1.1/reports/R1/file', authorization: undefined }]);
    assert.ok(api.requests.slice(from, -1).every((r) => r.authorization?.startsWith('Basic ')));
  });

  test("a path-relative one too (against the report's address, not the base)", async () => {
    downloadField = 'R1/file';
    const out = await cli(['reports', 'download', 'R1', '--file', '-']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, CSV);
  });
});

describe('the default file name report-ID.EXT (F11)', () => {
  const cases: [string, string, FileReply, string[], string][] = [
    [
      'text/csv at an address with no extension',
      '{base}/v1.1/reports/R1/file',
      { body: CSV, headers: { 'content-type': 'text/csv; charset=utf-8' } },
      [],
      'report-R1.csv',
    ],
    ['application/json', '{base}/files/r1', { body: '[]', headers: { 'content-type': 'application/json' } }, [], 'report-R1.json'],
    ['the xlsx type', '{base}/files/r1', { body: 'PK\x03\x04zz', headers: { 'content-type': XLSX_TYPE } }, [], 'report-R1.xlsx'],
    [
      "a generic type: the address's extension",
      '{base}/files/r1.xlsx?sig=1',
      { body: 'PK\x03\x04zz', headers: { 'content-type': 'application/octet-stream' } },
      [],
      'report-R1.xlsx',
    ],
    [
      'a generic type, no extension: the format asked',
      '{base}/files/r1',
      { body: CSV, headers: { 'content-type': 'application/octet-stream' } },
      ['--format', 'csv'],
      'report-R1.csv',
    ],
    ['nothing says: .bin', '{base}/files/r1', { body: CSV, headers: {} }, [], 'report-R1.bin'],
  ];
  for (const [name, address, reply, flags, expected] of cases) {
    test(name, async () => {
      downloadField = address;
      file = reply;
      await mkdir(join(folder, 'into'));
      const out = flags.length === 0 ? await cli(['reports', 'download', 'R1']) : await cli([...CREATE, ...flags, '--download', 'into']);
      assert.equal(out.code, 0, out.stderr);
      const where = flags.length === 0 ? folder : join(folder, 'into');
      assert.deepEqual(
        (await readdir(where)).filter((f) => f !== 'into'),
        [expected],
      );
      assert.match(out.stderr, new RegExp(`saved \\d+ B to ${flags.length === 0 ? '' : 'into/'}${expected.replace('.', '\\.')}\\n$`));
      assert.deepEqual(await readFile(join(where, expected)), Buffer.from(reply.body));
    });
  }
});

describe('the first bytes, as they stream (unit)', () => {
  const facts = (contentType?: string, asked?: string): ReplyFacts => ({ contentType, asked });
  /** What FirstBytes lets through when the body comes `size` bytes at a time, or the error it throws. */
  function through(body: string | Buffer, size: number, replyFacts: ReplyFacts): string | Error {
    const bytes = Buffer.from(body);
    const gate = new FirstBytes(replyFacts, 'download from X');
    const out: Buffer[] = [];
    try {
      for (let at = 0; at < bytes.length; at += size) out.push(...gate.pass(bytes.subarray(at, at + size)));
      out.push(...gate.end());
    } catch (err) {
      return err as Error;
    }
    return Buffer.concat(out).toString('latin1');
  }

  for (const size of [1, 3, 1000]) {
    test(`${size} byte(s) at a time: a page is refused, a report let through whole`, () => {
      assert.match(String(through(LOGIN_PAGE, size, facts())), /download from X answered with an HTML page \("Sign in"\)/);
      assert.match(String(through('  <!doctype html><p>x', size, facts('text/csv'))), /an HTML page, not the report/);
      assert.equal(through(CSV, size, facts()), CSV);
      assert.equal(through('<htmlx,y\r\n', size, facts()), '<htmlx,y\r\n');
      assert.equal(through('{"status":"error"}', size, facts()) instanceof Error, true);
      assert.equal(through('["status","error"]', size, facts(undefined, 'csv')), '["status","error"]');
      assert.equal(through('{"status":"fine"}', size, facts('application/json')), '{"status":"fine"}');
      assert.match(String(through('{"status":"fine"}', size, facts('text/csv'))), /answered with JSON, not the csv report$/);
      assert.equal(through('PK\x03\x04rest', size, facts(undefined, 'xlsx')), 'PK\x03\x04rest');
      assert.match(String(through('PK\x03', size, facts(undefined, 'xlsx'))), /not an xlsx workbook/);
      assert.match(String(through('id,x\r\n', size, facts(XLSX_TYPE))), /not an xlsx workbook/);
      assert.equal(through('', size, facts()), '');
    });
  }

  test('a real report is not refused on one sign alone (review): a csv typed text/html, a first cell that is markup, a json report with a status, an encrypted workbook', () => {
    assert.equal(through(CSV, 1000, facts('text/html; charset=utf-8', 'csv')), CSV);
    assert.equal(through('<html lang="en"> snippet,closed\r\n', 1000, facts('text/csv')), '<html lang="en"> snippet,closed\r\n');
    const report = '{"status":"error","id":"5","message":"delivery failed"}';
    assert.equal(through(report, 1000, facts('application/json', 'json')), report);
    const encrypted = Buffer.from('d0cf11e0a1b11ae1', 'hex');
    assert.equal(through(encrypted, 1000, facts('application/octet-stream', 'xlsx')), encrypted.toString('latin1'));
    // Still refused: a page typed text/html, or one that shows a title whatever its type; the spec's error body.
    assert.match(String(through(LOGIN_PAGE, 1000, facts('text/html'))), /an HTML page \("Sign in"\)/);
    assert.match(String(through('<html><head><title>Sign in</title></head></html>', 1000, facts('text/csv'))), /an HTML page \("Sign in"\)/);
    assert.match(
      String(through('{"status":"error","message":"report expired"}', 1000, facts('application/json', 'json'))),
      /an error, not the report: report expired$/,
    );
  });

  test('a body past the bytes held is let through once they are, before its end', () => {
    const gate = new FirstBytes(facts('application/json'), 'download from X');
    assert.deepEqual(gate.pass(Buffer.from('{"a":')), []);
    const big = Buffer.alloc(FIRST_BYTES, 0x20);
    assert.equal(Buffer.concat(gate.pass(big)).length, FIRST_BYTES + 5);
    assert.deepEqual(gate.pass(Buffer.from('1}')), [Buffer.from('1}')]);
  });

  test('the format a Content-Type names', () => {
    assert.equal(formatOfType('text/csv; charset=utf-8'), 'csv');
    assert.equal(formatOfType('Application/JSON'), 'json');
    assert.equal(formatOfType('application/vnd.api+json'), 'json');
    assert.equal(formatOfType('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'), 'xlsx');
    assert.equal(formatOfType('application/octet-stream'), undefined);
    assert.equal(formatOfType(undefined), undefined);
  });
});
