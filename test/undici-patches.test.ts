/**
 * Where carectl reaches into undici's internals (undici is pinned to an exact version), each
 * reach fails loudly when a bump of the pin leaves it without the shape it was written for. What
 * each patch is for is tested where it shows: a 100 Continue read past in
 * test/interim-replies.test.ts, a pool kept after a disconnect in test/connections.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { Socket, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Dispatcher } from 'undici';
import { readingInterimReplies } from '../src/http/interim.js';
import { lastingPools } from '../src/http/pools.js';
import { loadUndici, UndiciPatchError } from '../src/http/undici.js';
import { fakeClock } from './helpers.js';
import { testTransport } from './scripted-server.js';

const requireFromProject = createRequire(new URL('../../package.json', import.meta.url));

interface UndiciParts {
  UNDICI_PARTS: Record<string, string>;
  UNDICI_LAZY_PARTS: Record<string, string>;
  UNDICI_DISPATCHER: string;
  UNDICI_API: string;
}

test("the files the bundle takes from deep inside undici/lib are the parts of those names undici's index exports", async () => {
  const parts = (await import(new URL('../../scripts/undici-parts.mjs', import.meta.url).href)) as UndiciParts;
  const index = requireFromProject('undici') as Record<string, unknown> & { Dispatcher: { prototype: Record<string, unknown> } };
  const named = { ...parts.UNDICI_PARTS, ...parts.UNDICI_LAZY_PARTS };
  assert.deepEqual(Object.keys(named).sort(), ['Agent', 'Client', 'EnvHttpProxyAgent', 'Pool', 'buildConnector']);
  for (const [name, path] of Object.entries(named)) assert.equal(requireFromProject(path), index[name], `${path} is undici's ${name}`);
  assert.equal(requireFromProject(parts.UNDICI_DISPATCHER), index.Dispatcher);
  const api = requireFromProject(parts.UNDICI_API) as Record<string, unknown>;
  assert.ok(typeof api.request === 'function', `${parts.UNDICI_API} holds request, which carectl sends with`);
  for (const [name, method] of Object.entries(api)) assert.equal(index.Dispatcher.prototype[name], method, `${name} is on every dispatcher`);
});

test('a connection whose socket holds no HTTP/1 parser where undici 7 keeps it fails with an UndiciPatchError naming nodejs/undici#197', () => {
  let destroyedWith: unknown;
  const socket = { destroy: (err: unknown) => (destroyedWith = err) } as unknown as Socket;
  let handed: unknown;
  const connect = readingInterimReplies((_options, callback) => callback(null, socket));
  connect({ hostname: '127.0.0.1', host: '127.0.0.1', protocol: 'http:', port: '80' }, (...opened) => (handed = opened[1]));
  assert.equal(handed, socket, 'undici got the socket');
  assert.ok(destroyedWith instanceof UndiciPatchError);
  assert.equal(
    destroyedWith.message,
    "undici is not in the shape carectl's patch for a 100 Continue expects (nodejs/undici#197, src/http/interim.ts): the connection's socket has no symbol 'parser'; check the patch against this undici version",
  );
});

test("an Agent's pool that nothing listens to for disconnects fails its first request with an UndiciPatchError naming nodejs/undici#5022", async () => {
  const undici = await loadUndici();
  const factory = lastingPools(undici, { timeoutMs: 1000, signal: new AbortController().signal });
  // One connection is undici's Client (--parallel 1, report downloads), more carectl's OriginPool.
  for (const connections of [1, 2]) {
    const pool = factory('http://127.0.0.1:9', { connections });
    const request = (): boolean => pool.dispatch({ origin: 'http://127.0.0.1:9', path: '/', method: 'GET' }, {} as Dispatcher.DispatchHandler);
    assert.throws(request, (err: Error) => {
      assert.ok(err instanceof UndiciPatchError);
      assert.equal(
        err.message,
        "undici is not in the shape carectl's patch for pools that outlast a disconnect expects (nodejs/undici#5022, src/http/pools.ts): the Agent does not listen for disconnect or connectionError; check the patch against this undici version",
      );
      return true;
    });
    await pool.close();
  }
});

/** A server on port 0 that counts the requests it gets. */
async function countingServer(): Promise<{ url: string; requests: () => number; close: () => void }> {
  let requests = 0;
  const server = createServer((_req, res) => (requests++, res.end('{}')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests, close: () => server.close() };
}

/** A lookup through a transport of one connection fails at once with the patch's error: nothing sent, no wait for a retry. */
async function failsAtOnce(upstream: RegExp): Promise<void> {
  const server = await countingServer();
  const clock = fakeClock();
  const transport = testTransport(server.url, clock, { connections: 1 });
  try {
    await assert.rejects(transport.get(new URL(`${server.url}/v1.3/tags/1`)), (err: Error) => err instanceof UndiciPatchError && upstream.test(err.message));
    assert.deepEqual([server.requests(), clock.slept], [0, []]);
  } finally {
    await transport.close();
    server.close();
  }
}

test('a connection without the parser fails its request at once: not retried, nothing sent', async () => {
  // undici's sockets as a version that keeps its parser elsewhere would leave them.
  const symbolsOf = Object.getOwnPropertySymbols;
  Object.getOwnPropertySymbols = (value: object) => symbolsOf(value).filter((symbol) => !(value instanceof Socket && symbol.description === 'parser'));
  try {
    await failsAtOnce(/nodejs\/undici#197/);
  } finally {
    Object.getOwnPropertySymbols = symbolsOf;
  }
});

test('an Agent that does not listen to its pools fails the request at once: not retried, nothing sent', async () => {
  const { kDispatch } = requireFromProject('undici/lib/core/symbols.js') as { kDispatch: symbol };
  type Deaf = Record<symbol, (...args: unknown[]) => Dispatcher>;
  const agent = (requireFromProject('undici') as { Agent: { prototype: Deaf } }).Agent.prototype;
  const dispatching = agent[kDispatch]!;
  // An Agent that makes its pools as undici 7's does but no longer listens to them.
  agent[kDispatch] = function (this: Deaf, ...args: unknown[]) {
    const own = (description: string): symbol => Object.getOwnPropertySymbols(this).find((symbol) => symbol.description === description)!;
    const [options, handler] = args as [Dispatcher.DispatchOptions & { origin: string }, Dispatcher.DispatchHandler];
    return this[own('factory')]!(options.origin, this[own('options')]).dispatch(options, handler) as unknown as Dispatcher;
  };
  try {
    await failsAtOnce(/nodejs\/undici#5022/);
  } finally {
    agent[kDispatch] = dispatching;
  }
});
