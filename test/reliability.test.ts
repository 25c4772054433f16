/**
 * Reliability (issue 5): retries of idempotent requests, the report POST sent at most once,
 * resumable lists in every paging style, and a full export under injected faults.
 *
 * The transport is tested against a scripted loopback server (exact statuses, 504, slow and
 * dropped answers); the CLI against the sandbox with its fault injection. Every wait goes
 * through a fake sleep, so nothing here waits for real except the short request timeouts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ApiError, InterruptedError, NetworkError } from '../src/core/errors.js';
import { Transport, type TransportConfig } from '../src/http/transport.js';
import { testTransport } from './scripted-server.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, openSandbox, runCli, type RunResult } from './helpers.js';
import { describeRun, useSandboxShell } from './shell.js';

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

/** One clock for the sandbox and the CLI, so HTTP-date Retry-After values agree with the client. */
const cliClock = fakeClock();
let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox({ conversations: 120, now: cliClock.now });
});
after(() => sandbox.close());
beforeEach(() => {
  sandbox?.setFaults(undefined);
  cliClock.slept.length = 0;
});

const cli = (argv: string[]): Promise<RunResult> => runCli(argv, { sandbox, now: cliClock.now, sleep: cliClock.sleep });
const runInSandbox = cli;
/** The same, with stdout a regular file: writers gather lines and write a page at a time. */
const cliIntoFile = (argv: string[]): Promise<RunResult> => runCli(argv, { sandbox, now: cliClock.now, sleep: cliClock.sleep, stdoutFile: true });
/** A run, and how many writes its stdout received. */
async function countingWrites(argv: string[], stdoutFile: boolean): Promise<RunResult & { writes: number }> {
  let writes = 0;
  const result = await runCli(argv, { sandbox, now: cliClock.now, sleep: cliClock.sleep, stdoutFile, onStdout: () => writes++ });
  return { ...result, writes };
}

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

// ---- resumable lists ----

/** Output that a failure cut short must still be whole lines (ndjson: each one a record). */
function assertWholeLines(stdout: string, format: 'ndjson' | 'tsv'): void {
  if (stdout === '') return;
  assert.ok(stdout.endsWith('\n'), 'output ends with a complete line');
  const lines = stdout.slice(0, -1).split('\n');
  if (format === 'ndjson') for (const line of lines) JSON.parse(line);
  else for (const line of lines) assert.equal(line.split('\t').length, lines[0]!.split('\t').length, `a whole row: ${line}`);
}

/** The tsv header line, when the output starts with one. */
const header = (stdout: string, format: 'ndjson' | 'tsv'): string => (format === 'tsv' ? stdout.slice(0, stdout.indexOf('\n') + 1) : '');

/**
 * Runs `args` clean, then with the list failing hard after `failAfterPages` pages, then resumed
 * with the printed token: the two runs together must be exactly the clean run.
 */
async function assertResumes(args: string[], failAfterPages: number, format: 'ndjson' | 'tsv' = 'ndjson', cli = runInSandbox): Promise<void> {
  const argv = [...args, '-o', format];
  const full = await cli(argv);
  assert.equal(full.code, 0, full.stderr);

  sandbox.setFaults({ failListAfterPages: failAfterPages });
  const mark = sandbox.requests.length;
  const first = await cli([...argv, '--retries', '1']);
  const what = `${args.join(' ')} failing after ${failAfterPages} pages`;
  assert.equal(first.code, 1, what);
  assert.equal(apiRequests(sandbox, mark).filter((r) => r.status === 500).length, 2, `${what}: the failing page was tried twice`);
  assert.match(first.stderr, /^carectl: .*\(HTTP 500\); the list stopped after \d+ records?: to continue, run the same command with --resume \S+$/m);
  const token = /--resume (\S+)/.exec(first.stderr)?.[1];
  assert.ok(token, `${what}: a resume token on stderr`);
  assertWholeLines(first.stdout, format);
  if (failAfterPages > 0) assert.notEqual(first.stdout.slice(header(first.stdout, format).length), '', `${what}: some records came before the failure`);

  sandbox.setFaults(undefined);
  const rest = await cli([...argv, '--resume', token]);
  assert.equal(rest.code, 0, rest.stderr);
  assert.notEqual(rest.stdout, '', `${what}: records remained`);
  // Appended with >>, the two runs make the clean run: one header, no record lost or repeated.
  assert.equal(first.stdout + rest.stdout, full.stdout, `${what}: nothing lost or repeated`);
}

