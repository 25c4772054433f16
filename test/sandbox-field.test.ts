/**
 * The sandbox rehearses the field: latency on every API reply, a limit on requests in flight
 * (429 past it), api/1 on a listener of its own, and the conversations' keyset paging links.
 * Everything runs over real HTTP on loopback against a sandbox started in-process on port 0.
 */
import assert from 'node:assert/strict';
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
