/**
 * Reply bodies: character sets (latin1, UTF-16 decoded, others refused by name), bounds on size
 * and on the number of values, a 200 that is not the expected JSON (retried, then a bad reply; in
 * a list, a --resume token), records that are not objects or have no id.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { BadReplyError } from '../src/core/errors.js';
import { decodeText, MAX_JSON_VALUES, parseReply } from '../src/http/reply.js';
import { fakeClock, openSandbox, runCli, type RunResult } from './helpers.js';
import { endless, json, type ScriptedApi, scriptedApi, scriptedEnv, serve, testTransport } from './scripted-server.js';
import { cliAgainst, withTransport } from './scripted-client.js';

async function get(type: string, body: Buffer, retries = 0): Promise<{ outcome: unknown; hits: number }> {
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  });
  const transport = testTransport(server.url, fakeClock(), { retries });
  try {
    const outcome = await transport.get(new URL(`${server.url}/v1.3/tags`)).catch((err: unknown) => err);
    return { outcome, hits: server.hits.length };
  } finally {
    await transport.close();
    await server.close();
  }
}

describe('character sets', () => {
  const VALUE = { tag: { name: 'café – “quoted” ÿ' } };
  test('iso-8859-1 (read as windows-1252, its superset) is decoded', async () => {
    const { outcome } = await get('application/json; charset=ISO-8859-1', Buffer.from(JSON.stringify({ tag: { name: 'café ÿ' } }), 'latin1'));
    assert.deepEqual(outcome, { tag: { name: 'café ÿ' } });
  });

  test('utf-16 with its byte order mark, and utf-16be, are decoded', async () => {
    const text = JSON.stringify(VALUE);
    assert.deepEqual((await get('application/json;charset="utf-16"', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))).outcome, VALUE);
    const be = Buffer.from(text, 'utf16le').swap16();
    assert.deepEqual((await get('application/json; charset=utf-16be', be)).outcome, VALUE);
  });

  test('a character set carectl cannot read is refused by name, at once', async () => {
    const { outcome, hits } = await get('application/json; charset=x-klingon', Buffer.from('{}'), 2);
    assert.ok(outcome instanceof BadReplyError);
    assert.match(outcome.message, /: the reply is in the x-klingon character set, which carectl cannot read$/);
    assert.equal(hits, 1);
  });

  test('utf-8 with a byte order mark (RFC 8259 §8.1 lets a reader ignore it; .NET fronts send one) is read', async () => {
    const { outcome } = await get('application/json; charset=utf-8', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(VALUE))]));
    assert.deepEqual(outcome, VALUE);
    assert.deepEqual((await get('application/json', Buffer.from(`\ufeff${JSON.stringify(VALUE)}`))).outcome, VALUE);
  });

  test('no charset, or utf-8: UTF-8', () => {
    assert.equal(decodeText(Buffer.from('é'), 'application/json'), 'é');
    assert.equal(decodeText(Buffer.from('é'), undefined), 'é');
    assert.equal(decodeText(Buffer.from('é'), 'application/json; charset=UTF-8'), 'é');
  });
});

describe('millions of tiny values', () => {
  test('past the bound, refused before JSON.parse', async () => {
    const body = Buffer.from(`[${'[],'.repeat(MAX_JSON_VALUES)}[]]`);
    const { outcome } = await get('application/json', body);
    assert.ok(outcome instanceof BadReplyError);
    assert.match(outcome.message, /: the service sent a reply of more than 1,000,000 JSON values, more than carectl reads in one reply$/);
  });

  test('at the bound, parsed', () => {
    const parsed = parseReply(`[${'0,'.repeat(MAX_JSON_VALUES - 2)}0]`, 'application/json');
    assert.ok(parsed.ok);
    assert.equal((parsed.value as unknown[]).length, MAX_JSON_VALUES - 1);
  });
});

test('SIGTERM while the largest reply carectl takes is read and parsed: exit 143 within seconds', async () => {
  const body = Buffer.from(`[${'[],'.repeat(MAX_JSON_VALUES - 2)}[]]`);
  let sent!: () => void;
  const finished = new Promise<void>((resolve) => (sent = resolve));
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body, () => sent());
  });
  try {
    const bin = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'api', 'v1.3/tags'], {
      env: {
        PATH: process.env.PATH ?? '',
        XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
        CARECTL_BASE_URL: server.url,
        CARECTL_USER: 'u',
        CARECTL_PASSWORD: 'p',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 30_000,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await finished;
    child.kill('SIGTERM');
    const ended = await Promise.race([exited, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 10_000))]);
    assert.equal(ended, 143, stderr);
  } finally {
    await server.close();
  }
});

describe('reply bodies are bounded', () => {
  test('an endless body stops at the cap: a BadReplyError (an exchange that failed, so resumable), not retried: the answer will not change', async () => {
    await withTransport(
      (_req, res) => endless(res),
      async (t, server) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => {
          assert.ok(e instanceof BadReplyError && e.exchange === 'bad reply', String(e));
          assert.match(e.message, /^GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/tags: the reply is larger than the 256 KiB carectl reads$/);
          return true;
        });
        assert.equal(server.hits.length, 1, 'not retried');
      },
      { maxReplyBytes: 256 * 1024, retries: 2 },
    );
  });

  test('a body announced larger than the cap is not read at all', async () => {
    await withTransport(
      (_req, res) => endless(res, { 'content-length': String(8 * 1024 ** 3) }),
      async (t) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), /larger than the 1 MiB carectl reads/);
      },
      { maxReplyBytes: 1024 * 1024, retries: 0 },
    );
  });

  test('a body within the cap is read whole', async () => {
    const records = Array.from({ length: 2000 }, (_, i) => ({ id: String(i), name: 'x'.repeat(100) }));
    await withTransport(
      (_req, res) => json(res, 200, { data: records }),
      async (t) => {
        assert.deepEqual(await t.get(t.url('v1.3/tags')), { data: records });
      },
      { maxReplyBytes: 1024 * 1024 },
    );
  });
});

describe('a 200 that is not the expected JSON is retried like a transient failure', () => {
  test('HTML (a proxy page) then JSON: the retry gets the answer', async () => {
    await withTransport(
      (_req, res, hit) =>
        hit === 1 ? (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<html>maintenance</html>')) : json(res, 200, { ok: true }),
      async (t, server, clock) => {
        assert.deepEqual(await t.get(t.url('v1.3/tags')), { ok: true });
        assert.equal(server.hits.length, 2);
        assert.deepEqual(clock.slept, [500]);
      },
    );
  });

  test("a 200 web page (a front's maintenance page) is named by its title", async () => {
    await withTransport(
      (_req, res) => (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<html><head><title>Scheduled maintenance</title></head></html>')),
      async (t) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => {
          assert.match((e as Error).message, /: the service sent a web page \("Scheduled maintenance"\), not JSON \(text\/html\)$/);
          return true;
        });
      },
    );
  });

  test('malformed on every attempt: a BadReplyError naming the request and what came', async () => {
    await withTransport(
      (_req, res) => (res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }), res.end('<html>')),
      async (t, server) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => {
          assert.ok(e instanceof BadReplyError, String(e));
          assert.match(e.message, /^GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/tags: the service sent a reply that is not JSON \(text\/html\)$/);
          return true;
        });
        assert.equal(server.hits.length, 4);
      },
    );
  });

  test('JSON nested 100,000 deep: a clear message, not "Maximum call stack size exceeded"', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    await withTransport(
      (_req, res) => json(res, 200, deep),
      async (t) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => e instanceof BadReplyError && /nested deeper than 1000 levels$/.test(e.message));
      },
      { retries: 1 },
    );
  });

  test('JSON 1000 levels deep is still taken', async () => {
    const value = JSON.parse('['.repeat(999) + '{"a":1}' + ']'.repeat(999)) as unknown;
    await withTransport(
      (_req, res) => json(res, 200, value),
      async (t) => assert.deepEqual(await t.get(t.url('v1.3/tags')), value),
    );
  });

  test('carectl: a lookup answered with deep JSON ends with the message and exit 1', async () => {
    const server = await serve((_req, res) => json(res, 200, '{"tag":' + '['.repeat(50_000) + ']'.repeat(50_000) + '}'));
    try {
      const result = await cliAgainst(server.url, ['tags', 'get', '7001', '-o', 'json']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^carectl: GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/tags\/7001: the service sent JSON nested deeper than 1000 levels\n$/);
      assert.equal(server.hits.length, 4, 'retried 3 times');
    } finally {
      await server.close();
    }
  });
});

describe('a list whose page is not JSON ends with a --resume token', () => {
  test('tags list: an HTML page after retries stops the list; --resume then completes it exactly', async () => {
    const sandbox = await openSandbox();
    // In front of the sandbox, answering list pages with HTML while `broken` (a captive portal, a proxy's error page).
    let broken = false;
    let pages = 0;
    const front = await serve((req, res) => {
      const isPage = /^\/v1\.3\/tags\?/.test(req.url ?? '');
      if (isPage && broken && ++pages > 2) return void (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<html>login</html>'));
      fetch(`${sandbox.baseUrl}${req.url}`, { headers: { authorization: req.headers.authorization ?? '' } })
        .then(async (reply) => {
          const text = (await reply.text()).split(sandbox.baseUrl).join(front.url);
          res.writeHead(reply.status, { 'content-type': 'application/json' });
          res.end(text);
        })
        .catch(() => res.writeHead(502).end());
    });
    const run = async (argv: string[]): Promise<RunResult & { slept: number[] }> => {
      const clock = fakeClock();
      const result = await runCli(argv, {
        env: { CARECTL_BASE_URL: front.url, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password },
        now: clock.now,
        sleep: clock.sleep,
      });
      return { ...result, slept: clock.slept };
    };
    try {
      const argv = ['tags', 'list', '--page-size', '5', '-o', 'ndjson'];
      const full = await run(argv);
      assert.equal(full.code, 0, full.stderr);
      broken = true;
      const first = await run([...argv, '--retries', '1']);
      assert.equal(first.code, 1);
      assert.match(
        first.stderr,
        /^carectl: GET \S+\/v1\.3\/tags: the service sent a reply that is not JSON \(text\/html\); the list stopped after 10 records: to continue, run the same command with --resume \S+\n$/,
      );
      assert.equal(first.slept.length, 1, 'the page was retried once');
      const token = /--resume (\S+)/.exec(first.stderr)![1]!;
      broken = false;
      const rest = await run([...argv, '--resume', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(first.stdout + rest.stdout, full.stdout);
    } finally {
      await front.close();
      await sandbox.close();
    }
  });
});

/** Second pages of the tags list, by scenario (the first page is always good). */
const SECOND_PAGES: Record<string, unknown> = {
  'not-objects': { tags: [{ id: '3', name: 'c', is_active: true }, 'x', null] },
  'no-id': {
    tags: [
      { id: '3', name: 'c', is_active: true },
      { name: 'no id', is_active: true },
    ],
  },
  'empty-id': { tags: [{ id: '', name: 'empty id', is_active: true }] },
  'wrong-key': { items: [{ id: '3' }] },
};

