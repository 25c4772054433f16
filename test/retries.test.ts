/**
 * Retries: which failures are retried and how long each wait is (src/http/retry.ts), Retry-After,
 * the per-attempt timeout, a POST never sent twice, a PATCH that may have been applied, and the
 * CLI's --retries and --request-timeout; a full export under injected faults.
 *
 * The transport is tested against a scripted loopback server (exact statuses, 504, slow and
 * dropped answers); the CLI against the sandbox with its fault injection. Every wait goes
 * through a fake sleep, so nothing here waits for real except the short request timeouts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { ApiError, InterruptedError, MAY_HAVE_BEEN_APPLIED, mayHaveBeenApplied, NetworkError } from '../src/core/errors.js';
import { Transport, type TransportConfig } from '../src/http/transport.js';
import { json, serve, testTransport } from './scripted-server.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, runCli, sandboxOnClock } from './helpers.js';
import { cliAgainst, withTransport } from './scripted-client.js';
import { isNeverSentError, MIN_RETRY_SPAN_MS, parseRetryAfter, RETRYABLE_STATUSES, type RetryDelayInput, retryDelayMs } from '../src/http/retry.js';

// ---- a scripted server for the transport ----

/** One answer: a status, a dropped connection, or a status after a delay / with Retry-After. */
type Step = number | 'drop' | { status: number; delayMs?: number; retryAfter?: () => string };

interface Scripted {
  url: string;
  /** `closed` settles when the exchange ends: true if the client hung up before the answer went out. */
  hits: Array<{ method: string; body: string; closed: Promise<boolean> }>;
  close(): Promise<void>;
}

/** Answers request n with steps[n] (then 200s); `onRequest` sees each request as it arrives. */
async function scriptedServer(steps: Step[], options: { port?: number; onRequest?: () => void } = {}): Promise<Scripted> {
  const hits: Scripted['hits'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const closed = new Promise<boolean>((resolve) => res.on('close', () => resolve(!res.headersSent)));
      hits.push({ method: req.method ?? '', body, closed });
      options.onRequest?.();
      const step = steps[hits.length - 1] ?? 200;
      if (step === 'drop') return void req.socket.destroy();
      const { status, delayMs = 0, retryAfter } = typeof step === 'number' ? { status: step } : step;
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter && { 'retry-after': retryAfter() }) });
        res.end(JSON.stringify(status < 300 ? { ok: true, hit: hits.length } : { status: 'error', message: `scripted ${status}` }));
      }, delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A transport with a fake clock and a jitter draw of 1 (so every backoff wait is its ceiling). */
function transportTo(baseUrl: string, overrides: Partial<TransportConfig> = {}): { transport: Transport; clock: ReturnType<typeof fakeClock> } {
  const clock = fakeClock();
  return { transport: testTransport(baseUrl, clock, overrides), clock };
}

/** Runs `body` against a scripted server and a transport, closing both afterwards. */
async function scripted(
  steps: Step[],
  body: (t: Transport, server: Scripted, clock: ReturnType<typeof fakeClock>) => Promise<void>,
  overrides: Partial<TransportConfig> = {},
): Promise<void> {
  const server = await scriptedServer(steps);
  const { transport, clock } = transportTo(server.url, overrides);
  try {
    await body(transport, server, clock);
  } finally {
    await transport.close();
    await server.close();
  }
}

const PATCH_BODY = { status: 'on_hold', tag_ids: ['1'] };

