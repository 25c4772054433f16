/**
 * HTTP hardening (issue 14 items 5, 6, 9, 12, 13; issue 15 item 7): replies no honest service
 * sends (endless, malformed, nested past printing, echoing credentials), a write that may have
 * been applied, refused redirects, the real service's error bodies, and retries that span a
 * hiccup. Each reply comes from a small scripted server on loopback; every wait goes through a
 * fake sleep.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { ApiError, BadReplyError, MAY_HAVE_BEEN_APPLIED, mayHaveBeenApplied, NetworkError } from '../src/core/errors.js';
import { basicCredentialForms, redact, redactError, stripUserinfo } from '../src/http/redact.js';
import { errorMessage } from '../src/http/reply.js';
import { Transport, type TransportConfig } from '../src/http/transport.js';
import { fakeClock, openSandbox, runCli, type RunResult } from './helpers.js';
import { endless, json, serve, testTransport, type Served } from './scripted-server.js';

const USER = 'agent@example.com';
const PASSWORD = 'pa55-w0rd:with/odd?chars';
const BASE64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

async function withTransport(
  handler: Parameters<typeof serve>[0],
  body: (t: Transport, server: Served, clock: ReturnType<typeof fakeClock>, trace: string[]) => Promise<void>,
  overrides: Partial<TransportConfig> = {},
): Promise<void> {
  const server = await serve(handler);
  const clock = fakeClock();
  const trace: string[] = [];
  const transport = testTransport(server.url, clock, { user: USER, password: PASSWORD, trace: (line) => trace.push(line), ...overrides });
  try {
    await body(transport, server, clock, trace);
  } finally {
    await transport.close();
    await server.close();
  }
}

/** carectl against a scripted server, with a fake clock. */
async function cliAgainst(url: string, argv: string[], env: Record<string, string> = {}): Promise<RunResult & { slept: number[] }> {
  const clock = fakeClock();
  const result = await runCli(argv, {
    env: { CARECTL_BASE_URL: url, CARECTL_USER: USER, CARECTL_PASSWORD: PASSWORD, ...env },
    now: clock.now,
    sleep: clock.sleep,
  });
  return { ...result, slept: clock.slept };
}

function assertNoCredential(text: string): void {
  for (const secret of [PASSWORD, BASE64, encodeURIComponent(PASSWORD), 'hunter2']) assert.ok(!text.includes(secret), `printed a credential: ${text}`);
}

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

