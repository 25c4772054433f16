/**
 * Credentials: sent only to the base origin, and never printed, in any output, even when a
 * server echoes them back (error messages, traces, records, URLs with userinfo).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it, test } from 'node:test';
import { ApiError } from '../src/core/errors.js';
import { basicCredentialForms, redact, redactError, stripUserinfo } from '../src/http/redact.js';
import { json, localServer, type LocalServer, serve } from './scripted-server.js';
import { assertNoCredential, BASE64, cliAgainst, PASSWORD, USER, withTransport } from './scripted-client.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { runCli, sandboxAndScratch, type RunOptions, type RunResult } from './helpers.js';

let sandbox: Sandbox;
let scratch: string;
sandboxAndScratch((opened, folder) => ([sandbox, scratch] = [opened, folder]));

describe('credentials are never printed, even when echoed', () => {
  const echo = (req: IncomingMessage, res: ServerResponse): void =>
    json(res, 400, { status: 'error', message: `bad request from ${USER} with ${req.headers.authorization} (password ${PASSWORD}, decoded ${BASE64})` });

  test('an error message quoting the Authorization header and the password', async () => {
    await withTransport(echo, async (t, _server, _clock, trace) => {
      await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => {
        assert.ok(e instanceof ApiError);
        assertNoCredential(e.message);
        assert.match(e.message, /^bad request from agent@example\.com with \[redacted\] \(password \[redacted\], decoded \[redacted\]\) \(HTTP 400\)$/);
        return true;
      });
      assertNoCredential(trace.join('\n'));
    });
  });

  test('carectl: the error line, --verbose trace and update result rows hold none', async () => {
    const server = await serve(echo);
    try {
      for (const argv of [
        ['--verbose', 'tags', 'get', '7001'],
        ['--verbose', 'conversations', 'update', '500001', '--status', 'on_hold', '--tags', ''],
        ['-o', 'json', 'conversations', 'update', '500001', '--status', 'on_hold', '--tags', ''],
      ]) {
        const result = await cliAgainst(server.url, argv);
        assert.notEqual(result.code, 0);
        assert.match(result.stdout + result.stderr, /\[redacted\]/);
        assertNoCredential(result.stdout + result.stderr);
      }
    } finally {
      await server.close();
    }
  });

  test('a 200 reply echoing the password has it replaced in the record', async () => {
    await withTransport(
      (req, res) => json(res, 200, { tag: { id: '1', name: `seen ${req.headers.authorization}`, note: PASSWORD } }),
      async (t) => {
        assert.deepEqual(await t.get(t.url('v1.3/tags/1')), { tag: { id: '1', name: 'seen [redacted]', note: '[redacted]' } });
      },
    );
  });

  test('a URL with user:password@ in a message or a record loses its credentials', async () => {
    await withTransport(
      (_req, res, hit) =>
        hit === 1
          ? json(res, 200, { link: 'https://bob:hunter2@files.example/x' })
          : json(res, 404, { status: 'error', message: 'moved to https://bob:hunter2@api.example/v2' }),
      async (t) => {
        assert.deepEqual(await t.get(t.url('a')), { link: 'https://files.example/x' });
        await assert.rejects(t.get(t.url('b')), (e: unknown) => e instanceof ApiError && e.message === 'moved to https://api.example/v2 (HTTP 404)');
      },
    );
  });

  test('redact(): every form of the credential, the header value whatever it holds, URL userinfo', () => {
    const secrets = basicCredentialForms(USER, PASSWORD);
    assert.equal(redact(`a ${PASSWORD} b Basic ${BASE64} c ${BASE64.replace(/=+$/, '')}`, secrets), 'a [redacted] b [redacted] c [redacted]');
    assert.equal(redact('Authorization: Basic Zm9vOmJhcg==', []), 'Authorization: Basic [redacted]');
    assert.equal(redact('proxy-authorization: Basic Zm9vOmJhcg==', []), 'proxy-authorization: Basic [redacted]');
    assert.equal(redact('see http://u:p@h.example:8080/x?y and ftp://anon@h', []), 'see http://h.example:8080/x?y and ftp://h');
    assert.equal(stripUserinfo('https://u:p%40ss@host.example/a?b=c'), 'https://host.example/a?b=c');
    assert.equal(stripUserinfo(new URL('https://host.example/')), 'https://host.example/');
    const error = redactError(new Error(`failed for ${PASSWORD}`), secrets);
    assert.equal(error.message, 'failed for [redacted]');
  });
});

describe('credentials go only to the base origin', () => {
  let other: LocalServer;
  let base: LocalServer;

  before(async () => {
    other = await localServer((_req, res) => json(res, 200, { tags: [{ id: '2' }], paging: { next_page: null } }));
    base = await localServer((_req, res) =>
      json(res, 200, { tags: [{ id: '1', name: 'first' }], paging: { next_page: `${other.url}/v1.3/tags?page_size=50&skip=1`, prev_page: null } }),
    );
  });
  after(async () => {
    await base.close();
    await other.close();
  });

  const env = (): Record<string, string> => ({ CARECTL_BASE_URL: base.url, CARECTL_USER: 'demo', CARECTL_PASSWORD: 'paging-secret' });

  it('a list refuses a next_page link on another origin: that server gets no request', async () => {
    const result = await runCli(['-o', 'ndjson', 'tags', 'list'], { env: env() });
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`refusing to follow a link to ${other.url}: credentials are only sent to ${base.url}`));
    assert.equal(result.stdout, '{"id":"1","name":"first"}\n', 'the page read before the link is kept');
    assert.equal(base.requests.length, 1);
    assert.equal(other.requests.length, 0);
  });

  it('a redirect from the API is not followed: the other origin gets no request', async () => {
    const redirecting = await localServer((_req, res) => {
      res.writeHead(302, { location: `${other.url}/v1.3/tags/1` });
      res.end();
    });
    try {
      const seen = other.requests.length;
      for (const argv of [
        ['tags', 'get', '1'],
        ['api', 'v1.3/tags/1'],
      ]) {
        const result = await runCli([...argv, '--retries', '0'], { env: { ...env(), CARECTL_BASE_URL: redirecting.url } });
        assert.equal(result.code, 1, argv.join(' '));
        assert.match(result.stderr, /302/);
      }
      assert.equal(other.requests.length, seen);
    } finally {
      await redirecting.close();
    }
  });

  it('api --paginate refuses it too, after printing the first page', async () => {
    const result = await runCli(['api', 'v1.3/tags', '--paginate'], { env: env() });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /refusing to follow a link to http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(JSON.parse(result.stdout).tags[0].id, '1');
    assert.equal(other.requests.length, 0);
  });

  it('report downloads from the download host carry no credentials', async () => {
    const sent = sandbox.requests.length;
    const result = await runCli(['reports', 'download', FIXTURES.reports.generatedId, '--file', '-'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    const downloads = sandbox.requests.slice(sent).filter((request) => request.listener === 'download');
    assert.ok(downloads.length > 0, 'the report came from the download host');
    for (const request of downloads) assert.equal(request.authorization, undefined);
  });

  it('plain http is refused (exit 2) unless the host is loopback or --insecure-http is given', async () => {
    const creds = { CARECTL_USER: 'demo', CARECTL_PASSWORD: 'x' };
    for (const address of [
      'http://api.example.com',
      `http://0.0.0.0:${new URL(base.url).port}`,
      'http://localhost.evil.example:9',
      'http://127.0.0.1.nip.io:9',
    ]) {
      const result = await runCli(['tags', 'list'], { env: { ...creds, CARECTL_BASE_URL: address } });
      assert.equal(result.code, 2);
      assert.match(result.stderr, /refusing plain http to .*: credentials would cross the network unencrypted; use https:\/\/ or pass --insecure-http/);
    }
    assert.equal(base.requests.length, 2, 'only the two earlier tests reached the server');
    // 0.0.0.0 is not a loopback name, yet reaches this machine: --insecure-http lets it through
    const insecure = await runCli(['--insecure-http', 'api', 'v1.3/tags'], { env: { ...creds, CARECTL_BASE_URL: `http://0.0.0.0:${new URL(base.url).port}` } });
    assert.equal(insecure.code, 0, insecure.stderr);
    // Loopback names and addresses are allowed plain http: the request is made (and refused here).
    for (const host of ['localhost', '[::1]', '127.0.0.2']) {
      const loopback = await runCli(['tags', 'get', '1', '--retries', '0'], { env: { ...creds, CARECTL_BASE_URL: `http://${host}:9` } });
      assert.equal(loopback.code, 1, loopback.stderr);
      // Refused by the network (nothing listens on port 9), not by carectl's plain-http rule.
      assert.match(loopback.stderr, /^carectl: GET .* failed: /);
    }
    const withUserinfo = await runCli(['tags', 'list'], { env: { ...creds, CARECTL_BASE_URL: 'https://demo:pw@api.example.com' } });
    assert.equal(withUserinfo.code, 2);
    assert.match(withUserinfo.stderr, /not in the URL/);
  });
});

describe('no output contains the password or its Base64 form', () => {
  function secretsOf(user: string, password: string): string[] {
    const forms = (text: string): string[] => [Buffer.from(text).toString('base64'), Buffer.from(text).toString('base64url')];
    return [password, ...forms(`${user}:${password}`), ...forms(password)];
  }

  function assertNoLeak(label: string, result: RunResult, user: string, password: string): void {
    for (const secret of secretsOf(user, password)) {
      assert.ok(!result.stdout.includes(secret), `${label}: stdout holds ${secret}`);
      assert.ok(!result.stderr.includes(secret), `${label}: stderr holds ${secret}`);
    }
  }

  it('across verbose reads, errors, dry runs, downloads and raw requests', async () => {
    const runs: Array<[string[], RunOptions, number]> = [
      [['--verbose', 'tags', 'list'], {}, 0],
      [['--verbose', 'tags', 'get', '7001'], {}, 0],
      [['--verbose', '-o', 'json', 'conversations', 'get', FIXTURES.hostile.conversationId, '--include', 'content'], {}, 0],
      [['--verbose', 'conversations', 'update', FIXTURES.multiPlatformConversationId, '--status', 'on_hold', '--dry-run'], {}, 0],
      [['--verbose', 'reports', 'download', FIXTURES.reports.generatedId, '--file', '-'], {}, 0],
      [['--verbose', 'api', 'v1.3/tags?page_size=2', '--paginate'], {}, 0],
      [['--verbose', 'api', 'v1.3/tags/999999'], {}, 4],
      [['--verbose', 'api', 'v1.3/tags?is_active=maybe'], {}, 1],
      [['--verbose', 'api', `${sandbox.downloadBaseUrl}/reports`], {}, 2],
      [['--verbose', '--retries', '0', 'tags', 'list'], { env: { CARECTL_BASE_URL: 'http://127.0.0.1:9' } }, 1],
    ];
    for (const [argv, options, code] of runs) {
      const result = await runCli(argv, { sandbox, ...options });
      assert.equal(result.code, code, `${argv.join(' ')}: ${result.stderr}`);
      assertNoLeak(argv.join(' '), result, sandbox.user, sandbox.password);
      if (code !== 2) assert.match(result.stderr, /> authorization: Basic \[redacted\]/, `${argv.join(' ')} traced its requests`);
    }
    const refused = await runCli(['--verbose', 'tags', 'list'], { sandbox, env: { CARECTL_PASSWORD: 'wrong-secret' } });
    assert.equal(refused.code, 3);
    assertNoLeak('401', refused, sandbox.user, 'wrong-secret');
  });

  it('across login, config list, commands using the profile, and logout', async () => {
    const env = { XDG_CONFIG_HOME: path.join(scratch, 'leak') };
    const login = (password: string): Promise<RunResult> =>
      runCli(['--verbose', 'login', '--base-url', sandbox.baseUrl, '--user', sandbox.user, '--password-stdin'], { env, stdin: `${password}\n` });
    const wrong = await login('wrong-secret');
    assert.equal(wrong.code, 3);
    assertNoLeak('login with a wrong password', wrong, sandbox.user, 'wrong-secret');

    const runs = [
      await login(sandbox.password),
      await runCli(['config', 'list'], { env }),
      await runCli(['-o', 'json', 'config', 'list'], { env }),
      await runCli(['config', 'get', 'user'], { env }),
      await runCli(['config', 'get', 'password'], { env }),
      await runCli(['--verbose', 'tags', 'get', '7005'], { env }),
      await runCli(['--verbose', 'api', 'v1.3/tags/999999'], { env }),
      await runCli(['logout'], { env }),
    ];
    assert.deepEqual(
      runs.map((result) => result.code),
      [0, 0, 0, 0, 2, 0, 4, 0],
    );
    runs.forEach((result, index) => assertNoLeak(`profile run ${index}`, result, sandbox.user, sandbox.password));
  });

  it('in the error about a corrupt config file', async () => {
    const home = path.join(scratch, 'corrupt');
    mkdirSync(path.join(home, 'carectl'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(home, 'carectl', 'config.json'), `{"profiles":{"default":{"user":"demo","password":"${sandbox.password}"}}`);
    const result = await runCli(['config', 'list'], { env: { XDG_CONFIG_HOME: home } });
    assert.equal(result.code, 2);
    assertNoLeak('corrupt config', result, sandbox.user, sandbox.password);
  });
});