describe('transport: which failures are retried', () => {
  for (const status of [429, 500, 502, 503, 504]) {
    test(`GET after ${status} is retried with growing backoff, then succeeds`, async () => {
      await scripted([status, status, 200], async (t, server, clock) => {
        assert.deepEqual(await t.get(t.url('v1.3/tags')), { ok: true, hit: 3 });
        assert.equal(server.hits.length, 3);
        assert.deepEqual(clock.slept, [500, 1000]);
      });
    });
  }

  test('a dropped connection (reset, no answer) is retried for GET', async () => {
    await scripted(['drop', 'drop', 200], async (t, server, clock) => {
      assert.deepEqual(await t.get(t.url('v1.3/tags')), { ok: true, hit: 3 });
      assert.equal(server.hits.length, 3);
      assert.equal(clock.slept.length, 2);
    });
  });

  test('PATCH sets absolute values, so it is retried like GET, with the same body', async () => {
    await scripted([503, 'drop', 200], async (t, server) => {
      await t.request('PATCH', t.url('v1.3/conversations/7'), { body: PATCH_BODY, idempotent: true });
      assert.deepEqual(
        server.hits.map((h) => h.method),
        ['PATCH', 'PATCH', 'PATCH'],
      );
      for (const hit of server.hits) assert.deepEqual(JSON.parse(hit.body), PATCH_BODY);
    });
  });

  for (const status of [400, 401, 403, 404, 405, 409, 422]) {
    test(`${status} is the caller's problem: not retried`, async () => {
      await scripted([status, 200], async (t, server, clock) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => e instanceof ApiError && e.status === status && /scripted/.test(e.message));
        assert.equal(server.hits.length, 1);
        assert.deepEqual(clock.slept, []);
      });
    });
  }

  test('after `retries` retries the last failure is reported', async () => {
    await scripted(
      [503, 503, 503, 200],
      async (t, server, clock) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => e instanceof ApiError && e.status === 503);
        assert.equal(server.hits.length, 3);
        // The last retry waits out the rest of 5 s, and its own jitter on top.
        assert.deepEqual(clock.slept, [500, 5500]);
      },
      { retries: 2 },
    );
  });

  test('retries: 0 sends exactly once', async () => {
    await scripted(
      ['drop', 200],
      async (t, server) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), NetworkError);
        assert.equal(server.hits.length, 1);
      },
      { retries: 0 },
    );
  });

  test('the backoff ceiling stops at the cap', async () => {
    await scripted(
      [500, 500, 500, 500, 500, 200],
      async (t, _server, clock) => {
        await t.get(t.url('v1.3/tags'));
        assert.deepEqual(clock.slept, [500, 1000, 1500, 1500, 1500]);
      },
      { retries: 5, maxRetryWaitMs: 1500 },
    );
  });

  test('the jitter is full: the random draw scales the whole wait', async () => {
    await scripted(
      [500, 500, 200],
      async (t, _server, clock) => {
        await t.get(t.url('v1.3/tags'));
        assert.deepEqual(clock.slept, [0, 0]);
      },
      { random: () => 0 },
    );
  });
});

describe('transport: Retry-After', () => {
  test('seconds and HTTP-dates are waited as asked, instead of the backoff', async () => {
    let now = (): number => 0;
    await scripted(
      [{ status: 429, retryAfter: () => '7' }, { status: 503, retryAfter: () => new Date(now() + 12_000).toUTCString() }, 200],
      async (t, _server, clock) => {
        now = clock.now;
        await t.get(t.url('v1.3/tags'));
        assert.deepEqual(clock.slept, [7000, 12_000]);
      },
    );
  });

  test('a Retry-After beyond the cap fails at once, saying how long and what to do', async () => {
    await scripted([{ status: 429, retryAfter: () => '3600' }, 200], async (t, server, clock) => {
      await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => {
        assert.ok(e instanceof ApiError && e.status === 429);
        assert.match(e.message, /scripted 429/);
        assert.match(e.message, /3600 s/);
        assert.match(e.message, /60 s/);
        assert.match(e.message, /try again later/);
        return true;
      });
      assert.equal(server.hits.length, 1);
      assert.deepEqual(clock.slept, []);
    });
  });
});

describe('transport: per-attempt timeout', () => {
  test('a slow answer times out and is retried', async () => {
    await scripted(
      [{ status: 200, delayMs: 5000 }, 200],
      async (t, server) => {
        assert.deepEqual(await t.get(t.url('v1.3/tags')), { ok: true, hit: 2 });
        assert.equal(server.hits.length, 2);
      },
      { requestTimeoutMs: 250 },
    );
  });

  test('when every attempt is slow, the failure names the limit', async () => {
    await scripted(
      [1, 2, 3].map(() => ({ status: 200, delayMs: 5000 })),
      async (t, server) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), (e: unknown) => e instanceof NetworkError && /no answer within 250 ms/.test(e.message));
        assert.equal(server.hits.length, 3);
        assert.deepEqual(await Promise.all(server.hits.map((hit) => hit.closed)), [true, true, true], 'each attempt was cut at the timeout, before its answer');
      },
      { requestTimeoutMs: 250, retries: 2 },
    );
  });
});

