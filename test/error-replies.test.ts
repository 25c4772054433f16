/**
 * Error replies: who answered (a gateway's or proxy's own page is said to be theirs, with its
 * title), the real service's error bodies (error_code, param), and a refused API redirect.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorMessage, pageTitle } from '../src/http/reply.js';
import { json, serve } from './scripted-server.js';
import { ApiError } from '../src/core/errors.js';
import { assertNoCredential, cliAgainst, cliOnce as cli, withTransport } from './scripted-client.js';

const NGINX_413 =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const SQUID_503 =
  '<!DOCTYPE html><html><head><meta type="copyright" content="Copyright (C) 1996-2023 The Squid Software Foundation and contributors">\n<title>ERROR: The requested URL could not be retrieved</title></head><body>…</body></html>';

describe('error pages', () => {
  test("a gateway's HTML page (nginx's 413) is the gateway's, quoted by its title", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(413, { 'content-type': 'text/html' });
      res.end(NGINX_413);
    });
    try {
      const result = await cli(['tags', 'get', '7001'], { CARECTL_BASE_URL: server.url });
      assert.equal(result.code, 1);
      assert.equal(result.stderr, 'carectl: a gateway in front of the service answered HTTP 413 ("413 Request Entity Too Large"), not the service itself\n');
    } finally {
      await server.close();
    }
  });

  test('a 404 web page (another site at a wrong base address) names the address and the setting to check', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><head><title>Error response</title></head><body>Error code: 404</body></html>');
    });
    try {
      const result = await cli(['teams', 'list'], { CARECTL_BASE_URL: server.url });
      assert.equal(result.code, 4);
      assert.equal(
        result.stderr,
        `carectl: ${server.url}/v1.3/teams answered HTTP 404 with a web page ("Error response"), not the service's JSON: check the base address (--base-url, CARECTL_BASE_URL)\n`,
      );
    } finally {
      await server.close();
    }
  });

  test("a proxy's 503 and 407 name the proxy, never its credentials", async () => {
    let status = 503;
    const proxy = await serve((req, res) => {
      assert.match(req.url ?? '', /^http:\/\/api\.example\.test\//, 'absolute form');
      res.writeHead(status, { 'content-type': 'text/html', ...(status === 407 && { 'proxy-authenticate': 'Basic realm="Squid"' }) });
      res.end(SQUID_503.replace('ERROR: The requested URL could not be retrieved', status === 407 ? 'ERROR: Cache Access Denied' : '$&'));
    });
    const port = new URL(proxy.url).port;
    try {
      const env = { CARECTL_BASE_URL: 'http://api.example.test', HTTP_PROXY: `http://pu:proxy-pw@127.0.0.1:${port}` };
      const unavailable = await cli(['--insecure-http', 'tags', 'get', '7001'], env);
      assert.equal(unavailable.code, 1);
      assert.equal(
        unavailable.stderr,
        `carectl: the proxy 127.0.0.1:${port} (HTTP_PROXY) answered HTTP 503 ("ERROR: The requested URL could not be retrieved"): it did not get an answer from the service\n`,
      );
      status = 407;
      const denied = await cli(['--insecure-http', 'tags', 'get', '7001'], env);
      // undici turns a 407 into an error of its own: the proxy is named all the same.
      assert.equal(
        denied.stderr,
        `carectl: GET http://api.example.test/v1.3/tags/7001 failed: the proxy 127.0.0.1:${port} (HTTP_PROXY) refused the request (HTTP 407: proxy credentials missing or wrong)\n`,
      );
    } finally {
      await proxy.close();
    }
  });

  test("a gateway's 502/504 to the POST (or an HTTP_PROXY's): the report may have been created, and how to look", async () => {
    const page = (status: number, title: string): string =>
      `<html>\r\n<head><title>${status} ${title}</title></head>\r\n<body><center><h1>${status} ${title}</h1></center><hr><center>nginx</center></body>\r\n</html>\r\n`;
    const create = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07'];
    const look = '; the report may have been created all the same: look with carectl reports list --account 1001 before trying again\n';
    for (const [status, title] of [
      [504, 'Gateway Time-out'],
      [502, 'Bad Gateway'],
    ] as const) {
      // serve() reads the whole POST, as a gateway passing it on would, before it answers.
      const gateway = await serve((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/html' });
        res.end(page(status, title));
      });
      try {
        const direct = await cli(create, { CARECTL_BASE_URL: gateway.url });
        assert.equal(direct.code, 1);
        assert.equal(
          direct.stderr,
          `carectl: a gateway in front of the service answered HTTP ${status} ("${status} ${title}"): it got no usable answer from the service${look}`,
        );
        const port = new URL(gateway.url).port;
        const proxied = await cli(['--insecure-http', ...create], { CARECTL_BASE_URL: 'http://api.example.test', HTTP_PROXY: `http://127.0.0.1:${port}` });
        assert.equal(
          proxied.stderr,
          `carectl: the proxy 127.0.0.1:${port} (HTTP_PROXY) answered HTTP ${status} ("${status} ${title}"): it did not get an answer from the service${look}`,
        );
        assert.equal(gateway.hits.length, 2, 'the POST is never repeated');
      } finally {
        await gateway.close();
      }
    }
  });

  test("a JSON error of the service through a proxy is still the service's", async () => {
    const proxy = await serve((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"status":"error","message":"Down for maintenance"}');
    });
    try {
      const result = await cli(['--insecure-http', 'tags', 'get', '7001'], { CARECTL_BASE_URL: 'http://api.example.test', HTTP_PROXY: proxy.url });
      assert.equal(result.stderr, 'carectl: Down for maintenance (HTTP 503)\n');
    } finally {
      await proxy.close();
    }
  });

  test('a page title that echoes the credentials is redacted before it is cut: no part of a secret at any length around the cut', async () => {
    const user = 'demo';
    const password = 'Serv1ce-Pw-long-password';
    const proxyPassword = 'Pr0xy-Pw-long-password';
    // Pads the title so that the echoed credential starts before, at and after the 100th character.
    let pad = 0;
    let echo: 'header' | 'decoded' = 'header';
    const server = await serve((req, res) => {
      const header = String(req.headers['proxy-authorization'] ?? req.headers.authorization);
      const shown = echo === 'header' ? header : `(${Buffer.from(header.replace(/^Basic /, ''), 'base64').toString()})`;
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(`<html><head><title>502 ${'x'.repeat(pad)} ${shown}</title></head><body></body></html>`);
    });
    const port = new URL(server.url).port;
    const leaks = (text: string, secretUser: string, secret: string): string[] => {
      const base64 = Buffer.from(`${secretUser}:${secret}`).toString('base64');
      // Four characters of the Base64 already name the user; of the password, four are a good part of it.
      return [base64.slice(0, 4), secret.slice(0, 4), `${secretUser}:${secret.slice(0, 1)}`].filter((part) => text.includes(part));
    };
    try {
      for (echo of ['header', 'decoded'] as const) {
        for (pad = 40; pad <= 100; pad++) {
          const direct = await cli(['tags', 'list'], { CARECTL_BASE_URL: server.url, CARECTL_USER: user, CARECTL_PASSWORD: password });
          assert.match(direct.stderr, /^carectl: a gateway in front of the service answered HTTP 502 \("502 x+[ …]/, direct.stderr);
          assert.deepEqual(leaks(direct.stderr, user, password), [], `${echo}, ${pad}: ${direct.stderr}`);
          const proxied = await cli(['--insecure-http', 'tags', 'list'], {
            CARECTL_BASE_URL: 'http://api.example.test',
            HTTP_PROXY: `http://pu:${proxyPassword}@127.0.0.1:${port}`,
          });
          assert.match(proxied.stderr, /^carectl: the proxy 127\.0\.0\.1:\d+ \(HTTP_PROXY\) answered HTTP 502 \("502 x+[ …]/, proxied.stderr);
          assert.deepEqual(leaks(proxied.stderr, 'pu', proxyPassword), [], `${echo}, ${pad}: ${proxied.stderr}`);
        }
      }
    } finally {
      await server.close();
    }
  });

  test('page titles: entities read, whitespace and control characters collapsed, long ones cut', () => {
    assert.equal(pageTitle('<TITLE lang="en">\n  502 Bad&nbsp;Gateway &amp; more\u001b[31m </TITLE>'), '502 Bad Gateway & more [31m');
    assert.equal(pageTitle('<title></title>'), undefined);
    assert.equal(pageTitle('{"a":1}'), undefined);
    assert.equal(pageTitle(`<title>${'x'.repeat(300)}</title>`)?.length, 100);
  });
});

describe('an API redirect is refused, naming where it pointed', () => {
  test('the Location is named, without its credentials and resolved against the request', async () => {
    for (const [location, shown] of [
      ['https://bob:hunter2@elsewhere.example/v1.3/tags', 'https://elsewhere.example/v1.3/tags'],
      ['/v2/tags', '/v2/tags'],
    ]) {
      await withTransport(
        (_req, res) => (res.writeHead(301, { location }), res.end()),
        async (t, server) => {
          await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => {
            assert.ok(e instanceof ApiError && e.status === 301);
            const target = shown.startsWith('/') ? `${server.url}${shown}` : shown;
            assert.equal(
              e.message,
              `the service answered HTTP 301: a redirect to ${target}, which carectl does not follow (credentials go only to ${server.url}): check the base address`,
            );
            return true;
          });
          assert.equal(server.hits.length, 1, 'not retried');
        },
      );
    }
  });

  test('carectl prints it without the credentials', async () => {
    const server = await serve((_req, res) => (res.writeHead(302, { location: 'http://u:hunter2@127.0.0.2/x' }), res.end()));
    try {
      const result = await cliAgainst(server.url, ['tags', 'get', '7001']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /a redirect to http:\/\/127\.0\.0\.2\/x, which carectl does not follow/);
      assertNoCredential(result.stderr);
    } finally {
      await server.close();
    }
  });
});

describe('error bodies of the real service: error_code and param', () => {
  test('shown after the status when present', () => {
    const body = { status: 'error', http_status: 400, error_code: 'invalid_parameter', param: 'page_size', message: 'page_size must be between 1 and 50' };
    assert.equal(errorMessage(400, JSON.stringify(body)), 'page_size must be between 1 and 50 (HTTP 400, error_code: invalid_parameter, param: page_size)');
    assert.equal(errorMessage(400, JSON.stringify({ ...body, error_code: undefined })), 'page_size must be between 1 and 50 (HTTP 400, param: page_size)');
    assert.equal(errorMessage(422, JSON.stringify({ error_code: 1042 })), 'the service answered HTTP 422 (error_code: 1042)');
  });

  test('bodies without them keep their messages exactly', () => {
    assert.equal(errorMessage(404, JSON.stringify({ status: 'error', message: "No tag with id '9'" })), "No tag with id '9' (HTTP 404)");
    assert.equal(errorMessage(400, JSON.stringify({ status: 'error', message: 'bad', error_code: '', param: null })), 'bad (HTTP 400)');
    assert.equal(errorMessage(502, '<html>bad gateway</html>'), 'the service answered HTTP 502');
    assert.equal(errorMessage(500, 'null'), 'the service answered HTTP 500');
  });

  test('carectl prints the code and the parameter', async () => {
    const server = await serve((_req, res) =>
      json(res, 400, { status: 'error', http_status: 400, error_code: 'invalid_parameter', param: 'page_size', message: 'page_size must be between 1 and 50' }),
    );
    try {
      const result = await cliAgainst(server.url, ['tags', 'get', '7001']);
      assert.equal(result.stderr, 'carectl: page_size must be between 1 and 50 (HTTP 400, error_code: invalid_parameter, param: page_size)\n');
    } finally {
      await server.close();
    }
  });
});
