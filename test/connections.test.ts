/**
 * Connections that last (issue 24 item 2): behind a server that closes a keep-alive connection
 * every 10 requests (nginx's keepalive_requests), carectl opens about one connection per 10
 * requests, not one per request (undici 7's Agent closed the origin's pool: nodejs/undici#5022).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { fakeClock } from './helpers.js';
import { testTransport } from './scripted-server.js';

const EVERY = 10;
let server: Server;
let url: string;
let connections = 0;
let requests = 0;
before(async () => {
  server = createServer((req, res) => {
    const socket = req.socket as typeof req.socket & { served?: number };
    socket.served = (socket.served ?? 0) + 1;
    requests++;
    res.writeHead(200, { 'content-type': 'application/json', ...(socket.served >= EVERY && { connection: 'close' }) });
    res.end('{"data":[]}');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

// One connection is undici's own Client (--parallel 1, report downloads), which tells the Agent
// of each disconnect: without src/http/pools.ts the Agent closed it, 91 connections for 100.
// More are carectl's OriginPool (the default 4 here).
for (const [name, overrides] of [
  ['one connection', { connections: 1 }],
  ['the default connections', {}],
] as const) {
  test(`${name}, requests one after the other: one connection per 10 requests`, async () => {
    [connections, requests] = [0, 0];
    const transport = testTransport(url, fakeClock(), overrides);
    try {
      for (let i = 0; i < 100; i++) await transport.get(new URL(`${url}/v1.3/tags?page=${i}`));
    } finally {
      await transport.close();
    }
    assert.equal(requests, 100);
    assert.equal(connections, 100 / EVERY);
  });
}

test('four at a time: still about one per 10', async () => {
  [connections, requests] = [0, 0];
  const transport = testTransport(url, fakeClock(), { connections: 4 });
  try {
    for (let i = 0; i < 25; i++) await Promise.all([0, 1, 2, 3].map((j) => transport.get(new URL(`${url}/v1.3/tags?page=${i}-${j}`))));
  } finally {
    await transport.close();
  }
  assert.equal(requests, 100);
  assert.ok(connections <= 100 / EVERY + 4, `${connections} connections for 100 requests`);
});