describe('resumable lists: a hard failure, then --resume, gives the clean run exactly', () => {
  test('skip paging (tags, queues)', async () => {
    await assertResumes(['tags', 'list', '--page-size', '10'], 3);
    await assertResumes(['queues', 'list', '--page-size', '7'], 4, 'tsv');
  });

  test('a list that fails before its first record prints no token: the same command starts it again', async () => {
    for (const argv of [
      ['tags', 'list', '-o', 'ndjson'],
      ['queues', 'list', '-o', 'tsv'],
      ['conversations', 'list', '-o', 'csv'],
    ]) {
      sandbox.setFaults({ failListAfterPages: 0 });
      const failed = await cli([...argv, '--retries', '0']);
      sandbox.setFaults(undefined);
      assert.equal(failed.code, 1);
      assert.equal(failed.stdout, '');
      assert.match(failed.stderr, /^carectl: [^\n]*\(HTTP 500\)\n$/);
      assert.doesNotMatch(failed.stderr, /--resume/);
    }
  });

  test('a token holds the cursor, not the whole address', async () => {
    const argv = ['conversations', 'list', '--fields', 'status,tags,author,channels,assigned_to', '-o', 'ndjson', '--page-size', '10'];
    const full = await cli(argv);
    const count = full.stdout.split('\n').length - 1;
    assert.ok(count > 30, `${count} records`);
    const first = await cli([...argv, '--limit', String(count - 3)]);
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    // A keyset cursor inside a slice, with the pair of sort-date bounds it carries (a whole address was 250–330),
    // and the ids of its page's records written, in place of their count.
    const fields = Buffer.from(token, 'base64url').toString().split('|');
    assert.ok(fields.slice(0, 10).join('|').length <= 90 && !fields.join('|').includes('fields'), `${token.length} characters: ${fields.join('|')}`);
    const rest = await cli([...argv, '--resume', token]);
    assert.equal(first.stdout + rest.stdout, full.stdout);
  });

  test('into a regular file, where lines go out a page at a time: the same bytes, one write a page, and a failure resumes exactly', async () => {
    for (const format of ['ndjson', 'tsv'] as const) {
      const argv = ['conversations', 'list', '--fields', 'status,tags', '--page-size', '10', '-o', format];
      const [piped, filed] = [await countingWrites(argv, false), await countingWrites(argv, true)];
      assert.equal(filed.stdout, piped.stdout);
      const records = piped.stdout.split('\n').length - 1 - (format === 'tsv' ? 1 : 0);
      assert.equal(piped.writes, records, 'one write a record into a pipe (the header goes with the first)');
      // Pages of 10 in each of the union's two queries: the second query's first page starts afresh.
      assert.ok(filed.writes <= Math.ceil(records / 10) + 1, `one write a page into a file: ${filed.writes} writes for ${records} records`);
      await assertResumes(['conversations', 'list', '--fields', 'status,tags', '--page-size', '10', '--parallel', '1'], 3, format, cliIntoFile);
    }
  });

  test('offset paging (users)', async () => {
    await assertResumes(['users', 'list', '--page-size', '25'], 2);
    await assertResumes(['users', 'list', '--page-size', '25'], 4, 'tsv');
  });

  test('token paging (annotation-types, annotations)', async () => {
    await assertResumes(['annotation-types', 'list', '--page-size', '4'], 2);
    await assertResumes(['annotations', 'list', '--page-size', '20'], 3, 'tsv');
  });

  test('no paging, in phases (authors list by id chunks)', async () => {
    const ids = sandbox.data.authors.slice(0, 30).map((a) => a.id);
    await assertResumes(['authors', 'list', ...ids, '--page-size', '7'], 2);
    await assertResumes(['authors', 'list', ...ids, '--page-size', '7'], 4, 'tsv');
  });

  test('the two-phase conversation union, failing in the first and in the second phase (one request at a time)', async () => {
    const mark = sandbox.requests.length;
    assert.equal((await cli(['conversations', 'list', '--page-size', '10', '-o', 'ndjson', '--parallel', '1'])).code, 0);
    const pages = apiRequests(sandbox, mark).map((r) => r.url);
    const firstPhase = pages.filter((url) => url.includes('is_priority=true')).length;
    assert.ok(firstPhase >= 2 && pages.length - firstPhase >= 2, 'both phases span several pages');
    for (const failAfter of [1, firstPhase, firstPhase + 1]) await assertResumes(['conversations', 'list', '--page-size', '10', '--parallel', '1'], failAfter);
    await assertResumes(['conversations', 'list', '--page-size', '10', '--parallel', '1'], firstPhase + 1, 'tsv');
  });

  test('--limit prints the same kind of token: batches of the same command add up to the clean run', async () => {
    const list = ['conversations', 'list', '--page-size', '10'];
    const ndjson = await cli([...list, '-o', 'ndjson']);
    const priority = ndjson.stdout.split('\n').filter((line) => line.includes('"is_priority":true')).length;
    // csv batches appended with >> make one file with one header.
    for (const format of ['ndjson', 'csv']) {
      const argv = [...list, '-o', format];
      const full = await cli(argv);
      // One batch that ends inside the first phase, one exactly at its end, one that crosses it.
      for (const limit of [7, priority, priority + 4]) {
        let joined = '';
        let token: string | undefined;
        let batches = 0;
        do {
          const batch = await cli([...argv, '--limit', String(limit), ...(token ? ['--resume', token] : [])]);
          assert.equal(batch.code, 0, batch.stderr);
          joined += batch.stdout;
          token = /^stopped at --limit \d+; .*--resume (\S+)$/m.exec(batch.stderr)?.[1];
          batches++;
        } while (token && batches < 100);
        assert.equal(joined, full.stdout, `${format} --limit ${limit}`);
        assert.equal(batches, Math.ceil(120 / limit), `${format} --limit ${limit}: no empty last batch`);
      }
    }
  });

  test('a csv run continuing another format, or a run without its header, starts with the header', async () => {
    const csv = ['tags', 'list', '--page-size', '10', '-o', 'csv'];
    const full = await cli(csv);
    const header = full.stdout.slice(0, full.stdout.indexOf('\r\n') + 2);
    const fromNdjson = await cli(['tags', 'list', '--page-size', '10', '-o', 'ndjson', '--limit', '3']);
    const fromTsv = await cli(['tags', 'list', '--page-size', '10', '-o', 'tsv', '--limit', '3']);
    const headless = await cli([...csv, '--limit', '3', '--no-header']);
    for (const [what, first] of [
      ['ndjson', fromNdjson],
      ['tsv', fromTsv],
      ['csv --no-header', headless],
    ] as const) {
      const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
      const rest = await cli([...csv, '--resume', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.ok(rest.stdout.startsWith(header), `after ${what}: ${rest.stdout.slice(0, 40)}`);
    }
  });

  test('a resumed run that fails again hands on a token that still knows the header was printed', async () => {
    const argv = ['tags', 'list', '--page-size', '10', '-o', 'csv', '--retries', '0'];
    const full = await cli(argv);
    let joined = '';
    let token: string | undefined;
    for (const failAfterPages of [2, 1, undefined]) {
      sandbox.setFaults(failAfterPages === undefined ? undefined : { failListAfterPages: failAfterPages });
      const run = await cli([...argv, ...(token ? ['--resume', token] : [])]);
      assert.equal(run.code, failAfterPages === undefined ? 0 : 1, run.stderr);
      joined += run.stdout;
      token = /--resume (\S+)$/m.exec(run.stderr)?.[1];
    }
    assert.equal(joined, full.stdout);
    assert.equal(joined.split('\r\n').filter((line) => line.startsWith('id,')).length, 1, 'one header');
  });

  test('a run resumed after --limit asks for pages of its own size, and adds up to the clean run', async () => {
    const argv = ['tags', 'list', '-o', 'ndjson'];
    const full = await cli(argv);
    const first = await cli([...argv, '--limit', '2']);
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    const mark = sandbox.requests.length;
    const rest = await cli([...argv, '--resume', token]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(first.stdout + rest.stdout, full.stdout);
    // The 68 tags left come in pages of 50, not the 34 pages of 2 that the first run's size would take.
    const sizes = apiRequests(sandbox, mark).map((r) => new URL(r.url, 'http://x').searchParams.get('page_size'));
    assert.deepEqual(sizes, ['50', '50']);
  });

  test('authors list continues a --limit run with any --limit, or none', async () => {
    const ids = sandbox.data.authors.slice(0, 5).map((a) => a.id);
    const argv = ['authors', 'list', ...ids, '-o', 'ndjson'];
    const full = await cli(argv);
    const first = await cli([...argv, '--limit', '1']);
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    for (const limit of [[], ['--limit', '10']]) {
      const rest = await cli([...argv, ...limit, '--resume', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(first.stdout + rest.stdout, full.stdout, `resumed with ${limit.join(' ') || 'no --limit'}`);
    }
  });

  test('a list with relative dates, resumed after midnight, continues the same dates', async () => {
    const evening = Date.UTC(2026, 5, 29, 23, 50);
    const nextMorning = evening + 20 * 60_000;
    const argv = ['conversations', 'list', '--newest', '60d..today', '--page-size', '10', '-o', 'ndjson'];
    const full = await runCli(argv, { sandbox, now: () => evening });
    const first = await runCli([...argv, '--limit', '15'], { sandbox, now: () => evening });
    const token = /--resume (\S+)$/m.exec(first.stderr)?.[1] as string;
    const mark = sandbox.requests.length;
    const rest = await runCli([...argv, '--resume', token], { sandbox, now: () => nextMorning });
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(first.stdout + rest.stdout, full.stdout);
    for (const { url } of apiRequests(sandbox, mark)) assert.match(url, /newest_sort_date_gte=2026-04-30&.*newest_sort_date_lt=2026-06-30/, url);
  });

  test('a token from another command is refused before anything is sent', async () => {
    sandbox.setFaults({ failListAfterPages: 1 });
    const failed = await cli(['tags', 'list', '--page-size', '10', '--retries', '0']);
    const token = /--resume (\S+)/.exec(failed.stderr)?.[1] as string;
    sandbox.setFaults(undefined);
    const mark = sandbox.requests.length;
    const result = await cli(['queues', 'list', '--page-size', '10', '--resume', token]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /different command/);
    assert.equal(apiRequests(sandbox, mark).length, 0);
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

describe('the real process with stdout redirected to a file', () => {
  const shell = useSandboxShell();

  test('writes the same bytes as into a pipe (json documents, delimited lines), in parallel and not', async () => {
    for (const format of ['ndjson', 'csv', 'json']) {
      for (const parallel of ['1', '8']) {
        const line = `carectl conversations list --fields status,tags,author -o ${format} --parallel ${parallel}`;
        const [piped, filed] = [await shell().run(`${line} | cat`), await shell().run(`${line} > out && cat out`)];
        assert.equal(piped.code, 0, describeRun(line, piped));
        assert.equal(filed.code, 0, describeRun(line, filed));
        assert.ok(piped.stdout.length > 1000, `${line}: ${piped.stdout.length} bytes`);
        assert.equal(filed.stdout, piped.stdout, line);
      }
    }
  });
});
