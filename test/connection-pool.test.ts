/**
 * The connection pool's rule for an idle connection while another waits for its first answer
 * (src/http/connection-pool.ts), on the pool's own clock: kept while the waiting one has waited
 * less than twice the last answer's time, so the command's next request, sent once its page is
 * decoded, finds it open and the waiting one's answer proves the server serves both; closed once
 * it has waited that long, so a server that serves one connection at a time serves it. The old
 * rule closed it a turn of the event loop after its answer: at a steady two in flight, every
 * request then opened a connection of its own (field test).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { after, beforeEach, test } from 'node:test';
import type { Dispatcher } from 'undici';
import { OriginPool } from '../src/http/connection-pool.js';
import { loadUndici } from '../src/http/undici.js';

/** Answers `/now` at once; holds each other request until the test releases its path. */
let connections = 0;
const held = new Map<string, ServerResponse>();
let arrivedHeld: () => void = () => undefined;
const release = (path: string): void => {
  held.get(path)!.end(path);
  held.delete(path);
};
/** Resolves once `count` requests are held. */
const holding = (count: number): Promise<void> =>
  new Promise((resolve) => {
    arrivedHeld = () => held.size >= count && resolve();
    arrivedHeld();
  });

const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
  if (req.url === '/now') return void res.end('/now');
  held.set(req.url!, res);
  arrivedHeld();
});
server.on('connection', () => connections++);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
after(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

let time = 0;
let lines: string[] = [];
let agent: Dispatcher;
beforeEach(async () => {
  const undici = await loadUndici();
  time = 0;
  lines = [];
  connections = 0;
  const now = (): number => time;
  agent = new undici.Agent({
    factory: (at, options) =>
      new OriginPool(
        () => new undici.Client(at, options),
        8,
        (line) => lines.push(line),
        now,
      ) as unknown as Dispatcher,
  });
});

const get = async (path: string): Promise<string> => {
  const reply = await agent.request({ origin, path, method: 'GET' });
  return reply.body.text();
};
/** A request on each of two connections, sent at 0 ms on the pool's clock; the first answered at 10 ms, the other waiting. */
async function oneAnsweredOneWaiting(): Promise<{ waiting: Promise<string> }> {
  const waiting = get('/waiting');
  const first = get('/first');
  await holding(2);
  time = 10;
  release('/first');
  assert.equal(await first, '/first');
  return { waiting };
}

/** Against a hang: a pool that never closes (or never answers) would leave these waiting for good. */
const GUARD = { timeout: 30_000 };

const closes = (): string[] => lines.filter((line) => line.startsWith('  connections: closed an idle one'));

test(
  'an idle connection stays open while the waiting one has waited less than twice the last answer: the next request reuses it, and the waiting one proves the server serves two',
  GUARD,
  async () => {
    const { waiting } = await oneAnsweredOneWaiting();
    time = 12;
    // The command decodes the page: several turns of the event loop before its next request.
    for (let i = 0; i < 20; i++) await turn();
    const next = get('/next');
    await holding(2);
    release('/waiting');
    assert.equal(await waiting, '/waiting');
    release('/next');
    assert.equal(await next, '/next');
    assert.deepEqual(closes(), []);
    // Proven: two at once from here on, each on a connection already open.
    await Promise.all([get('/now'), get('/now')]);
    await Promise.all([get('/now'), get('/now')]);
    assert.deepEqual({ connections, closed: closes() }, { connections: 2, closed: [] });
    await agent.close();
  },
);

test('an idle connection is closed once the waiting one has waited twice the last answer, and the line says how long', GUARD, async () => {
  const { waiting } = await oneAnsweredOneWaiting();
  time = 19;
  for (let i = 0; i < 20; i++) await turn();
  assert.deepEqual(closes(), []);
  time = 20;
  // The check comes back within the 1 ms then left on the pool's clock.
  while (closes().length === 0) await turn();
  assert.deepEqual(closes(), [
    '  connections: closed an idle one while another waits for its first answer (waited 20 ms, the last answer took 10 ms; a server that serves one connection at a time then serves the waiting one)',
  ]);
  release('/waiting');
  assert.equal(await waiting, '/waiting');
  await agent.close();
});
