/**
 * Certificate errors a person can act on (issue 24 items 3 and 4): a certificate the machine
 * does not accept fails at once (one handshake, no retry), in one line naming the host, the
 * problem in words and the fix (NODE_EXTRA_CA_CERTS, the TLS-inspecting proxy), exit 1; a POST
 * refused at the handshake is known never to have reached the service. Loopback TLS servers
 * present certificates made in the test; the expired and wrong-name cases run the real command
 * with the test CA in NODE_EXTRA_CA_CERTS (read by node at start-up), so that only that one
 * problem remains.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { download, PartialFile } from '../src/http/download.js';
import { certificateMessage } from '../src/http/tls.js';
import { downloadOptions, fakeClock, openSandbox, runCli } from './helpers.js';
import { makeCerts, type TestCerts } from './tls-certs.js';

const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));
const FIX =
  'if the service uses a private CA, or this network inspects TLS (a company proxy), give carectl that CA certificate: NODE_EXTRA_CA_CERTS=/path/ca.pem';

let certs: TestCerts | string;
before(async () => {
  certs = await makeCerts();
  if (typeof certs === 'string') console.log(certs);
});
after(async () => {
  if (typeof certs !== 'string') await rm(certs.folder, { recursive: true, force: true });
});

/** An https server presenting `cert`; `connections` counts the TCP connections (each a handshake). */
async function tlsServer(cert: Buffer, key: Buffer): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server: Server = createServer({ cert, key }, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.url?.includes('/tags/') ? { tag: { id: 7001, name: 'billing' } } : { id: 1, url: 'x' }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function inProcess(url: string, argv: string[]): ReturnType<typeof runCli> {
  const clock = fakeClock();
  return runCli(argv, { env: { CARECTL_BASE_URL: url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' }, now: clock.now, sleep: clock.sleep });
}

describe('a certificate this machine does not trust', () => {
  test('self-signed: one handshake, one line with the host, the problem and NODE_EXTRA_CA_CERTS, exit 1', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.selfSigned, certs.key);
    try {
      const result = await inProcess(server.url, ['tags', 'get', '7001']);
      assert.equal(result.code, 1);
      const host = server.url.slice('https://'.length);
      assert.equal(
        result.stderr,
        `carectl: GET ${server.url}/v1.3/tags/7001 failed: the certificate of ${host} is self-signed, which this machine does not trust (DEPTH_ZERO_SELF_SIGNED_CERT); ${FIX}\n`,
      );
      assert.equal(server.connections(), 1, 'not retried');
    } finally {
      await server.close();
    }
  });

  test('issued by an unknown CA (as behind a TLS-inspecting proxy): the same fix', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.good, certs.key);
    try {
      const result = await inProcess(server.url, ['tags', 'get', '7001']);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^carectl: GET \S+ failed: the certificate of 127\.0\.0\.1:\d+ is issued by a CA this machine does not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\); .*NODE_EXTRA_CA_CERTS=\/path\/ca\.pem\n$/,
      );
      assert.equal(server.connections(), 1);
    } finally {
      await server.close();
    }
  });

  test('reports create refused at the handshake: never sent, so nothing "may have been created"', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.selfSigned, certs.key);
    try {
      const result = await inProcess(server.url, ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^carectl: POST \S+ failed: the certificate of \S+ is self-signed/);
      assert.doesNotMatch(result.stderr, /may have been/);
      assert.equal(server.connections(), 1);
    } finally {
      await server.close();
    }
  });

  test('login says the same', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.selfSigned, certs.key);
    try {
      const clock = fakeClock();
      const result = await runCli(['login', '--base-url', server.url, '--user', 'u', '--password-stdin'], {
        stdin: 'p\n',
        stdinTTY: false,
        env: { XDG_CONFIG_HOME: certs.folder },
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /the certificate of 127\.0\.0\.1:\d+ is self-signed.*NODE_EXTRA_CA_CERTS=\/path\/ca\.pem/);
      assert.equal(server.connections(), 1);
    } finally {
      await server.close();
    }
  });
});