describe('records that are not objects or have no id', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      const url = new URL(request.url, 'http://x');
      const scenario = url.pathname.split('/')[1] ?? '';
      if (url.pathname.endsWith('/tags/7001')) return { json: { tag: SECOND_PAGES[scenario] } };
      if (url.searchParams.get('skip') === '2') return { json: { ...(SECOND_PAGES[scenario] as object), paging: { next_page: null } } };
      url.searchParams.set('skip', '2');
      const next = `${api.baseUrl}${url.pathname}?${url.searchParams}`;
      return {
        json: {
          tags: [
            { id: '1', name: 'a', is_active: true },
            { id: '2', name: 'b', is_active: true },
          ],
          paging: { next_page: next },
        },
      };
    });
  });
  after(() => api.close());

  const list = (scenario: string) =>
    runCli(['tags', 'list', '--page-size', '2', '-o', 'csv', '--retries', '0'], {
      env: { ...scriptedEnv(api), CARECTL_BASE_URL: `${api.baseUrl}/${scenario}` },
    });

  for (const [scenario, message] of [
    ['not-objects', /unexpected reply: record 2 of the "tags" list is not an object \(a string\)/],
    ['no-id', /unexpected reply: record 2 of the "tags" list has no id/],
    ['empty-id', /unexpected reply: record 1 of the "tags" list has no id/],
    ['wrong-key', /unexpected reply: no "tags" list/],
  ] as const) {
    test(`${scenario}: exit 1, the records before stay whole, and a --resume token`, async () => {
      const out = await list(scenario);
      assert.equal(out.code, 1, out.stderr);
      assert.equal(out.stdout, 'id,name,is_active\r\n1,a,true\r\n2,b,true\r\n');
      assert.match(out.stderr, message);
      assert.match(out.stderr, /the list stopped after 2 records: to continue, run the same command with --resume \S+\n$/);
    });
  }

  test('a get whose record has no id: exit 1 with a clear message, nothing printed', async () => {
    const out = await runCli(['tags', 'get', '7001', '-o', 'json', '--retries', '0'], {
      env: { ...scriptedEnv(api), CARECTL_BASE_URL: `${api.baseUrl}/no-id` },
    });
    assert.equal(out.code, 1);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /^carectl: GET http:\/\/127\.0\.0\.1:\d+\/no-id\/v1\.3\/tags\/7001: unexpected reply: the "tag" record has no id\n$/);
  });
});

