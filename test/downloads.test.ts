/**
 * Downloads end (issue 14 item 5): a stall, a file past the size cap, and a redirect that cannot
 * lead to the file each fail cleanly, leaving no partial file; the permanent ones at once,
 * without retries. download() runs against a scripted server; the CLI against the sandbox.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CarectlError, NetworkError } from '../src/core/errors.js';
import { download, MAX_DOWNLOAD_BYTES, PartialFile, type DownloadOptions } from '../src/http/download.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { Collector, downloadOptions, fakeClock, openSandbox, runCli } from './helpers.js';
import { serve, type Served } from './scripted-server.js';

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'carectl-download-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Downloads `path` of the server into a fresh subfolder; `files` is what the folder holds afterwards. */
async function fetchInto(
  server: Served,
  path: string,
  overrides: Partial<DownloadOptions> = {},
): Promise<{ outcome: number | Error; files: string[]; slept: number[]; trace: string[] }> {
  const into = await mkdtemp(join(folder, 'run-'));
  const partial = await PartialFile.create(into, 'report.csv');
  const clock = fakeClock();
  const trace: string[] = [];
  let outcome: number | Error;
  try {
    const target = { file: join(into, 'report.csv'), partial };
    outcome = await download(
      downloadOptions(`${server.url}${path}`, target, clock, {
        retries: 2,
        maxRetryWaitMs: 60_000,
        random: () => 1,
        trace: (line) => trace.push(line),
        ...overrides,
      }),
    );
  } catch (err) {
    outcome = err as Error;
  }
  return { outcome, files: await readdir(into), slept: clock.slept, trace };
}

function failure(outcome: number | Error): Error {
  assert.ok(outcome instanceof Error, `the download succeeded with ${String(outcome)} bytes`);
  return outcome;
}

describe('a download that stalls', () => {
  test('no byte for the idle timeout mid-body: cut off, retried, then a NetworkError and no partial file', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('id,name\n'); // then nothing, the connection held open
    });
    try {
      const { outcome, files } = await fetchInto(server, '/r.csv', { idleTimeoutMs: 200, retries: 1 });
      const error = failure(outcome);
      assert.ok(error instanceof NetworkError, String(error));
      assert.match(error.message, /^download from http:\/\/127\.0\.0\.1:\d+ broke off after 8 bytes: no byte arrived for 200 ms \(UND_ERR_BODY_TIMEOUT\)$/);
      assert.equal(server.hits.length, 2);
      assert.deepEqual(files, []);
    } finally {
      await server.close();
    }
  });

  test('no headers within the idle timeout: the same', async () => {
    const server = await serve(() => undefined);
    try {
      const { outcome, files } = await fetchInto(server, '/r.csv', { idleTimeoutMs: 200, retries: 0 });
      assert.match(failure(outcome).message, /no byte arrived for 200 ms \(UND_ERR_HEADERS_TIMEOUT\)$/);
      assert.deepEqual(files, []);
    } finally {
      await server.close();
    }
  });

  test('carectl reports download with --request-timeout: exit 1, nothing left in the folder', async () => {
    const sandbox: Sandbox = await openSandbox();
    const into = await mkdtemp(join(folder, 'cli-'));
    try {
      sandbox.setFaults({ trickleDownloadsMs: 10_000 });
      const result = await runCli(['reports', 'download', '60001', '--file', 'r.csv', '--request-timeout', '300ms', '--retries', '0'], { sandbox, cwd: into });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /no byte arrived for 300 ms.*nothing was saved/);
      assert.deepEqual(await readdir(into), []);
    } finally {
      await sandbox.close();
    }
  });
});

