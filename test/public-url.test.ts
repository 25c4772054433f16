/**
 * Links to another origin (issue 24 item 7): a service whose links name another address (it
 * sits behind a front and does not know it) ends a list with a --resume token and a hint; the
 * sandbox takes a public address (--public-url) for its links and downloads, so that it can sit
 * behind a front without its replies being rewritten.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FIXTURES, reportFileContent } from '../src/sandbox/index.js';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSandbox, runCli, sandboxEnv } from './helpers.js';

const FRONT = 'http://front.example.test';

describe('links that lead to another origin', () => {
  test('end the list with a hint and a --resume token, which continues it at the address the links name', async () => {
    // A front (a reverse proxy, as nginx) whose address the sandbox's links name; carectl first
    // reaches the sandbox past it, at its own address.
    let sandboxPort = 0;
    const front = createServer((req, res) => {
      const upstream = request({ host: '127.0.0.1', port: sandboxPort, path: req.url, method: req.method, headers: req.headers }, (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const sandbox = await openSandbox({ publicUrl: frontUrl });
    sandboxPort = Number(new URL(sandbox.baseUrl).port);
    try {
      const argv = ['tags', 'list', '--page-size', '5', '-o', 'csv', '--columns', 'id,name'];
      const viaFront = { ...sandboxEnv(sandbox), CARECTL_BASE_URL: frontUrl };
      const clean = await runCli(argv, { env: viaFront });
      assert.equal(clean.code, 0, clean.stderr);
      const before = sandbox.requests.length;
      const cut = await runCli(argv, { sandbox });
      assert.equal(cut.code, 1);
      assert.equal(cut.stdout, clean.stdout.split('\n').slice(0, 6).join('\n') + '\n', 'the first page is kept');
      const line = new RegExp(
        `^carectl: refusing to follow a link to ${frontUrl}: credentials are only sent to ${sandbox.baseUrl}; the service names another address than the one it is reached at \\(behind a proxy, it may not know its own\\): if ${frontUrl} is the same service, use it as --base-url; the list stopped after 5 records: to continue, run the same command with --resume (\\S+)\\n$`,
      ).exec(cut.stderr);
      assert.ok(line, cut.stderr);
      assert.equal(sandbox.requests.length, before + 1, 'the link was not followed');
      const rest = await runCli([...argv, '--no-header', '--resume', line[1]!], { env: viaFront });
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(cut.stdout + rest.stdout, clean.stdout);
    } finally {
      await sandbox.close();
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        front.closeAllConnections();
      });
    }
  });
});

describe('the sandbox behind a front', () => {
  test('its links and download addresses name the public address; the API listener serves the downloads', async () => {
    const sandbox = await openSandbox({ publicUrl: `${FRONT}/` });
    try {
      const record = await runCli(['reports', 'get', FIXTURES.reports.generatedId, '-o', 'json', '--columns', 'download'], { sandbox });
      assert.equal(record.code, 0, record.stderr);
      const download = (JSON.parse(record.stdout) as { download: string }).download;
      assert.ok(download.startsWith(`${FRONT}/downloads/`), download);
      const path = new URL(download).pathname;
      const response = await fetch(`${sandbox.baseUrl}${path}`);
      assert.equal(response.status, 200);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), reportFileContent(sandbox.data.byId.reports.get(FIXTURES.reports.generatedId)!, 'csv'));
    } finally {
      await sandbox.close();
    }
  });

  test('carectl sandbox --public-url takes an http(s) address only (exit 2)', async () => {
    const result = await runCli(['sandbox', '--public-url', 'ftp://front.example.test']);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      'carectl: --public-url: expected an http:// or https:// address such as https://carectl.test (got "ftp://front.example.test")\n',
    );
  });

  test('carectl sandbox --public-url with any user name or password is refused, exit 2, the password never printed', async () => {
    for (const given of [
      'http://:PW-s3cret@front.example.test',
      'https://ops:PW-s3cret@front.example.test/api',
      'http://ops@front.example.test',
      'http:ops:PW-s3cret@front.example.test',
      'http://:PW-s3cret@',
    ]) {
      const result = await runCli(['sandbox', '--public-url', given]);
      assert.equal(result.code, 2, given);
      assert.equal(result.stderr, 'carectl: --public-url: must not hold a user name or password (user:password@): its links name it to every client\n', given);
      assert.equal(result.stdout, '');
    }
  });
});
