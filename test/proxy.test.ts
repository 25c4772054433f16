/**
 * Proxies (issue 15 item 4): HTTPS_PROXY, HTTP_PROXY and NO_PROXY, in either case, from the
 * injected environment, for the API and for report downloads. A small forward proxy on loopback
 * takes absolute-form requests (plain http, as curl sends them) and CONNECT (https). Loopback
 * is never proxied (issue 24), so the sandbox is reached through it by a name only the proxy
 * knows: sandbox.test, which it forwards to 127.0.0.1. Going around the proxy: --sandbox and
 * loopback bypass it; NO_PROXY takes CIDR ranges and IPv6 literals as curl and Go do.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, beforeEach, describe, test } from 'node:test';
import { NetworkError } from '../src/core/errors.js';
import { download } from '../src/http/download.js';
import { bypassed, proxyFor, proxyFromEnv } from '../src/http/proxy.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { Collector, downloadOptions, fakeClock, freePort, openSandbox, runCli, sandboxEnv } from './helpers.js';
import { serve } from './scripted-server.js';
import { cliOnce } from './scripted-client.js';

const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));
const PROXY_USER = 'proxy-user';
const PROXY_PASSWORD = 'proxy-s3cret-pw';
const PROXY_BASE64 = Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64');

interface Seen {
  method: string;
  target: string;
  proxyAuthorization: string | undefined;
  authorization: string | undefined;
}

interface Proxy {
  url: string;
  /** http://proxy-user:proxy-s3cret-pw@127.0.0.1:PORT */
  withCredentials: string;
  seen: Seen[];
  /** What CONNECT is answered with (there is no TLS server to tunnel to here). */
  connectReply: string;
  /** When set, absolute-form requests get this reply instead of being forwarded. */
  refuse?: { status: number; body: (headers: IncomingHttpHeaders) => string };
  close(): Promise<void>;
}