describe('a download that grows past the cap', () => {
  const endless = (): Promise<Served> =>
    serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      let sent = 0;
      const pump = (): void => {
        while (!res.destroyed && sent < 4096) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });

  test('the cap is 4 GiB', () => {
    assert.equal(MAX_DOWNLOAD_BYTES, 4 * 1024 * 1024 * 1024);
  });

  test('an endless body stops at the cap, at once (no retry), with no partial file', async () => {
    const server = await endless();
    try {
      const { outcome, files, slept } = await fetchInto(server, '/r.csv', { maxBytes: 64 * 1024 });
      const error = failure(outcome);
      assert.ok(error instanceof CarectlError && !(error instanceof NetworkError), String(error));
      assert.match(error.message, /^download from http:\/\/127\.0\.0\.1:\d+ is larger than 64 KiB, more than carectl downloads: stopped$/);
      assert.equal(server.hits.length, 1);
      assert.deepEqual(slept, []);
      assert.deepEqual(files, []);
    } finally {
      await server.close();
    }
  });

  test('a Content-Length past the cap fails before a byte is written', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(5 * 1024 ** 3) });
      res.write('x');
    });
    try {
      const { outcome, files } = await fetchInto(server, '/r.csv');
      assert.match(failure(outcome).message, /is larger than 4 GiB/);
      assert.deepEqual(files, []);
    } finally {
      await server.close();
    }
  });

  test('to stdout: the same error, after what was written', async () => {
    const server = await endless();
    const stdout = new Collector();
    try {
      const clock = fakeClock();
      await assert.rejects(download(downloadOptions(`${server.url}/r.csv`, { stdout }, clock, { retries: 2, maxBytes: 32 * 1024 })), /is larger than 32 KiB/);
      assert.ok(stdout.text.length <= 32 * 1024);
      assert.equal(server.hits.length, 1);
    } finally {
      await server.close();
    }
  });

  test('a file of exactly the cap is saved', async () => {
    const body = Buffer.alloc(10_000, 0x62);
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.end(body);
    });
    try {
      const into = await mkdtemp(join(folder, 'exact-'));
      const partial = await PartialFile.create(into, 'r.csv');
      const clock = fakeClock();
      const bytes = await download(
        downloadOptions(`${server.url}/r.csv`, { file: join(into, 'r.csv'), partial }, clock, { retries: 0, maxBytes: body.length }),
      );
      assert.equal(bytes, body.length);
      assert.deepEqual(await readFile(join(into, 'r.csv')), body);
    } finally {
      await server.close();
    }
  });
});

describe('redirects that cannot lead to the file fail at once', () => {
  test('to file:// — refused without a retry, no partial file', async () => {
    const server = await serve((_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    try {
      const { outcome, files, slept } = await fetchInto(server, '/r.csv');
      assert.match(failure(outcome).message, /^download from http:\/\/127\.0\.0\.1:\d+ was redirected to file:\/\/\/etc\/passwd: refusing scheme file:$/);
      assert.equal(server.hits.length, 1);
      assert.deepEqual(slept, []);
      assert.deepEqual(files, []);
    } finally {
      await server.close();
    }
  });

  test('a loop — refused when it comes back, without a retry', async () => {
    const server = await serve((req, res) => res.writeHead(302, { location: req.url === '/a' ? '/b' : '/a' }).end());
    try {
      const { outcome, slept, files } = await fetchInto(server, '/a');
      assert.match(failure(outcome).message, /was redirected in a loop \(back to http:\/\/127\.0\.0\.1:\d+\/a\)$/);
      assert.equal(server.hits.length, 2);
      assert.deepEqual(slept, []);
      assert.deepEqual(files, []);
    } finally {
      await server.close();
    }
  });

  test('more than 5 hops — refused, without a retry', async () => {
    const server = await serve((req, res) => res.writeHead(307, { location: `/r${Number(req.url!.slice(2)) + 1}` }).end());
    try {
      const { outcome, slept } = await fetchInto(server, '/r0');
      assert.match(failure(outcome).message, /was redirected more than 5 times \(last to http:\/\/127\.0\.0\.1:\d+\/r6\)$/);
      assert.equal(server.hits.length, 6);
      assert.deepEqual(slept, []);
    } finally {
      await server.close();
    }
  });

  test('credentials and the signature in a Location are never printed; a good redirect is followed', async () => {
    const target = await serve((_req, res) => res.writeHead(200).end('a,b\n'));
    const server = await serve((req, res) =>
      req.url === '/bad'
        ? res.writeHead(302, { location: 'ftp://bob:hunter2@files.example/r.csv?sig=SECRET' }).end()
        : res.writeHead(302, { location: `${target.url.replace('//', '//bob:hunter2@')}/r.csv?sig=SECRET` }).end(),
    );
    try {
      const bad = await fetchInto(server, '/bad');
      assert.equal(
        failure(bad.outcome).message.replace(/:\d+ /, ':N '),
        'download from http://127.0.0.1:N was redirected to ftp://files.example/r.csv?[redacted]: refusing scheme ftp:',
      );
      const good = await fetchInto(server, '/good');
      assert.equal(good.outcome, 4);
      assert.deepEqual(good.files, ['report.csv']);
      for (const text of [bad.trace.join('\n'), good.trace.join('\n')]) {
        assert.ok(!/hunter2|SECRET/.test(text), text);
      }
      assert.equal(good.trace.filter((line) => line.startsWith('> GET ')).length, 2);
    } finally {
      await server.close();
      await target.close();
    }
  });
});