describe('a PATCH that may have been applied says so', () => {
  const patch = (t: Transport): Promise<unknown> =>
    t.request('PATCH', t.url('v1.3/conversations/7'), { body: { status: 'closed', tag_ids: [] }, idempotent: true });

  test('dropped after sending on every attempt: a NetworkError flagged and worded "may have been applied"', async () => {
    await withTransport(
      (req) => req.socket.destroy(),
      async (t, server, _clock, trace) => {
        await assert.rejects(patch(t), (e: unknown) => {
          assert.ok(e instanceof NetworkError && e.maybeSent && mayHaveBeenApplied(e), String(e));
          assert.ok(e.message.includes(MAY_HAVE_BEEN_APPLIED), e.message);
          return true;
        });
        assert.equal(server.hits.length, 4);
        assert.equal(trace.filter((line) => /^ {2}retrying in \d+ ms$/.test(line)).length, 3, trace.join('\n'));
      },
    );
  });

  test('dropped once, then refused by a 503 each time: the first attempt may still have applied it', async () => {
    await withTransport(
      (req, res, hit) => (hit === 1 ? req.socket.destroy() : json(res, 503, { status: 'error', message: 'down' })),
      async (t) => {
        await assert.rejects(
          patch(t),
          (e: unknown) =>
            e instanceof ApiError && e.status === 503 && mayHaveBeenApplied(e) && e.message.startsWith(`down (HTTP 503); ${MAY_HAVE_BEEN_APPLIED}`),
        );
      },
    );
  });

  test('a 504 from a gateway may have been applied; a 503 or 400 alone was not', async () => {
    for (const [status, applied] of [
      [504, true],
      [503, false],
      [400, false],
    ] as const) {
      await withTransport(
        (_req, res) => json(res, status, { status: 'error', message: 'no' }),
        async (t) => {
          await assert.rejects(
            patch(t),
            (e: unknown) => e instanceof ApiError && mayHaveBeenApplied(e) === applied && e.message.includes(MAY_HAVE_BEEN_APPLIED) === applied,
          );
        },
        { retries: 1 },
      );
    }
  });

  test('a GET that fails the same way is a plain failure', async () => {
    await withTransport(
      (req) => req.socket.destroy(),
      async (t) => {
        await assert.rejects(
          t.get(t.url('v1.3/tags')),
          (e: unknown) => e instanceof NetworkError && !mayHaveBeenApplied(e) && !e.message.includes('may have been applied'),
        );
      },
      { retries: 1 },
    );
  });

  test('carectl conversations update: the result row and the summary say the change may have been applied; --verbose shows the retries', async () => {
    const server = await serve((req) => req.socket.destroy());
    try {
      const result = await cliAgainst(server.url, ['--verbose', 'conversations', 'update', '500001', '--status', 'on_hold', '--tags', '']);
      assert.equal(result.code, 1);
      // The row keeps what was sent: it may be the conversation's state now.
      assert.match(result.stdout, /^500001\tfalse\ton_hold\t\[\]\tnetwork\t\tPATCH .*may have been applied/m);
      assert.match(
        result.stderr,
        /^carectl: 1 of 1 updates failed \(first: 500001: PATCH .* may have been applied.*\); 1 of them may have been applied: the update is safe to repeat, run the same command again$/m,
      );
      assert.equal(result.stderr.match(/^> PATCH /gm)?.length, 4, result.stderr);
      assert.equal(result.stderr.match(/^ {2}retrying in \d+ ms$/gm)?.length, 3, result.stderr);
    } finally {
      await server.close();
    }
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

describe('retries span a real hiccup', () => {
  test('carectl with defaults: a 503 without Retry-After is retried 3 times over at least 5 s', async () => {
    const server = await serve((_req, res) => json(res, 503, { status: 'error', message: 'restarting' }));
    try {
      const result = await cliAgainst(server.url, ['tags', 'get', '7001']);
      assert.equal(result.code, 1);
      assert.equal(server.hits.length, 4);
      assert.equal(result.slept.length, 3);
      const total = result.slept.reduce((a, b) => a + b, 0);
      assert.ok(total >= 5000 && total <= 7000, `waited ${result.slept.join(' + ')} ms`);
    } finally {
      await server.close();
    }
  });

  test('the transport with a fixed draw: 0.5 s, 1 s, then the rest of 5 s and its own jitter', async () => {
    for (const [random, waits] of [
      [() => 1, [500, 1000, 5500]],
      [() => 0, [0, 0, 5000]],
    ] as const) {
      await withTransport(
        (_req, res) => json(res, 503, { status: 'error', message: 'down' }),
        async (t, _server, clock) => {
          await assert.rejects(t.get(t.url('v1.3/tags')), ApiError);
          assert.deepEqual(clock.slept, waits);
        },
        { random },
      );
    }
  });

  test('Retry-After is still honoured as asked', async () => {
    await withTransport(
      (_req, res) => json(res, 503, { status: 'error', message: 'down' }, { 'retry-after': '2' }),
      async (t, _server, clock) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), ApiError);
        assert.deepEqual(clock.slept, [2000, 2000, 2000]);
      },
    );
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

describe('a POST that is never repeated keeps its own wording', () => {
  test('dropped after sending: maybeSent and flagged by the same rule as a PATCH, but no "change may have been applied" next to the caller\'s own', async () => {
    await withTransport(
      (req) => req.socket.destroy(),
      async (t) => {
        await assert.rejects(t.request('POST', t.url('v1.1/reports'), { body: { account: 1 }, idempotent: false }), (e: unknown) => {
          assert.ok(e instanceof NetworkError && e.maybeSent && mayHaveBeenApplied(e), String(e));
          assert.ok(!e.message.includes(MAY_HAVE_BEEN_APPLIED), e.message);
          return true;
        });
      },
    );
  });
});