describe('a reply without the expected envelope is retried like a transient failure', () => {
  test('a wrong envelope key, then the right one: the list completes', async () => {
    let calls = 0;
    const api = await scriptedApi(() =>
      ++calls === 1 ? { json: { html: '<h1>proxy</h1>' } } : { json: { tags: [{ id: '1', name: 'a', is_active: true }], paging: {} } },
    );
    try {
      const clock = fakeClock();
      const out = await runCli(['tags', 'list', '-o', 'csv', '--verbose'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, 'id,name,is_active\r\n1,a,true\r\n');
      assert.equal(calls, 2);
      assert.match(out.stderr, /unexpected reply: no "tags" list/);
      assert.match(out.stderr, /retrying in \d+ ms/);
    } finally {
      await api.close();
    }
  });
});

test("a read answered 200 with the spec's error body names the service's words, not only the missing record", async () => {
  const api = await scriptedApi(() => ({ json: { status: 'error', message: 'Internal failure' } }));
  try {
    const one = await runCli(['conversations', 'get', '500001', '--retries', '0'], { env: scriptedEnv(api) });
    assert.equal(one.code, 1);
    assert.match(
      one.stderr,
      /^carectl: GET \S+\/conversations\/500001: unexpected reply: no "conversation" record \(the service answered with an error: Internal failure\)\n$/,
    );
    const list = await runCli(['tags', 'list', '--retries', '0'], { env: scriptedEnv(api) });
    assert.equal(list.code, 1);
    assert.match(list.stderr, /^carectl: .*unexpected reply: no "tags" list \(the service answered with an error: Internal failure\)/);
  } finally {
    await api.close();
  }
});
