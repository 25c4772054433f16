/**
 * Compression (issue 24 item 1): carectl asks for compressed replies, decodes any
 * Content-Encoding (asked for or not), applies the reply cap to the decoded bytes (a gzip bomb
 * stops there), and saves a download sent with a Content-Encoding decoded, a real .gz as sent.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { BadReplyError, CarectlError } from '../src/core/errors.js';
import { download, PartialFile } from '../src/http/download.js';
import { contentCodings, decodedBody } from '../src/http/encoding.js';
import { parseBandwidth, reportFileContent, type Sandbox } from '../src/sandbox/index.js';
import { Link } from '../src/sandbox/link.js';
import { downloadOptions, fakeClock, openSandbox, runCli } from './helpers.js';
import { serve, testTransport } from './scripted-server.js';

const VALUE = { data: [{ id: '1', text: 'héllo '.repeat(200) }] };
const TEXT = JSON.stringify(VALUE);
const CODINGS: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => gzipSync(b),
  'x-gzip': (b) => gzipSync(b),
  br: (b) => brotliCompressSync(b),
  deflate: (b) => deflateSync(b),
};

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'carectl-compression-'));
});
after(() => rm(folder, { recursive: true, force: true }));

describe('API replies', () => {
  test('every request asks for gzip, deflate and br', async () => {
    const server = await serve((_req, res) => res.end('{}'));
    try {
      const transport = testTransport(server.url, fakeClock());
      await transport.get(new URL(`${server.url}/v1.3/tags`));
      await transport.close();
      assert.equal(server.hits[0]!.headers['accept-encoding'], 'gzip, deflate, br');
    } finally {
      await server.close();
    }
  });

  const cases: [string, string, Buffer][] = [
    ...Object.entries(CODINGS).map(([name, code]): [string, string, Buffer] => [name, name, code(Buffer.from(TEXT))]),
    ['raw deflate (as some servers send it)', 'deflate', deflateRawSync(Buffer.from(TEXT))],
    ['gzip then br, in the order applied', 'gzip, br', brotliCompressSync(gzipSync(Buffer.from(TEXT)))],
    ['identity', 'identity', Buffer.from(TEXT)],
  ];
  for (const [name, header, bytes] of cases) {
    test(`Content-Encoding ${name} is decoded`, async () => {
      const server = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': header, 'content-length': String(bytes.length) });
        res.end(bytes);
      });
      try {
        const transport = testTransport(server.url, fakeClock());
        assert.deepEqual(await transport.get(new URL(`${server.url}/v1.3/tags`)), VALUE);
        await transport.close();
        assert.equal(server.hits.length, 1);
      } finally {
        await server.close();
      }
    });
  }

  test('a gzip bomb stops at the cap on decoded bytes, with a clear error', async () => {
    // 64 KiB on the wire, 64 MiB decoded: reading stops at the cap (4 MiB here), not after.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    });
    try {
      const transport = testTransport(server.url, fakeClock(), { retries: 0, maxReplyBytes: 4 * 1024 * 1024 });
      const error = await transport.get(new URL(`${server.url}/v1.3/tags`)).then(
        () => undefined,
        (err: unknown) => err,
      );
      await transport.close();
      assert.ok(error instanceof BadReplyError, String(error));
      assert.equal(error.message, `GET ${server.url}/v1.3/tags: the reply is larger than the 4 MiB carectl reads`);
    } finally {
      await server.close();
    }
  });

  test('an unknown coding fails at once, naming it; broken gzip is a bad reply, retried', async () => {
    const server = await serve((req, res) => {
      const coding = req.url!.includes('zstd') ? 'zstd' : 'gzip';
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
      res.end('not compressed at all');
    });
    try {
      const transport = testTransport(server.url, fakeClock(), { retries: 1 });
      await assert.rejects(transport.get(new URL(`${server.url}/zstd`)), {
        name: 'BadReplyError',
        message: `GET ${server.url}/zstd: the reply is in the zstd content coding, which carectl cannot decode`,
      });
      assert.equal(server.hits.length, 1);
      await assert.rejects(transport.get(new URL(`${server.url}/gzip`)), {
        name: 'BadReplyError',
        message: /^GET .*\/gzip: the reply's gzip coding is broken \(/,
      });
      assert.equal(server.hits.length, 3);
      await transport.close();
    } finally {
      await server.close();
    }
  });

  test('a chain of more than 5 codings (2000 × gzip) is refused at once, not retried; 5 are decoded', async () => {
    let five = Buffer.from('{"ok":true}');
    for (let i = 0; i < 5; i++) five = gzipSync(five);
    const server = await serve((req, res) => {
      const many = req.url!.includes('many');
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': Array(many ? 2000 : 5)
          .fill('gzip')
          .join(', '),
      });
      res.end(many ? gzipSync('{}') : five);
    });
    try {
      const transport = testTransport(server.url, fakeClock(), { retries: 1 });
      await assert.rejects(transport.get(new URL(`${server.url}/many`)), {
        name: 'BadReplyError',
        message: `GET ${server.url}/many: the reply names 2000 content codings, more than the 5 carectl decodes`,
      });
      assert.equal(server.hits.length, 1);
      assert.deepEqual(await transport.get(new URL(`${server.url}/five`)), { ok: true });
      await transport.close();
    } finally {
      await server.close();
    }
  });

  test('a stop ends the decoding at once, even where the bytes all came and decode to nothing for long', async () => {
    // gzip of gzip: the inner stream is 10 MB of empty deflate blocks (5 bytes each), the body 10 KB.
    const empty = Buffer.from([0, 0, 0, 0xff, 0xff]);
    const inner = Buffer.concat([
      Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]),
      Buffer.alloc(2_000_000 * empty.length, empty),
      Buffer.from([1, 0, 0, 0xff, 0xff]),
      Buffer.alloc(8),
    ]);
    const body = Readable.from([gzipSync(inner)]);
    const stop = new AbortController();
    const reason = new Error('stopped');
    const decoded = await decodedBody(body, 'gzip, gzip', stop.signal);
    // The connection's part is over; the stop comes with all the decoding still to do.
    body.on('end', () => stop.abort(reason));
    await assert.rejects(async () => {
      for await (const chunk of decoded.stream) assert.fail(`decoded ${String(chunk)}`);
    }, reason);
  });

  test('codings are read as listed, identity left out', () => {
    assert.deepEqual(contentCodings('GZIP, identity ,br'), ['gzip', 'br']);
    assert.deepEqual(contentCodings(undefined), []);
  });
});

describe('downloads', () => {
  const FILE = Buffer.from('id,text\n'.concat('1,hello\n'.repeat(5000)));

  async function fetch(headers: Record<string, string>, body: Buffer): Promise<{ outcome: number | Error; saved?: Buffer; files: string[] }> {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(body.length), ...headers });
      res.end(body);
    });
    const into = await mkdtemp(join(folder, 'run-'));
    try {
      const partial = await PartialFile.create(into, 'r');
      const file = join(into, 'r');
      const outcome = await download(downloadOptions(`${server.url}/r`, { file, partial }, fakeClock(), { retries: 0 })).catch((err: Error) => err);
      const files = await readdir(into);
      return { outcome, files, ...(files.includes('r') && { saved: await readFile(file) }) };
    } finally {
      await server.close();
    }
  }

  test('sent with Content-Encoding gzip: saved decoded', async () => {
    const { outcome, saved } = await fetch({ 'content-type': 'text/csv', 'content-encoding': 'gzip' }, gzipSync(FILE));
    assert.equal(outcome, FILE.length);
    assert.deepEqual(saved, FILE);
  });

  test('a real .gz file, without Content-Encoding: saved as sent', async () => {
    const gz = gzipSync(FILE);
    const { outcome, saved } = await fetch({ 'content-type': 'application/gzip' }, gz);
    assert.equal(outcome, gz.length);
    assert.deepEqual(saved, gz);
  });

  test('the 4 GiB cap applies to the decoded bytes (here 64 KiB): stopped, no file left', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(1024 * 1024)));
    });
    const into = await mkdtemp(join(folder, 'run-'));
    try {
      const partial = await PartialFile.create(into, 'r');
      const outcome = await download(
        downloadOptions(`${server.url}/r`, { file: join(into, 'r'), partial }, fakeClock(), { retries: 0, maxBytes: 64 * 1024 }),
      ).catch((err: Error) => err);
      assert.ok(outcome instanceof CarectlError);
      assert.match(outcome.message, /is larger than 64 KiB, more than carectl downloads: stopped$/);
      assert.deepEqual(await readdir(into), []);
    } finally {
      await server.close();
    }
  });
});

describe('the sandbox', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());

  function raw(path: string, acceptEncoding: string | undefined): Promise<{ coding: string | undefined; length: number }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`${sandbox.user}:${sandbox.password}`).toString('base64')}` };
      if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
      request(`${sandbox.baseUrl}${path}`, { headers }, (res) => {
        let length = 0;
        res.on('data', (chunk: Buffer) => (length += chunk.length));
        res.on('end', () => resolve({ coding: res.headers['content-encoding'], length }));
      })
        .on('error', reject)
        .end();
    });
  }

  test('compresses when asked (gzip first), never unasked', async () => {
    const path = '/v1.3/conversations?status=unread&page_size=50&include=content';
    const plain = await raw(path, undefined);
    assert.equal(plain.coding, undefined);
    const gzip = await raw(path, 'gzip, deflate, br');
    assert.equal(gzip.coding, 'gzip');
    assert.ok(gzip.length * 4 < plain.length, `${gzip.length} of ${plain.length}`);
    assert.equal((await raw(path, 'br;q=1, gzip;q=0')).coding, 'br');
    assert.equal((await raw(path, 'identity')).coding, undefined);
  });

  test('carectl reads its compressed replies and downloads', async () => {
    const list = await runCli(['conversations', 'list', '--status', 'unread', '--limit', '3', '--columns', 'id', '-o', 'csv'], { sandbox });
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.split('\n').length, 5);
    const into = await mkdtemp(join(folder, 'sandbox-'));
    const saved = await runCli(['reports', 'download', '60001', '--file', 'r.csv'], { sandbox, cwd: into });
    assert.equal(saved.code, 0, saved.stderr);
    assert.deepEqual(await readFile(join(into, 'r.csv')), reportFileContent(sandbox.data.byId.reports.get('60001')!, 'csv'));
  });

  test('--verbose: per answer the protocol, direct or proxied, new or reused connection, coding, bytes on the wire and decoded, time', async () => {
    const out = await runCli(
      ['--verbose', '--parallel', '1', 'conversations', 'list', '--status', 'unread', '--limit', '120', '--include', 'content', '-o', 'csv', '--columns', 'id'],
      { sandbox },
    );
    assert.equal(out.code, 0, out.stderr);
    const answers = out.stderr.split('\n').filter((line) => line.startsWith('< '));
    assert.ok(answers.length >= 2, out.stderr);
    const details = /^< 200 GET \S+ \(HTTP\/1\.1, direct, (new|reused) connection, gzip ([\d.]+) KiB on the wire, ([\d.]+) KiB decoded, \d+ ms\)$/;
    const parsed = answers.map((line) => details.exec(line));
    assert.ok(parsed.every(Boolean), answers.join('\n'));
    assert.equal(parsed[0]![1], 'new');
    assert.equal(parsed[1]![1], 'reused');
    assert.ok(Number(parsed[0]![2]) * 3 < Number(parsed[0]![3]), answers[0]);
  });

  test('--verbose download lines carry the same details as the API lines: protocol, direct, connection, coding, bytes on the wire and decoded, time', async () => {
    const into = await mkdtemp(join(folder, 'verbose-'));
    const out = await runCli(['--verbose', 'reports', 'download', '60001', '--file', 'r.csv'], { sandbox, cwd: into });
    assert.equal(out.code, 0, out.stderr);
    const saved = (await readFile(join(into, 'r.csv'))).length;
    const line = out.stderr.split('\n').find((text) => text.startsWith('< ') && text.includes('/downloads/'));
    const details =
      /^< 200 GET \S+\/downloads\/\S+ \(HTTP\/1\.1, direct, new connection, gzip ([\d.]+) (?:KiB|bytes) on the wire, ([\d.]+) KiB decoded, \d+ ms\)$/.exec(
        line ?? '',
      );
    assert.ok(details, out.stderr);
    assert.equal(Math.round((Number(details[2]) * 1024) / 100), Math.round(saved / 100), 'the decoded size is the file saved');
    assert.ok(Number(details[1]) < Number(details[2]), line);
  });

  test('--bandwidth takes bits or bytes per second; anything else is exit 2, naming the accepted forms', async () => {
    assert.equal(parseBandwidth('20mbit'), 2_500_000);
    assert.equal(parseBandwidth('512kbit'), 64_000);
    assert.equal(parseBandwidth('2MB'), 2_000_000);
    assert.equal(parseBandwidth('300KB'), 300_000);
    for (const bad of ['20', '20mb', 'fast', '0bit', '-1MB']) assert.equal(parseBandwidth(bad), undefined, bad);
    const result = await runCli(['sandbox', '--bandwidth', '20mb']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, "carectl: --bandwidth: expected a rate such as 20mbit, 512kbit, 2MB or 300KB (per second), got '20mb'\n");
  });
});

test('a link paces every reply it carries to its rate, together', async () => {
  let clock = 0;
  const slept: number[] = [];
  const link = new Link(
    16 * 1024,
    async (ms) => void slept.push(ms),
    () => clock,
  );
  const written: number[] = [];
  const res = { destroyed: false, write: (part: Buffer) => written.push(part.length) > 0, end: () => res };
  // Two replies of 32 KiB at once over 16 KiB/s: the second waits behind the first; the clock does not move.
  await Promise.all([link.send(res as never, Buffer.alloc(32 * 1024)), link.send(res as never, Buffer.alloc(32 * 1024))]);
  assert.deepEqual(written, [16384, 16384, 16384, 16384]);
  assert.deepEqual(
    slept.sort((a, b) => a - b),
    [1000, 2000, 3000, 4000],
  );
  clock = 10_000;
  slept.length = 0;
  await link.send(res as never, Buffer.alloc(8 * 1024));
  assert.deepEqual(slept, [500]);
});