/** A forward proxy: absolute-form requests are forwarded (hop-by-hop and proxy headers dropped). */
async function forwardProxy(): Promise<Proxy> {
  const seen: Seen[] = [];
  const note = (method: string, target: string, headers: IncomingHttpHeaders): void => {
    seen.push({ method, target, proxyAuthorization: headers['proxy-authorization'], authorization: headers.authorization });
  };
  const server = createServer((req, res) => {
    note(req.method ?? '', req.url ?? '', req.headers);
    if (!/^http:\/\//.test(req.url ?? '')) return void res.writeHead(400).end('not absolute-form');
    if (proxy.refuse) {
      res.writeHead(proxy.refuse.status, { 'content-type': 'application/json' });
      return void res.end(proxy.refuse.body(req.headers));
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = request(req.url!.replace(/^http:\/\/sandbox\.test:/, 'http://127.0.0.1:'), { method: req.method, headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req, socket) => {
    note('CONNECT', req.url ?? '', req.headers);
    socket.end(proxy.connectReply);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const proxy: Proxy = {
    url: `http://127.0.0.1:${port}`,
    withCredentials: `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${port}`,
    seen,
    connectReply: 'HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n',
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return proxy;
}

function assertNoProxyCredential(text: string): void {
  for (const secret of [PROXY_PASSWORD, PROXY_BASE64]) assert.ok(!text.includes(secret), `printed a proxy credential: ${text}`);
}

let sandbox: Sandbox;
let proxy: Proxy;
before(async () => {
  sandbox = await openSandbox();
  proxy = await forwardProxy();
});
after(async () => {
  await proxy.close();
  await sandbox.close();
});
beforeEach(() => {
  proxy.seen.length = 0;
  proxy.refuse = undefined;
  proxy.connectReply = 'HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n';
});

const cli = (argv: string[], env: Record<string, string | undefined>): ReturnType<typeof runCli> => runCli(argv, { sandbox, env });
/** The sandbox's address by the name only the proxy resolves (loopback itself is never proxied). */
const alias = (url: string): string => url.replace('//127.0.0.1:', '//sandbox.test:');
/** carectl at the sandbox through its alias: a plain-http address off loopback, hence --insecure-http. */
const proxied = (argv: string[], env: Record<string, string | undefined>, to = sandbox): ReturnType<typeof runCli> =>
  runCli(['--insecure-http', ...argv], { sandbox: to, env: { CARECTL_BASE_URL: alias(to.baseUrl), ...env } });

describe('API requests through a proxy', () => {
  test('HTTP_PROXY: plain http goes in absolute form with Proxy-Authorization, and the answer is the same', async () => {
    const direct = await cli(['tags', 'get', '7001', '-o', 'json'], {});
    const result = await proxied(['--verbose', 'tags', 'get', '7001', '-o', 'json'], { HTTP_PROXY: proxy.withCredentials });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, direct.stdout);
    assert.deepEqual(
      proxy.seen.map(({ method, target }) => `${method} ${target.split('?')[0]}`),
      [`GET ${alias(sandbox.baseUrl)}/v1.3/tags/7001`],
    );
    assert.equal(proxy.seen[0]!.proxyAuthorization, `Basic ${PROXY_BASE64}`);
    assert.ok(proxy.seen[0]!.authorization?.startsWith('Basic '), 'the API credentials go to the API, through the proxy');
    assertNoProxyCredential(result.stdout + result.stderr);
  });

  test('lower case http_proxy is honoured; HTTPS_PROXY alone leaves plain http direct', async () => {
    assert.equal((await proxied(['tags', 'get', '7001'], { http_proxy: proxy.url })).code, 0);
    assert.equal(proxy.seen.length, 1);
    proxy.seen.length = 0;
    assert.equal((await cli(['tags', 'get', '7001'], { HTTPS_PROXY: proxy.url })).code, 0);
    assert.equal(proxy.seen.length, 0);
  });

  test('NO_PROXY=127.0.0.1 (or no_proxy) bypasses the proxy', async () => {
    for (const name of ['NO_PROXY', 'no_proxy']) {
      const result = await cli(['tags', 'get', '7001'], { HTTP_PROXY: proxy.url, [name]: 'example.com,127.0.0.1' });
      assert.equal(result.code, 0, result.stderr);
    }
    assert.deepEqual(proxy.seen, []);
  });

  test('the proxy variables of the process are not read: only the injected environment', async () => {
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = proxy.url;
    try {
      assert.equal((await cli(['tags', 'get', '7001'], {})).code, 0);
      assert.deepEqual(proxy.seen, []);
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
  });

  test('https goes through CONNECT host:443 with Proxy-Authorization; a refused tunnel fails clearly, without retries, credentials unprinted', async () => {
    proxy.connectReply = 'HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n';
    const result = await runCli(['--verbose', 'tags', 'get', '7001'], {
      env: {
        CARECTL_BASE_URL: 'https://api.example.test',
        CARECTL_USER: 'u',
        CARECTL_PASSWORD: 'api-password',
        HTTPS_PROXY: proxy.withCredentials,
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      },
    });
    assert.equal(result.code, 1);
    assert.deepEqual(
      proxy.seen.map(({ method, target }) => `${method} ${target.split('?')[0]}`),
      ['CONNECT api.example.test:443'],
    );
    assert.equal(proxy.seen[0]!.proxyAuthorization, `Basic ${PROXY_BASE64}`);
    assert.equal(proxy.seen[0]!.authorization, undefined, 'the API credentials never reach the proxy in clear');
    assert.match(
      result.stderr,
      /^carectl: GET https:\/\/api\.example\.test\/v1\.3\/tags\/7001 failed: the proxy 127\.0\.0\.1:\d+ \(HTTPS_PROXY\) refused the request \(HTTP 407: proxy credentials missing or wrong\)$/m,
    );
    assertNoProxyCredential(result.stderr);
  });

  test('reports create refused by the proxy at CONNECT (407): never sent, so nothing "may have been created"', async () => {
    proxy.connectReply = 'HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n';
    const result = await runCli(['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07'], {
      env: {
        CARECTL_BASE_URL: 'https://api.example.test',
        CARECTL_USER: 'u',
        CARECTL_PASSWORD: 'p',
        HTTPS_PROXY: proxy.url,
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      },
    });
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `carectl: POST https://api.example.test/v1.1/reports failed: the proxy ${proxy.url.slice(7)} (HTTPS_PROXY) refused the request (HTTP 407: proxy credentials missing or wrong)\n`,
    );
    assert.equal(proxy.seen.length, 1);
  });

  test('a CONNECT the proxy answers with 503 or 500 (it could not reach or resolve the service): never sent, said as such, never "may have been created"', async () => {
    for (const [status, title] of [
      [503, 'Service Unavailable'],
      [500, 'Internal Server Error'],
      [502, 'Bad Gateway'],
    ] as const) {
      proxy.seen.length = 0;
      proxy.connectReply = `HTTP/1.1 ${status} ${title}\r\ncontent-length: 0\r\n\r\n`;
      const clock = fakeClock();
      const result = await runCli(['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--retries', '1'], {
        env: {
          CARECTL_BASE_URL: 'https://unreach.example.test:18999',
          CARECTL_USER: 'u',
          CARECTL_PASSWORD: 'p',
          HTTPS_PROXY: proxy.url,
          XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
        },
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        `carectl: POST https://unreach.example.test:18999/v1.1/reports failed: the proxy ${proxy.url.slice(7)} (HTTPS_PROXY) could not reach the service (HTTP ${status} ${title}); the request never reached the service\n`,
      );
      // Known not to have been sent, the POST may be tried again like any request that never left.
      assert.deepEqual(
        proxy.seen.map(({ method }) => method),
        ['CONNECT', 'CONNECT'],
      );
      assert.equal(clock.slept.length, 1);
    }
  });

  test('a proxy that echoes its credentials in an error: the message holds none', async () => {
    proxy.refuse = { status: 403, body: (headers) => JSON.stringify({ message: `denied: ${headers['proxy-authorization']} is not ${PROXY_PASSWORD}` }) };
    const result = await proxied(['--verbose', 'tags', 'get', '7001'], { HTTP_PROXY: proxy.withCredentials });
    assert.equal(result.code, 3);
    assert.match(result.stderr, /^carectl: denied: \[redacted\] is not \[redacted\] \(HTTP 403\)$/m);
    assertNoProxyCredential(result.stderr);
  });

  test('a proxy that cannot be reached is named as the proxy, credentials unprinted', async () => {
    // A port nothing listens on: a server closed at once.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const cases = [
      ['HTTPS_PROXY', 'https://api.example.test', '127.0.0.1'],
      ['HTTP_PROXY', 'http://api.example.test', '127.0.0.1'],
      ['HTTPS_PROXY', 'https://api.example.test', 'localhost'],
    ] as const;
    for (const [variable, base, host] of cases) {
      const result = await runCli(['--retries', '0', '--insecure-http', 'tags', 'get', '7001'], {
        env: {
          CARECTL_BASE_URL: base,
          CARECTL_USER: 'u',
          CARECTL_PASSWORD: 'api-password',
          [variable]: `http://${PROXY_USER}:${PROXY_PASSWORD}@${host}:${port}`,
          XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
        },
        sleep: fakeClock().sleep,
      });
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        new RegExp(
          `^carectl: GET ${base}/v1\\.3/tags/7001 failed: the proxy ${host.replaceAll('.', '\\.')}:${port} \\(${variable}\\) cannot be reached: ECONNREFUSED`,
          'm',
        ),
      );
      assertNoProxyCredential(result.stderr);
    }
    // A proxy by host name on the service's own port (https on 443 both, say) is still named.
    const samePort = await runCli(['--retries', '0', '--insecure-http', 'tags', 'get', '7001'], {
      env: {
        CARECTL_BASE_URL: `http://api.example.test:${port}`,
        CARECTL_USER: 'u',
        CARECTL_PASSWORD: 'api-password',
        HTTP_PROXY: `http://localhost:${port}`,
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      },
      sleep: fakeClock().sleep,
    });
    assert.match(samePort.stderr, new RegExp(`failed: the proxy localhost:${port} \\(HTTP_PROXY\\) cannot be reached: ECONNREFUSED`));
    // A host in NO_PROXY reached directly on the proxy's own port: its refusal is not the proxy's.
    const direct = await runCli(['--retries', '0', 'tags', 'get', '7001'], {
      env: {
        CARECTL_BASE_URL: `http://127.0.0.2:${port}`,
        CARECTL_USER: 'u',
        CARECTL_PASSWORD: 'api-password',
        HTTP_PROXY: `http://localhost:${port}`,
        NO_PROXY: '127.0.0.2',
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      },
      sleep: fakeClock().sleep,
    });
    assert.equal(direct.code, 1);
    assert.match(direct.stderr, new RegExp(`^carectl: GET http://127\\.0\\.0\\.2:${port}/v1\\.3/tags/7001 failed: ECONNREFUSED`));
    // A host that does not exist (.invalid never resolves) is named as the proxy too.
    const unknown = await runCli(['--retries', '0', 'tags', 'get', '7001'], {
      env: {
        CARECTL_BASE_URL: 'https://api.example.test',
        CARECTL_USER: 'u',
        CARECTL_PASSWORD: 'api-password',
        HTTPS_PROXY: 'http://proxy.invalid:3128',
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
      },
      sleep: fakeClock().sleep,
    });
    assert.match(unknown.stderr, /failed: the proxy proxy\.invalid:3128 \(HTTPS_PROXY\) cannot be reached: (ENOTFOUND|EAI_AGAIN)/);
  });

  test('a proxy address that is not one: exit 2, naming the variable and not its credentials', async () => {
    const result = await cli(['tags', 'get', '7001'], { HTTPS_PROXY: `http://${PROXY_USER}:${PROXY_PASSWORD}@[not-a-host` });
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'carectl: HTTPS_PROXY: not a proxy address (expected http://HOST:PORT)\n');
  });
});

describe('report downloads through a proxy', () => {
  test('the download goes through HTTP_PROXY too, still without the API credentials', async () => {
    const direct = await cli(['reports', 'download', '60001', '--file', '-'], {});
    assert.equal(direct.code, 0, direct.stderr);
    // The same data behind its alias, download addresses included (--public-url), on a port
    // picked first, so that the alias can name it.
    const port = await freePort();
    const behind = await openSandbox({ port, publicUrl: `http://sandbox.test:${port}` });
    behind.setFaults({ redirectDownloads: true });
    try {
      const result = await proxied(['--verbose', 'reports', 'download', '60001', '--file', '-'], { HTTP_PROXY: proxy.withCredentials }, behind);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, direct.stdout);
      // Each hop's answer says it came through the proxy, as an API answer does.
      const hops = result.stderr.split('\n').filter((line) => /^< \d+ GET \S+\/(redirect|downloads)\//.test(line));
      assert.equal(hops.length, 2, result.stderr);
      assert.match(hops[0]!, /^< 302 GET \S+ \(HTTP\/1\.1, via the proxy 127\.0\.0\.1:\d+ \(HTTP_PROXY\), \d+ ms\)$/);
      assert.match(hops[1]!, /^< 200 GET \S+ \(HTTP\/1\.1, via the proxy 127\.0\.0\.1:\d+ \(HTTP_PROXY\), .*\d+ ms\)$/);
      assertNoProxyCredential(result.stderr);
    } finally {
      await behind.close();
    }
    const downloads = proxy.seen.filter((s) => !s.target.includes('/v1.'));
    assert.deepEqual(
      downloads.map((s) => s.target.replace(/^http:\/\/[^/]+/, '').split('/')[1]),
      ['redirect', 'downloads'],
    );
    for (const hop of downloads) {
      assert.equal(hop.authorization, undefined);
      assert.equal(hop.proxyAuthorization, `Basic ${PROXY_BASE64}`);
    }
  });

  test('a proxy that refuses the tunnel (407) fails the download at once, as the API says it, credentials unprinted', async () => {
    proxy.connectReply = 'HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n';
    const trace: string[] = [];
    const clock = fakeClock();
    await assert.rejects(
      download(
        downloadOptions('https://downloads.example.test/r.csv?signature=abc', { stdout: new Collector() }, clock, {
          proxy: { https: proxy.withCredentials },
          trace: (line) => trace.push(line),
        }),
      ),
      (err: Error) => {
        assert.ok(err instanceof NetworkError, 'a network failure (exit 1), as the API says it');
        assert.equal(
          err.message,
          `download from https://downloads.example.test failed: the proxy ${proxy.url.slice(7)} (HTTPS_PROXY) refused the request (HTTP 407: proxy credentials missing or wrong)`,
        );
        return true;
      },
    );
    assert.deepEqual(
      proxy.seen.map(({ method, target }) => `${method} ${target}`),
      ['CONNECT downloads.example.test:443'],
      'refused once, not retried',
    );
    assert.deepEqual(clock.slept, []);
    assertNoProxyCredential(trace.join('\n'));
  });

  test('a proxy that cannot be reached is named as the proxy for downloads too', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(
      download(
        downloadOptions('https://downloads.example.test/r.csv', { stdout: new Collector() }, fakeClock(), {
          proxy: { https: `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${port}` },
          retries: 0,
        }),
      ),
      (err: Error) => {
        assert.match(
          err.message,
          new RegExp(
            `^download from https://downloads\\.example\\.test failed: the proxy 127\\.0\\.0\\.1:${port} \\(HTTPS_PROXY\\) cannot be reached: .*ECONNREFUSED`,
          ),
        );
        assertNoProxyCredential(err.message);
        return true;
      },
    );
  });

  test('NO_PROXY bypasses it for downloads as well', async () => {
    const result = await cli(['reports', 'download', '60001', '--file', '-'], { HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(proxy.seen, []);
  });
});

describe('proxyFromEnv', () => {
  test('lower case first, empty is unset, a bare host:port is http', () => {
    assert.deepEqual(proxyFromEnv({ https_proxy: 'proxy.example:3128', HTTPS_PROXY: 'http://other:1', HTTP_PROXY: '', no_proxy: ' .corp,localhost ' }), {
      https: 'http://proxy.example:3128/',
      noProxy: '.corp,localhost',
    });
    assert.deepEqual(proxyFromEnv({}), {});
  });

  test('a scheme other than http or https is refused', () => {
    assert.throws(() => proxyFromEnv({ HTTPS_PROXY: 'socks5://127.0.0.1:1080' }), /HTTPS_PROXY: proxy scheme socks5: is not supported/);
  });
});

describe('the bundled command through a proxy', () => {
  test('bin/carectl.js honours HTTP_PROXY with its reduced undici', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, '--insecure-http', 'tags', 'get', '7001', '-o', 'json'], {
      env: { PATH: process.env.PATH, ...sandboxEnv(sandbox), CARECTL_BASE_URL: alias(sandbox.baseUrl), HTTP_PROXY: proxy.withCredentials },
    });
    assert.equal(stdout, (await cli(['tags', 'get', '7001', '-o', 'json'], {})).stdout);
    assert.deepEqual(
      proxy.seen.map(({ method, target }) => `${method} ${target.split('?')[0]}`),
      [`GET ${alias(sandbox.baseUrl)}/v1.3/tags/7001`],
    );
  });
});

describe('going around the proxy', () => {
  test("--sandbox never goes through the environment's proxy", async () => {
    const clock = fakeClock();
    const result = await runCli(['--sandbox', 'tags', 'get', '7001', '-o', 'json'], {
      env: { HTTP_PROXY: 'http://127.0.0.1:9', HTTPS_PROXY: 'http://127.0.0.1:9' },
      now: clock.now,
      sleep: clock.sleep,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"id"/);
  });

  test('a service on loopback is reached directly, whatever HTTP_PROXY says (as Go and gh do)', async () => {
    const server = await serve((_req, res) => res.end('{"tag":{"id":7001,"name":"x"}}'));
    try {
      const result = await cliOnce(['tags', 'get', '7001', '-o', 'json'], { CARECTL_BASE_URL: server.url, HTTP_PROXY: 'http://127.0.0.1:9' });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.hits.length, 1);
    } finally {
      await server.close();
    }
  });

  test('NO_PROXY entries: names and suffixes, IPs, IPv6 with or without brackets, CIDR ranges, ports, *', () => {
    const yes = (url: string, noProxy: string): void => assert.ok(bypassed(new URL(url), noProxy), `${url} by ${noProxy}`);
    const no = (url: string, noProxy: string): void => assert.ok(!bypassed(new URL(url), noProxy), `${url} not by ${noProxy}`);
    yes('https://api.example.com/', 'example.com');
    yes('https://api.example.com/', '.example.com');
    yes('https://api.example.com/', '*.example.com');
    no('https://badexample.com/', 'example.com');
    yes('http://10.1.2.3:8080/', '10.0.0.0/8');
    no('http://11.1.2.3/', '10.0.0.0/8');
    yes('http://127.0.0.1/', '127.0.0.0/8');
    yes('http://[::1]:3000/', '::1');
    yes('http://[::1]:3000/', '[::1]');
    yes('http://[::1]:3000/', '[::1]:3000');
    no('http://[::1]:3001/', '[::1]:3000');
    yes('http://[fd00::5]/', 'fd00::/8');
    no('http://[fe80::5]/', 'fd00::/8');
    no('http://10.0.0.1/', 'fd00::/8');
    yes('https://host.corp:8443/', 'host.corp:8443');
    no('https://host.corp/', 'host.corp:8443');
    yes('https://anything/', '*');
    no('https://anything/', '');
    assert.equal(proxyFor(new URL('http://10.0.0.1/'), { http: 'http://p:3128/', noProxy: '10.0.0.0/8' }), undefined);
    for (const local of ['http://localhost:3000/', 'http://api.localhost/', 'http://127.5.5.5/', 'http://[::1]:8080/']) {
      assert.equal(proxyFor(new URL(local), { http: 'http://p:3128/' }), undefined, local);
    }
    assert.equal(proxyFor(new URL('http://localhost.example.com/'), { http: 'http://p:3128/' }), 'http://p:3128/');
    assert.equal(proxyFor(new URL('http://11.0.0.1/'), { http: 'http://p:3128/', noProxy: '10.0.0.0/8' }), 'http://p:3128/');
  });
});
