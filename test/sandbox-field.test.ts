/**
 * The sandbox rehearses the field: latency on every API reply, a limit on requests in flight
 * (429 past it), api/1 on a listener of its own, and the conversations' keyset paging links.
 * Everything runs over real HTTP on loopback against a sandbox started in-process on port 0.
 */
import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, request } from 'node:http';
import { describe, test } from 'node:test';
import { type Sandbox, type SandboxOptions, startSandbox } from '../src/sandbox/index.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const ANCHOR = '2024-06-30';
const NOON = Date.parse(`${ANCHOR}T12:00:00Z`);

function authHeader(sandbox: Sandbox, password = sandbox.password): string {
  return `Basic ${Buffer.from(`${sandbox.user}:${password}`).toString('base64')}`;
}

interface Answer {
  status: number;
  headers: Headers;
  body: Json;
  /** Milliseconds from sending to the whole reply read. */
  elapsed: number;
}

/** path is relative to baseUrl unless it is absolute. */
async function call(sandbox: Sandbox, path: string, init: { auth?: boolean; signal?: AbortSignal } = {}): Promise<Answer> {
  const headers = new Headers();
  if (init.auth !== false) headers.set('authorization', authHeader(sandbox));
  const started = performance.now();
  const response = await fetch(path.startsWith('http') ? path : sandbox.baseUrl + path, { headers, ...(init.signal && { signal: init.signal }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text), elapsed: performance.now() - started };
}

function assertError(answer: Answer, status: number, message?: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(answer.body).sort(), ['message', 'status']);
  assert.equal(answer.body.status, 'error');
  assert.equal(typeof answer.body.message, 'string');
  if (message) assert.match(answer.body.message, message);
}