describe('transport: a POST is never sent twice', () => {
  const post = (t: Transport): Promise<unknown> => t.request('POST', t.url('v1.1/reports'), { body: { account: 1 }, idempotent: false });

  test('not after a 5xx (a 503 without Retry-After)', async () => {
    for (const status of [500, 503]) {
      await scripted([status, 201], async (t, server, clock) => {
        await assert.rejects(post(t), (e: unknown) => e instanceof ApiError && e.status === status);
        assert.equal(server.hits.length, 1);
        assert.deepEqual(clock.slept, []);
      });
    }
  });

  test('a 429 (with or without Retry-After) or a 503 with Retry-After was not processed: sent again (issue 35 item 5)', async () => {
    for (const first of [429, { status: 429, retryAfter: () => '2' }, { status: 503, retryAfter: () => '2' }]) {
      await scripted([first, 201], async (t, server) => {
        await post(t);
        assert.equal(server.hits.length, 2);
      });
    }
  });

  test('not after the connection dropped once the request was sent; the error says it may have arrived', async () => {
    await scripted(['drop', 201], async (t, server) => {
      await assert.rejects(post(t), (e: unknown) => e instanceof NetworkError && e.maybeSent);
      assert.equal(server.hits.length, 1);
    });
  });

  test('not after a timeout', async () => {
    await scripted(
      [{ status: 201, delayMs: 5000 }, 201],
      async (t, server) => {
        await assert.rejects(post(t), (e: unknown) => e instanceof NetworkError && e.maybeSent);
        assert.equal(server.hits.length, 1);
      },
      { requestTimeoutMs: 250 },
    );
  });

  test('a refused connection never sent it, so it is retried', async () => {
    const port = await closedPort();
    let server: Scripted | undefined;
    const clock = fakeClock();
    // The service comes up during the first wait: the retry must reach it.
    const sleep: TransportConfig['sleep'] = async (ms, signal) => {
      server ??= await scriptedServer([201], { port });
      await clock.sleep(ms, signal);
    };
    const { transport } = transportTo(`http://127.0.0.1:${port}`, { sleep });
    try {
      assert.deepEqual(await post(transport), { ok: true, hit: 1 });
      assert.equal(clock.slept.length, 1);
      assert.equal(server?.hits.length, 1);
    } finally {
      await transport.close();
      await server?.close();
    }
  });

  test('refused on every attempt: a network error that says nothing was sent', async () => {
    const { transport, clock } = transportTo(`http://127.0.0.1:${await closedPort()}`, { retries: 2 });
    try {
      await assert.rejects(post(transport), (e: unknown) => e instanceof NetworkError && !e.maybeSent && /ECONNREFUSED/.test(e.message));
      assert.equal(clock.slept.length, 2);
    } finally {
      await transport.close();
    }
  });

  test('Ctrl-C while a POST is in flight says it may have reached the service', async () => {
    const controller = new AbortController();
    const server = await scriptedServer([{ status: 201, delayMs: 2000 }], { onRequest: () => controller.abort() });
    const { transport } = transportTo(server.url, { signal: controller.signal });
    try {
      await assert.rejects(post(transport), (e: unknown) => e instanceof InterruptedError && /may have reached the service/.test(e.message));
      assert.equal(server.hits.length, 1);
    } finally {
      await transport.close();
      await server.close();
    }
  });
});

describe('transport: Ctrl-C', () => {
  test('during a retry wait ends with InterruptedError, without another attempt', async () => {
    const controller = new AbortController();
    const sleep: TransportConfig['sleep'] = async (_ms, signal) => {
      controller.abort();
      if (signal?.aborted) throw signal.reason;
    };
    await scripted(
      [503, 200],
      async (t, server) => {
        await assert.rejects(t.get(t.url('v1.3/tags')), InterruptedError);
        assert.equal(server.hits.length, 1);
      },
      { signal: controller.signal, sleep },
    );
  });
});

// ---- the CLI against the sandbox ----

let sandbox: Sandbox;
const { clock: cliClock, cli } = sandboxOnClock({ conversations: 120 }, (opened) => (sandbox = opened));

