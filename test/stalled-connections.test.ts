/**
 * Connections that never open (field test behind real infrastructure, findings 2 and 3): a peer
 * that takes the TCP connection and then says nothing, as an HTTPS_PROXY that never answers
 * CONNECT, as an HTTP_PROXY, and as a TLS service that never completes the handshake. Opening a
 * connection is bounded by --request-timeout like the rest of a request (undici's own 10 s and
 * 300 s did it before), fails in one line that says which step did not finish, and a stop signal
 * ends it at once. The bounds below only tell "ended" from "hung for undici's default"; they
 * measure no speed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { download } from '../src/http/download.js';
import { Collector, downloadOptions, fakeClock, runCli } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));
/** Far below undici's 10 s connect and 300 s CONNECT timeouts: a run past it did not honour --request-timeout or the signal. */
const HUNG_MS = 8_000;

/** Accepts TCP connections and never answers; counts those that asked something (a CONNECT, a TLS hello), and tells when one comes. */
interface Blackhole {
  port: number;
  asked: () => number;
  /** Resolves at the next connection. */
  nextConnection(): Promise<void>;
  close(): Promise<void>;
}

/** `answer`, when given, is what it does with the first bytes it is sent instead of nothing. */
async function blackhole(answer?: (socket: Socket) => void): Promise<Blackhole> {
  const sockets: Socket[] = [];
  let asked = 0;
  let waiting: (() => void)[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      asked++;
      answer?.(socket);
    });
    for (const resolve of waiting) resolve();
    waiting = [];
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    asked: () => asked,
    nextConnection: () => new Promise((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let hole: Blackhole;
before(async () => {
  hole = await blackhole();
});
after(() => hole.close());

const API = { CARECTL_USER: 'u', CARECTL_PASSWORD: 'p', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' };

/** The command with `env` (no config file), retry waits on the fake clock, and how long it took. */
async function timed(argv: string[], env: Record<string, string>, signal?: AbortSignal): Promise<{ code: number; stderr: string; ms: number }> {
  const started = Date.now();
  const result = await runCli(argv, { env: { ...API, ...env }, sleep: fakeClock().sleep, ...(signal && { signal }) });
  return { code: result.code, stderr: result.stderr, ms: Date.now() - started };
}

/** One request at a time: each test counts the connections one request opens. */
const LIST = ['conversations', 'list', '--status', 'unread', '--request-timeout', '300ms', '--parallel', '1'];

const SERVICE = 'https://carectl.test:18443';
const FAILED = `carectl: GET ${SERVICE}/v1.3/conversations failed:`;

describe('a connection that never opens fails within --request-timeout, in one line', () => {
  const cases: [string, ((socket: Socket) => void) | undefined, (port: number) => Record<string, string>, (port: number) => string][] = [
    [
      'HTTPS_PROXY that never answers CONNECT: the proxy named',
      undefined,
      (port) => ({ CARECTL_BASE_URL: SERVICE, HTTPS_PROXY: `http://127.0.0.1:${port}` }),
      (port) => `${FAILED} the proxy 127.0.0.1:${port} (HTTPS_PROXY) did not answer the tunnel request within 300 ms`,
    ],
    [
      'a TLS service that never completes the handshake: no TLS handshake from HOST:PORT',
      undefined,
      (port) => ({ CARECTL_BASE_URL: `https://127.0.0.1:${port}` }),
      (port) => `carectl: GET https://127.0.0.1:${port}/v1.3/conversations failed: no TLS handshake from 127.0.0.1:${port} within 300 ms`,
    ],
    [
      'HTTPS_PROXY that opens the tunnel to a service that never completes the handshake: no TLS handshake from the service',
      (socket) => socket.write('HTTP/1.1 200 Connection established\r\n\r\n'),
      (port) => ({ CARECTL_BASE_URL: SERVICE, HTTPS_PROXY: `http://127.0.0.1:${port}` }),
      () => `${FAILED} no TLS handshake from carectl.test:18443 within 300 ms`,
    ],
    [
      // undici alone opened thousands of connections a second for as long as the run lasted.
      'HTTPS_PROXY that closes the connection at CONNECT: not a connection opened again and again',
      (socket) => socket.destroy(),
      (port) => ({ CARECTL_BASE_URL: SERVICE, HTTPS_PROXY: `http://127.0.0.1:${port}` }),
      (port) => `${FAILED} the proxy 127.0.0.1:${port} (HTTPS_PROXY) closed the connection instead of answering the tunnel request`,
    ],
  ];
  for (const [what, answer, env, message] of cases) {
    test(`${what}; a network failure, retried as usual`, async () => {
      const peer = answer ? await blackhole(answer) : hole;
      try {
        const before = peer.asked();
        const result = await timed([...LIST, '--retries', '1'], env(peer.port));
        assert.equal(result.code, 1);
        assert.equal(result.stderr, `${message(peer.port)}\n`);
        // The retry asked again, once.
        assert.equal(peer.asked() - before, 2);
        assert.ok(result.ms < HUNG_MS, `ended after ${result.ms} ms`);
      } finally {
        if (peer !== hole) await peer.close();
      }
    });
  }

  test('HTTP_PROXY that never answers: the request timeout as before', async () => {
    const result = await timed([...LIST, '--retries', '0', '--insecure-http'], {
      CARECTL_BASE_URL: 'http://carectl.test:18080',
      HTTP_PROXY: `http://127.0.0.1:${hole.port}`,
    });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'carectl: GET http://carectl.test:18080/v1.3/conversations failed: no answer within 300 ms\n');
    assert.ok(result.ms < HUNG_MS, `ended after ${result.ms} ms`);
  });
});

describe('a stop signal while a connection is being opened ends the command at once', () => {
  for (const [what, env] of [
    ['waiting for the proxy to answer CONNECT', () => ({ CARECTL_BASE_URL: 'https://carectl.test:18443', HTTPS_PROXY: `http://127.0.0.1:${hole.port}` })],
    ['waiting for the TLS handshake', () => ({ CARECTL_BASE_URL: `https://127.0.0.1:${hole.port}` })],
  ] as const) {
    test(`${what}: interrupted (130), long before the 60 s request timeout`, async () => {
      const stop = new AbortController();
      void hole.nextConnection().then(() => stop.abort());
      const result = await timed(['conversations', 'list', '--status', 'unread', '--request-timeout', '60s', '--parallel', '1'], env(), stop.signal);
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /^carectl: interrupted/);
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
      assert.ok(result.ms < HUNG_MS, `ended after ${result.ms} ms`);
    });
  }

  test('the real process, SIGTERM while the proxy holds CONNECT: it exits (143) at once, nothing left open', async () => {
    const child = spawn(process.execPath, [BIN, 'conversations', 'list', '--status', 'unread', '--request-timeout', '60s', '--parallel', '1'], {
      env: { PATH: process.env.PATH ?? '', ...API, CARECTL_BASE_URL: 'https://carectl.test:18443', HTTPS_PROXY: `http://127.0.0.1:${hole.port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A hung child fails its test instead of the whole run.
      timeout: 30_000,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await hole.nextConnection();
    const sent = Date.now();
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('close', (exit) => resolve(exit)));
    assert.equal(code, 143, stderr);
    assert.match(stderr, /^carectl: interrupted/);
    assert.ok(Date.now() - sent < HUNG_MS, `exited ${Date.now() - sent} ms after SIGTERM`);
  });
});

describe('report downloads: the same bound and the same stop', () => {
  const options = (url: string, overrides: Parameters<typeof downloadOptions>[3]) =>
    downloadOptions(url, { stdout: new Collector() }, fakeClock(), { idleTimeoutMs: 300, retries: 1, ...overrides });

  test('through an HTTPS_PROXY that never answers CONNECT, and from a TLS host that never completes the handshake', async () => {
    for (const [url, proxy, reason] of [
      [
        'https://downloads.example.test/r.csv',
        { https: `http://127.0.0.1:${hole.port}` },
        `the proxy 127.0.0.1:${hole.port} (HTTPS_PROXY) did not answer the tunnel request`,
      ],
      [`https://127.0.0.1:${hole.port}/r.csv`, undefined, `no TLS handshake from 127.0.0.1:${hole.port}`],
    ] as const) {
      const before = hole.asked();
      const started = Date.now();
      await assert.rejects(download(options(url, proxy && { proxy })), (err: Error) => {
        assert.equal(err.message, `download from ${new URL(url).origin} failed: ${reason} within 300 ms`);
        return true;
      });
      assert.equal(hole.asked() - before, 2);
      assert.ok(Date.now() - started < HUNG_MS, `ended after ${Date.now() - started} ms`);
    }
  });

  test('a stop while the proxy holds CONNECT ends the download at once', async () => {
    const stop = new AbortController();
    void hole.nextConnection().then(() => stop.abort());
    const started = Date.now();
    await assert.rejects(
      download(
        options('https://downloads.example.test/r.csv', { proxy: { https: `http://127.0.0.1:${hole.port}` }, idleTimeoutMs: 60_000, signal: stop.signal }),
      ),
      { name: 'InterruptedError' },
    );
    assert.ok(Date.now() - started < HUNG_MS, `ended after ${Date.now() - started} ms`);
  });
});
