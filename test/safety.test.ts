/**
 * Safe by default: credentials only to the base origin, no password (or its Base64) in any
 * output, and hostile text from strangers inert in every output format and on stderr.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURES, HOSTILE, type Sandbox } from '../src/sandbox/index.js';
import { openSandbox, runCli, type RunResult, type RunOptions } from './helpers.js';

let sandbox: Sandbox;
let scratch: string;

before(async () => {
  sandbox = await openSandbox();
  scratch = mkdtempSync(path.join(tmpdir(), 'carectl-safety-'));
});
after(async () => {
  await sandbox.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A throwaway HTTP server on loopback that records what reached it. */
interface LocalServer {
  url: string;
  requests: Array<{ url: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

async function localServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<LocalServer> {
  const requests: LocalServer['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Raw control characters a terminal would act on; `allowed` names the separators a format uses. */
function rawControls(text: string, allowed: string): string[] {
  return [...text].filter((char) => /[\u0000-\u001f\u007f-\u009f]/.test(char) && !allowed.includes(char));
}

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

describe('api --paginate does not trust paging links to end', () => {
  it('follows empty pages, and stops at the 50th in a row and at a link back to a page already read', async () => {
    const server = await localServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
      // page 2 links back to page 1 under /loop, and to an ever-further empty page under /empty
      const next = req.url?.startsWith('/loop') ? `/loop?page=${page === 2 ? 1 : page + 1}` : `/empty?page=${page + 1}`;
      json(res, 200, { items: page > 2 && req.url?.startsWith('/empty') ? [] : [{ page }], paging: { next_page: next } });
    });
    try {
      const env = { CARECTL_BASE_URL: server.url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
      const empty = await runCli(['api', 'empty?page=1', '--paginate'], { env });
      assert.equal(empty.code, 1);
      assert.match(
        empty.stderr,
        /^carectl: the service sent 50 empty pages in a row \(the last: .*\/empty\?page=52\) with a link to more: paging would not end\n$/,
      );
      assert.equal(empty.stdout.trimEnd().split('\n').length, 51, 'the empty pages before the 50th are printed, that one is not');
      const loop = await runCli(['api', 'loop?page=1', '--paginate'], { env });
      assert.equal(loop.code, 1);
      assert.match(loop.stderr, /next_page link back to a page already read/);
      assert.equal(loop.stdout.trimEnd().split('\n').length, 2);
    } finally {
      await server.close();
    }
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

describe('hostile text stays inert', () => {
  const hostileTags = (): Array<{ id: string; name: string }> =>
    sandbox.data.tags.filter((tag) => (FIXTURES.hostile.tagIds as readonly string[]).includes(tag.id));

  it('table shows control characters escaped, never raw', async () => {
    for (const argv of [
      ['tags', 'list', '--columns', 'id,name'],
      ['authors', 'get', FIXTURES.hostile.authorIds[0], '--columns', 'id,screen_name,real_name,location,description'],
      ['conversations', 'content', FIXTURES.hostile.conversationId],
    ]) {
      const result = await runCli(['--no-color', '-o', 'table', ...argv], { sandbox, stdoutTTY: true, columns: 400 });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(rawControls(result.stdout, '\n'), [], argv.join(' '));
    }
    const tags = await runCli(['--no-color', '-o', 'table', 'tags', 'list', '--columns', 'id,name'], { sandbox, stdoutTTY: true, columns: 400 });
    assert.ok(tags.stdout.includes('vip\\x1b]52;c;ZWNobyBwd25lZA==\\x07'), 'OSC 52 shown as text');
    assert.ok(tags.stdout.includes('\\x1b[2J\\x1b[Hurgent\\x07'), 'CSI clear screen and BEL shown as text');
  });

  it('tsv escapes control characters and never splits a value with a raw tab or newline', async () => {
    const columns = ['id', 'screen_name', 'real_name', 'location', 'description'];
    const result = await runCli(['-o', 'tsv', 'authors', 'get', FIXTURES.hostile.authorIds[0], '--columns', columns.join(',')], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(rawControls(result.stdout, '\t\n'), []);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    const cells = lines[1]?.split('\t') ?? [];
    assert.equal(cells.length, columns.length);
    assert.equal(cells[1], '\\x1b]8;;https://evil.example/\\x1b\\\\click\\x1b]8;;\\x1b\\\\');
    assert.equal(cells[2], 'ok\\rPWNED');
    assert.equal(cells[3], '\\x9b31mred');
    assert.equal(cells[4], 'col1\\tcol2\\nline2\\x7f\\x07');

    const content = await runCli(['-o', 'tsv', 'conversations', 'content', FIXTURES.hostile.conversationId], { sandbox });
    assert.equal(content.code, 0, content.stderr);
    assert.deepEqual(rawControls(content.stdout, '\t\n'), []);
    const [header, ...rows] = content.stdout.trimEnd().split('\n');
    for (const row of rows) assert.equal(row.split('\t').length, header?.split('\t').length);
  });

  it('json and ndjson escape them as JSON does and keep the exact text', async () => {
    for (const format of ['json', 'ndjson']) {
      const result = await runCli(['-o', format, 'tags', 'list'], { sandbox });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(rawControls(result.stdout, '\n'), [], format);
      const records =
        format === 'json'
          ? (JSON.parse(result.stdout) as Array<{ id: string; name: string }>)
          : result.stdout
              .trimEnd()
              .split('\n')
              .map((line) => JSON.parse(line) as { id: string; name: string });
      for (const tag of hostileTags()) assert.equal(records.find((record) => record.id === tag.id)?.name, tag.name);
    }
    const author = await runCli(['-o', 'json', 'authors', 'get', FIXTURES.hostile.authorIds[0]], { sandbox });
    assert.deepEqual(rawControls(author.stdout, '\n'), []);
    assert.equal((JSON.parse(author.stdout) as { real_name: string }).real_name, HOSTILE.crOverwrite);
  });

  it('csv prefixes formula cells with a quote; --no-escape-formulas keeps them as they are', async () => {
    const escaped = await runCli(['-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox });
    assert.equal(escaped.code, 0, escaped.stderr);
    assert.ok(escaped.stdout.includes(`7001,"'=HYPERLINK(""http://evil.example"",""x"")"`), escaped.stdout.slice(0, 300));
    assert.ok(escaped.stdout.includes("7004,'+1+1"));
    const author = await runCli(['-o', 'csv', 'authors', 'get', FIXTURES.hostile.authorIds[1], '--columns', 'screen_name,real_name,location,website'], {
      sandbox,
    });
    assert.equal(author.stdout.split(/\r?\n/)[1], "'@SUM(A1),'-2+3,'＝1+1,'+1+1");

    const raw = await runCli(['--no-escape-formulas', '-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox });
    assert.ok(raw.stdout.includes('7001,"=HYPERLINK(""http://evil.example"",""x"")"'));
    assert.ok(raw.stdout.includes('7004,+1+1'));
  });

  it('csv on a terminal shows control characters escaped; into a file or pipe it keeps the exact text', async () => {
    const shown = await runCli(['-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox, stdoutTTY: true });
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(rawControls(shown.stdout, '\r\n'), []);
    assert.ok(shown.stdout.includes('vip\\x1b]52;c;ZWNobyBwd25lZA==\\x07'), shown.stdout);
    const piped = await runCli(['-o', 'csv', 'tags', 'list', '--columns', 'id,name'], { sandbox });
    for (const tag of hostileTags()) assert.ok(piped.stdout.includes(tag.name.includes('"') ? tag.name.replaceAll('"', '""') : tag.name), tag.id);
  });

  it('usage errors show control characters in the arguments escaped', async () => {
    for (const argv of [
      ['tags', 'list', '--x\u001b]0;PWN\u0007'],
      ['tags', 'frob\u001b[2J'],
      ['completion', 'b\u001b[1m'],
    ]) {
      const result = await runCli(argv, { sandbox });
      assert.equal(result.code, 2, argv.join(' '));
      assert.deepEqual(rawControls(result.stderr, '\n'), [], result.stderr);
      assert.match(result.stderr, /\\x1b/);
      assert.equal(result.stderr.split('\n').length, 2, 'one line');
    }
  });

  it("the service's error messages reach stderr escaped", async () => {
    const fromSandbox = await runCli(['api', 'v1.3/%1B%5D52%3Bc%3BZWNobw%3D%3D%07'], { sandbox });
    assert.equal(fromSandbox.code, 4);
    assert.deepEqual(rawControls(fromSandbox.stderr, '\n'), []);
    assert.ok(fromSandbox.stderr.includes("Unknown resource '\\x1b]52;c;ZWNobw==\\x07'"), fromSandbox.stderr);

    const message = `bad ${HOSTILE.osc8Hyperlink} ${HOSTILE.crOverwrite} ${HOSTILE.c1Csi} ${HOSTILE.del}${HOSTILE.bell}\u202eevil`;
    const server = await localServer((_req, res) => json(res, 400, { status: 'error', message }));
    try {
      const result = await runCli(['--verbose', 'tags', 'list'], { env: { CARECTL_BASE_URL: server.url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' } });
      assert.equal(result.code, 1);
      assert.deepEqual(rawControls(result.stderr, '\n'), []);
      assert.ok(
        result.stderr.includes(
          'carectl: bad \\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\ ok\\rPWNED \\x9b31m \\x7f\\x07\\u202eevil (HTTP 400)\n',
        ),
        result.stderr,
      );
    } finally {
      await server.close();
    }
  });
});