describe('carectl: --retries, --request-timeout, Retry-After', () => {
  test('--retries N makes N+1 attempts (default 3), then exits 1 with the service message', async () => {
    for (const [flags, attempts] of [
      [[], 4],
      [['--retries', '0'], 1],
      [['--retries', '5'], 6],
    ] as const) {
      sandbox.setFaults({ rate: 1, kinds: ['503'] });
      const mark = sandbox.requests.length;
      cliClock.slept.length = 0;
      const result = await cli(['tags', 'get', '1', ...flags]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /^carectl: Service unavailable \(injected fault\) \(HTTP 503\)$/m);
      assert.equal(apiRequests(sandbox, mark).length, attempts, flags.join(' '));
      assert.equal(cliClock.slept.length, attempts - 1);
      cliClock.slept.slice(0, -1).forEach((ms, i) => assert.ok(ms >= 0 && ms <= 500 * 2 ** i, `wait ${i}: ${ms}`));
      // The retries span at least 5 s in all, whatever the jitter drew.
      if (attempts > 1) assert.ok(cliClock.slept.reduce((a, b) => a + b, 0) >= 5000, cliClock.slept.join(','));
    }
  });

  test('--retries outside 0-10 is a usage error and sends nothing', async () => {
    const mark = sandbox.requests.length;
    const result = await cli(['tags', 'get', '1', '--retries', '11']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--retries/);
    assert.equal(apiRequests(sandbox, mark).length, 0);
  });

  test('a 404 is not retried', async () => {
    const mark = sandbox.requests.length;
    const result = await cli(['tags', 'get', '999999']);
    assert.equal(result.code, 4);
    assert.equal(apiRequests(sandbox, mark).length, 1);
    assert.deepEqual(cliClock.slept, []);
  });

  test('Retry-After in seconds is waited exactly', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['429'], retryAfterSeconds: 2 });
    const result = await cli(['tags', 'get', '1', '--retries', '2']);
    assert.equal(result.code, 1);
    assert.deepEqual(cliClock.slept, [2000, 2000]);
  });

  test('Retry-After as an HTTP-date is waited until (to its one-second precision)', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['429'], retryAfter: 'date', retryAfterSeconds: 5 });
    const result = await cli(['tags', 'get', '1', '--retries', '2']);
    assert.equal(result.code, 1);
    assert.equal(cliClock.slept.length, 2);
    for (const ms of cliClock.slept) assert.ok(ms > 4000 && ms <= 5000, `waited ${ms} ms`);
  });

  test('a Retry-After beyond the cap fails at once with a clear message', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['429'], retryAfterSeconds: 3600 });
    const mark = sandbox.requests.length;
    const result = await cli(['tags', 'get', '1']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /HTTP 429.*3600 s.*try again later/);
    assert.equal(apiRequests(sandbox, mark).length, 1);
    assert.deepEqual(cliClock.slept, []);
  });

  test('--request-timeout bounds each attempt', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 5000 });
    const mark = sandbox.requests.length;
    const result = await cli(['tags', 'get', '1', '--request-timeout', '200ms', '--retries', '2']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^carectl: GET .*\/v1\.3\/tags\/1 failed: no answer within 200 ms$/m);
    // Status 0: carectl hung up before the sandbox answered; no attempt waited for the slow answer.
    assert.deepEqual(
      apiRequests(sandbox, mark).map((r) => r.status),
      [0, 0, 0],
    );
  });

  test('conversations update retries its PATCH', async () => {
    const id = sandbox.data.conversations[10]!.id;
    sandbox.setFaults({ rate: 1, kinds: ['502'] });
    const mark = sandbox.requests.length;
    const result = await cli(['conversations', 'update', id, '--status', 'on_hold', '--tags', '', '--retries', '2']);
    assert.equal(result.code, 1);
    const patches = apiRequests(sandbox, mark).filter((r) => r.method === 'PATCH');
    assert.equal(patches.length, 3);
    assert.ok(patches.every((p) => p.status === 502 && p.body === patches[0]!.body));
  });
});

describe('carectl reports create: the POST is sent once', () => {
  const account = (): string => String(sandbox.data.accounts[0]!.id);

  test('a connection dropped after the body was sent: exit 1, one POST, and a pointer to reports list', async () => {
    for (const wait of [[], ['--wait']]) {
      sandbox.setFaults({ dropPostAfterBody: true });
      const mark = sandbox.requests.length;
      const result = await cli(['reports', 'create', '--account', account(), '--from', '7d', '--to', 'yesterday', '--retries', '5', ...wait]);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /may have been created/);
      assert.match(result.stderr, new RegExp(`carectl reports list --account ${account()}`));
      assert.equal(apiRequests(sandbox, mark).filter((r) => r.method === 'POST').length, 1);
      assert.equal(apiRequests(sandbox, mark).length, 1);
      assert.deepEqual(cliClock.slept, []);
    }
  });

  test('a 503 on the POST is not retried', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['503'] });
    const mark = sandbox.requests.length;
    const result = await cli(['reports', 'create', '--account', account(), '--from', '7d', '--to', 'yesterday']);
    assert.equal(result.code, 1);
    assert.equal(apiRequests(sandbox, mark).length, 1);
  });

  test('connection refused is retried: nothing was sent, and the message does not suggest otherwise', async () => {
    const port = await closedPort();
    const result = await runCli(['reports', 'create', '--account', '1001', '--from', '7d', '--to', 'yesterday', '--retries', '2'], {
      env: { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' },
      now: cliClock.now,
      sleep: cliClock.sleep,
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /ECONNREFUSED/);
    assert.doesNotMatch(result.stderr, /may have been created/);
    assert.equal(cliClock.slept.length, 2);
  });
});