test('a download from a host with a self-signed certificate: one attempt, the same line, no file left', async (t) => {
  if (typeof certs === 'string') return t.skip(certs);
  const server = await tlsServer(certs.selfSigned, certs.key);
  const into = await mkdtemp(join(tmpdir(), 'carectl-tls-download-'));
  try {
    const partial = await PartialFile.create(into, 'r.csv');
    const clock = fakeClock();
    const outcome = await download(downloadOptions(`${server.url}/r.csv`, { file: join(into, 'r.csv'), partial }, clock)).catch((err: Error) => err);
    assert.ok(outcome instanceof Error);
    assert.equal(
      outcome.message,
      `download from ${server.url} failed: the certificate of ${server.url.slice(8)} (the download host the service named) is self-signed, which this machine does not trust (DEPTH_ZERO_SELF_SIGNED_CERT); ${FIX}`,
    );
    assert.equal(server.connections(), 1);
    assert.deepEqual(clock.slept, []);
    assert.deepEqual(await readdir(into), []);
  } finally {
    await server.close();
    await rm(into, { recursive: true, force: true });
  }
});

test('reports download from a download host whose certificate is refused: named as the host the service gave, and no "try again"', async (t) => {
  if (typeof certs === 'string') return t.skip(certs);
  const server = await tlsServer(certs.selfSigned, certs.key);
  // The API answers directly; the report's download address names the TLS host.
  const sandbox = await openSandbox({ publicUrl: server.url });
  const into = await mkdtemp(join(tmpdir(), 'carectl-tls-download-'));
  try {
    const clock = fakeClock();
    const result = await runCli(['reports', 'download', '60001', '--file', 'r.csv'], { sandbox, cwd: into, now: clock.now, sleep: clock.sleep });
    assert.equal(result.code, 1);
    const host = server.url.slice(8);
    assert.equal(
      result.stderr,
      `carectl: download from ${server.url} failed: the certificate of ${host} (the download host the service named) is self-signed, which this machine does not trust (DEPTH_ZERO_SELF_SIGNED_CERT); ${FIX}; nothing was saved\n`,
    );
    assert.equal(server.connections(), 1);
    assert.deepEqual(await readdir(into), []);
  } finally {
    await sandbox.close();
    await server.close();
    await rm(into, { recursive: true, force: true });
  }
});

test('a download host issued for other names: the address comes from the service, not from the base URL', () => {
  const err = { code: 'ERR_TLS_CERT_ALTNAME_INVALID', cert: { subjectaltname: 'DNS:carectl.example, DNS:other.example' } };
  assert.equal(
    certificateMessage(err, new URL('https://localhost:18446/r.csv'), 'download'),
    'the certificate of localhost:18446 (the download host the service named) is issued for other names (carectl.example, other.example), not localhost (ERR_TLS_CERT_ALTNAME_INVALID): the service gives this address, so the fix is theirs: a certificate that names it, or another download address',
  );
  assert.match(certificateMessage(err, new URL('https://localhost:18446/'))!, /: use an address the certificate names in the base URL$/);
});

describe('with the CA trusted (NODE_EXTRA_CA_CERTS), the real command', () => {
  async function carectl(url: string, caFile: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = {
      PATH: process.env.PATH ?? '',
      XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      NODE_EXTRA_CA_CERTS: caFile,
      CARECTL_BASE_URL: url,
      CARECTL_USER: 'u',
      CARECTL_PASSWORD: 'p',
    };
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, 'tags', 'get', '7001', '-o', 'json'], { env });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  test('a good certificate works', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.good, certs.key);
    try {
      const result = await carectl(server.url, certs.caFile);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /"billing"/);
    } finally {
      await server.close();
    }
  });

  test('expired: says so, once', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.expired, certs.key);
    try {
      const result = await carectl(server.url, certs.caFile);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^carectl: GET \S+ failed: the certificate of 127\.0\.0\.1:\d+ has expired \(CERT_HAS_EXPIRED\): the service must renew it; check this machine's clock too\n$/,
      );
      assert.equal(server.connections(), 1);
    } finally {
      await server.close();
    }
  });

  test('issued for other names: lists them', async (t) => {
    if (typeof certs === 'string') return t.skip(certs);
    const server = await tlsServer(certs.otherName, certs.key);
    try {
      const result = await carectl(server.url, certs.caFile);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^carectl: GET \S+ failed: the certificate of 127\.0\.0\.1:\d+ is issued for other names \(other\.example, www\.other\.example\), not 127\.0\.0\.1 \(ERR_TLS_CERT_ALTNAME_INVALID\): use an address the certificate names in the base URL\n$/,
      );
      assert.equal(server.connections(), 1);
    } finally {
      await server.close();
    }
  });
});