async function withSandbox(options: SandboxOptions, run: (sandbox: Sandbox) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox({ anchor: ANCHOR, now: () => NOON, ...options });
  try {
    await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

/** Resolves once the sandbox has received `count` requests in all (they are recorded on arrival). */
async function arrivals(sandbox: Sandbox, count: number): Promise<void> {
  for (let tries = 0; sandbox.requests.length < count; tries++) {
    assert.ok(tries < 2000, `the sandbox received ${sandbox.requests.length} of ${count} requests`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Held {
  /** Ends the request's body: the sandbox then answers it. */
  release(): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>;
  /** Gives up: closes the connection without ever finishing the request. */
  abandon(): void;
}

/**
 * A GET whose headers are sent and whose (chunked) body is left open: the sandbox has it in
 * flight, and cannot answer it, until release(). No timing is involved.
 */
function hold(sandbox: Sandbox, path: string, base = sandbox.baseUrl): Held {
  const outgoing = request(base + path, { agent: false, headers: { authorization: authHeader(sandbox), 'transfer-encoding': 'chunked' } });
  const answer = new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    outgoing.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
  });
  answer.catch(() => undefined);
  outgoing.flushHeaders();
  return {
    release: () => {
      outgoing.end();
      return answer;
    },
    abandon: () => void outgoing.destroy(),
  };
}

/** Resolves once the request recorded at `index` has its reply finished (its status set). */
async function finished(sandbox: Sandbox, index: number): Promise<void> {
  for (let tries = 0; sandbox.requests[index]?.status === 0 || sandbox.requests[index] === undefined; tries++) {
    assert.ok(tries < 2000, `request ${index} is still unanswered`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setImmediate(resolve));
}

describe('sandbox latency', () => {
  test('every reply of the API listener comes no sooner than latencyMs: lists, records, errors', async () => {
    const latencyMs = 250;
    await withSandbox({ latencyMs }, async (sandbox) => {
      const answers = [
        await call(sandbox, '/v1.3/tags?page_size=3'),
        await call(sandbox, '/v1.3/conversations?is_priority=true&page_size=2'),
        await call(sandbox, '/api/1/annotation-types'),
        await call(sandbox, '/v1.3/tags', { auth: false }),
        await call(sandbox, '/v1.3/tags/no-such-tag'),
      ];
      assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200, 401, 404]);
      for (const answer of answers) assert.ok(answer.elapsed >= latencyMs, `a reply came after ${answer.elapsed.toFixed(1)} ms`);
    });
  });

  test('concurrent requests each wait the latency, on real timers even with an injected clock', async () => {
    // The injected clock stands still (now: () => NOON): the latency runs on real timers all the same.
    await withSandbox({ latencyMs: 200 }, async (sandbox) => {
      const answers = await Promise.all([1, 2, 3].map(() => call(sandbox, '/v1.3/queues?page_size=1')));
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        assert.ok(answer.elapsed >= 200, `a reply came after ${answer.elapsed.toFixed(1)} ms`);
      }
      assert.deepEqual(sandbox.requests.map((r) => r.status), [200, 200, 200]);
    });
  });

  test('close() does not wait for delayed replies: the pending request is cut off', { timeout: 20_000 }, async () => {
    const sandbox = await startSandbox({ anchor: ANCHOR, latencyMs: 600_000 });
    const pending = call(sandbox, '/v1.3/tags').then(
      () => 'answered',
      () => 'cut off',
    );
    await arrivals(sandbox, 1);
    await sandbox.close();
    assert.equal(await pending, 'cut off');
    assert.equal(sandbox.requests[0]!.status, 0, 'logged as not answered');
  });
});

describe('sandbox rate limit', () => {
  test('429 with Retry-After: 1 and the error body exactly while more than N requests are in flight, none at or below N', async () => {
    await withSandbox({ rateLimit: 3 }, async (sandbox) => {
      const held = [hold(sandbox, '/v1.3/tags?page_size=1'), hold(sandbox, '/v1.3/queues?page_size=1'), hold(sandbox, '/v1.3/teams?page_size=1')];
      await arrivals(sandbox, 3);
      // Three in flight: a fourth is one too many, every time.
      for (const path of ['/v1.3/tags', '/v1.1/reports?page_size=1', '/v1.3/tags', '/v1.3/no-such-resource']) {
        const refused = await call(sandbox, path);
        assertError(refused, 429, /too many/i);
        assert.equal(refused.headers.get('retry-after'), '1');
      }
      // One of the three answered: two in flight, so a third (this one) is within the limit.
      const first = await held[0]!.release();
      assert.equal(first.status, 200, first.body);
      await finished(sandbox, 0);
      assert.equal((await call(sandbox, '/v1.3/tags?page_size=2')).status, 200);
      // Three in flight again (two held, one more held): the next is refused.
      held.push(hold(sandbox, '/v1.3/tags?page_size=4'));
      await arrivals(sandbox, 9);
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 429);
      for (const one of held.slice(1)) assert.equal((await one.release()).status, 200);
      for (let index = 0; index < sandbox.requests.length; index++) await finished(sandbox, index);
      // All done: nothing is in flight any more, so requests one after another all pass.
      for (let round = 0; round < 5; round++) assert.equal((await call(sandbox, '/v1.3/tags?page_size=1')).status, 200);
      // The 429s are logged as such, so a bench can count their share.
      const statuses = sandbox.requests.map((r) => r.status);
      assert.deepEqual(statuses.filter((status) => status === 429).length, 5);
      assert.deepEqual(statuses.filter((status) => status === 200).length, 10);
      assert.ok(sandbox.requests.every((r) => r.listener === 'api'));
    });
  });

  test('latency counts as in flight: a request arriving during another one\'s delay is refused, after the delay too', async () => {
    const latencyMs = 800;
    await withSandbox({ rateLimit: 1, latencyMs }, async (sandbox) => {
      const first = call(sandbox, '/v1.3/tags?page_size=1');
      await arrivals(sandbox, 1);
      const second = await call(sandbox, '/v1.3/tags?page_size=1');
      assertError(second, 429);
      assert.equal(second.headers.get('retry-after'), '1');
      assert.ok(second.elapsed >= latencyMs, 'the 429 is a reply like any other: it comes after the latency');
      assert.equal((await first).status, 200);
      await finished(sandbox, 1);
      assert.equal((await call(sandbox, '/v1.3/tags?page_size=1')).status, 200);
      assert.deepEqual(sandbox.requests.map((r) => r.status), [200, 429, 200]);
    });
  });

  test('a burst of concurrent requests: the first N to arrive are served, the rest get 429', async () => {
    await withSandbox({ rateLimit: 2, latencyMs: 1000 }, async (sandbox) => {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => call(sandbox, `/v1.3/tags?page_size=${index + 1}`)));
      const byUrl = new Map(answers.map((answer, index) => [`/v1.3/tags?page_size=${index + 1}`, answer.status]));
      // Arrival order is the log's order, whatever order fetch sent them in.
      assert.deepEqual(sandbox.requests.map((r) => byUrl.get(r.url)), [200, 200, 429, 429, 429, 429]);
      assert.deepEqual(sandbox.requests.map((r) => r.status), [200, 200, 429, 429, 429, 429]);
    });
  });

  test('a client that gives up on a request frees its place', async () => {
    await withSandbox({ rateLimit: 2 }, async (sandbox) => {
      const held = [hold(sandbox, '/v1.3/tags'), hold(sandbox, '/v1.3/queues')];
      await arrivals(sandbox, 2);
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 429);
      held[0]!.abandon();
      // The sandbox learns of the closed connection on its own time: ask until it has (bounded).
      let status = 429;
      for (let tries = 0; status === 429 && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = (await call(sandbox, '/v1.3/tags')).status;
      }
      assert.equal(status, 200);
      assert.equal((await held[1]!.release()).status, 200);
      assert.equal(sandbox.requests[0]!.status, 0, 'the abandoned request is logged as not answered');
    });
  });

  test('refuses a rate limit below 1 and a negative latency', async () => {
    await assert.rejects(startSandbox({ rateLimit: 0 }), RangeError);
    await assert.rejects(startSandbox({ rateLimit: 1.5 }), RangeError);
    await assert.rejects(startSandbox({ latencyMs: -1 }), RangeError);
  });
});