describe('a full export under 25% injected faults', () => {
  test('conversations list -o ndjson returns every record exactly once', async () => {
    const argv = ['conversations', 'list', '-o', 'ndjson', '--page-size', '10'];
    const clean = await cli(argv);
    assert.equal(clean.code, 0);
    const ids = clean.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id);
    assert.equal(new Set(ids).size, 120);

    for (const seed of [1, 2, 3]) {
      // One request at a time, each faulted request is followed by one wait of the fake sleep.
      sandbox.setFaults({ rate: 0.25, seed, slowMs: 5 });
      cliClock.slept.length = 0;
      const mark = sandbox.requests.length;
      const result = await cli([...argv, '--retries', '10', '--parallel', '1']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, clean.stdout, `seed ${seed}`);
      const faulted = apiRequests(sandbox, mark).filter((r) => r.status !== 200);
      assert.ok(faulted.length >= 2, `seed ${seed}: faults were injected (${faulted.length})`);
      assert.equal(cliClock.slept.length, faulted.length);
      // With requests in parallel, slices and all: the same records in the same order.
      sandbox.setFaults({ rate: 0.25, seed, slowMs: 5 });
      const parallel = await cli([...argv, '--retries', '10', '--oldest', '2025-06-01..2026-07-31']);
      sandbox.setFaults(undefined);
      const cleanRange = await cli([...argv, '--oldest', '2025-06-01..2026-07-31', '--parallel', '1']);
      assert.equal(parallel.code, 0, parallel.stderr);
      assert.equal(parallel.stdout, cleanRange.stdout, `seed ${seed}, in parallel`);
    }
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

const NOW = Date.UTC(2026, 5, 30, 12, 0, 0);
const CAP = 60_000;

function delay(overrides: Partial<RetryDelayInput>): number | 'too-long' {
  return retryDelayMs({ attempt: 0, retryAfter: undefined, now: NOW, capMs: CAP, random: () => 0.5, ...overrides });
}

describe('RETRYABLE_STATUSES', () => {
  test('throttling and transient server errors only', () => {
    assert.deepEqual([...RETRYABLE_STATUSES].sort(), [429, 500, 502, 503, 504]);
    for (const status of [400, 401, 403, 404, 405, 409, 422, 501]) assert.equal(RETRYABLE_STATUSES.has(status), false, String(status));
  });
});

describe('retryDelayMs without Retry-After: exponential backoff with full jitter', () => {
  test('the ceiling doubles with each attempt from 500 ms', () => {
    const ceilings = [0, 1, 2, 3, 4].map((attempt) => delay({ attempt, random: () => 1 }));
    assert.deepEqual(ceilings, [500, 1000, 2000, 4000, 8000]);
  });

  test('full jitter: anywhere from 0 to the ceiling, as the random draw says', () => {
    assert.equal(delay({ attempt: 2, random: () => 0 }), 0);
    assert.equal(delay({ attempt: 2, random: () => 0.25 }), 500);
    assert.equal(delay({ attempt: 2, random: () => 0.5 }), 1000);
  });

  test('the cap bounds the ceiling however many attempts were made', () => {
    assert.equal(delay({ attempt: 10, random: () => 1 }), CAP);
    assert.equal(delay({ attempt: 30, random: () => 1 }), CAP);
    assert.equal(delay({ attempt: 10, random: () => 1, capMs: 5000 }), 5000);
  });
});

describe('retryDelayMs: the waits of the default 3 retries come to at least 5 s', () => {
  /** The waits of `retries` retries that all fail, with a fixed random draw. */
  function schedule(retries: number, random: () => number, capMs = CAP): number[] {
    const waits: number[] = [];
    for (let attempt = 0; attempt < retries; attempt++) {
      const wait = delay({ attempt, retries, waitedMs: waits.reduce((a, b) => a + b, 0), random, capMs });
      assert.equal(typeof wait, 'number');
      waits.push(wait as number);
    }
    return waits;
  }
  const sum = (waits: number[]): number => waits.reduce((a, b) => a + b, 0);

  test('the last retry makes up what the jittered waits before it fell short of 5 s, plus its own jitter', () => {
    assert.equal(MIN_RETRY_SPAN_MS, 5000);
    assert.deepEqual(
      schedule(3, () => 0),
      [0, 0, 5000],
    );
    assert.deepEqual(
      schedule(3, () => 1),
      [500, 1000, 5500],
    );
    assert.deepEqual(
      schedule(3, () => 0.5),
      [250, 500, 5250],
    );
  });

  test('whatever the draws, 3 retries wait 5 s or more in all, and at most 7 s', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let run = 0; run < 200; run++) {
      const total = sum(schedule(3, random));
      assert.ok(total >= 5000 && total <= 7000, String(total));
    }
  });

  test('one retry waits the 5 s itself; more retries than needed add nothing to reach it', () => {
    assert.deepEqual(
      schedule(1, () => 0),
      [5000],
    );
    assert.deepEqual(
      schedule(6, () => 1),
      [500, 1000, 2000, 4000, 8000, 16_000],
    );
  });

  test('the cap bounds the last wait too', () => {
    assert.deepEqual(
      schedule(3, () => 0, 2000),
      [0, 0, 2000],
    );
  });

  test('without `retries` no wait is taken for the last', () => {
    assert.equal(delay({ attempt: 2, random: () => 0 }), 0);
  });
});

describe('retryDelayMs with Retry-After', () => {
  test('delta-seconds are waited exactly, without jitter', () => {
    assert.equal(delay({ retryAfter: '7', random: () => 0 }), 7000);
    assert.equal(delay({ retryAfter: '0' }), 0);
    assert.equal(delay({ retryAfter: ' 3 ', attempt: 5 }), 3000);
  });

  test('an HTTP-date is waited until', () => {
    assert.equal(delay({ retryAfter: new Date(NOW + 42_000).toUTCString() }), 42_000);
    assert.equal(delay({ retryAfter: 'Tue, 30 Jun 2026 12:00:05 GMT' }), 5000);
  });

  test('an HTTP-date in the past means: retry now', () => {
    assert.equal(delay({ retryAfter: new Date(NOW - 10_000).toUTCString() }), 0);
  });

  test('a wait up to the cap is honoured; beyond it the answer is too-long', () => {
    assert.equal(delay({ retryAfter: '60' }), 60_000);
    assert.equal(delay({ retryAfter: '61' }), 'too-long');
    assert.equal(delay({ retryAfter: '3600' }), 'too-long');
    assert.equal(delay({ retryAfter: new Date(NOW + 2 * 3600_000).toUTCString() }), 'too-long');
  });

  test('a Retry-After that is neither form falls back to the backoff', () => {
    for (const value of ['soon', '', '1.5', '-5', '12abc']) {
      assert.equal(delay({ retryAfter: value, attempt: 1, random: () => 1 }), 1000, JSON.stringify(value));
    }
  });
});

describe('parseRetryAfter', () => {
  test('seconds and dates to milliseconds; anything else is undefined', () => {
    assert.equal(parseRetryAfter(undefined, NOW), undefined);
    assert.equal(parseRetryAfter('120', NOW), 120_000);
    assert.equal(parseRetryAfter(new Date(NOW + 1000).toUTCString(), NOW), 1000);
    // Numbers that are not delta-seconds must not be read as dates (V8 parses "1.5" as 2001-01-05).
    assert.equal(parseRetryAfter('1.5', NOW), undefined);
    assert.equal(parseRetryAfter('-5', NOW), undefined);
    assert.equal(parseRetryAfter('2', NOW + 1), 2000);
  });
});

describe('isNeverSentError', () => {
  const withCode = (code: string): Error => Object.assign(new Error(code), { code });

  test('failures before a byte left: refused, unresolvable, unreachable, connect timeout', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']) {
      assert.equal(isNeverSentError(withCode(code)), true, code);
    }
  });

  test('the code may sit on the cause (fetch-style wrapping)', () => {
    assert.equal(isNeverSentError(new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') })), true);
  });

  test('failures after the request may have arrived are not never-sent', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'EPIPE']) {
      assert.equal(isNeverSentError(withCode(code)), false, code);
    }
    assert.equal(isNeverSentError(new DOMException('timed out', 'TimeoutError')), false);
    assert.equal(isNeverSentError(undefined), false);
  });
});
