/**
 * Interim (1xx) replies before the answer (RFC 9110 §15.2: a client parses and ignores them),
 * from a raw server that writes each reply in the pieces it is given, one TCP write each.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fakeClock, runCli } from './helpers.js';
import { scriptedEnv, type ScriptedApi, type ScriptedRequest } from './scripted-server.js';

/** The answer's JSON value, and the pieces to write given the answer's bytes (interim replies first). */
type Script = (request: ScriptedRequest) => { json: unknown; pieces: (answer: string) => string[] };

/** Reads HTTP/1.1 requests off one keep-alive connection (a Content-Length body, as carectl sends). */
function answerOn(socket: Socket, script: Script, requests: ScriptedRequest[]): void {
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  let writing = Promise.resolve();
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const [method = '', url = ''] = head.split(' ');
      const request = { method, url, body: buffered.subarray(end + 4, end + 4 + length).toString(), authorization: undefined };
      buffered = buffered.subarray(end + 4 + length);
      requests.push(request);
      const { json, pieces } = script(request);
      const body = JSON.stringify(json);
      const answer = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      // Each piece its own write, the next once the last left: the client reads them as they come.
      writing = writing.then(() => pieces(answer).reduce((done, piece) => done.then(() => written(socket, piece)), Promise.resolve()));
    }
  });
}

const written = (socket: Socket, piece: string): Promise<void> =>
  new Promise((resolve) => (socket.destroyed ? resolve() : socket.write(piece, () => setImmediate(resolve))));

async function rawApi(script: Script): Promise<ScriptedApi> {
  const requests: ScriptedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    answerOn(socket, script, requests);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const INTERIMS: Array<[string, (answer: string) => string[]]> = [
  ['100 Continue', (answer) => [CONTINUE, answer]],
  ['102 Processing', (answer) => ['HTTP/1.1 102 Processing\r\n\r\n', answer]],
  ['100 Continue then 103 Early Hints', (answer) => [CONTINUE, 'HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n', answer]],
  ['100 Continue cut mid-line, the answer cut in its status line', (answer) => ['HTTP/1.1 10', '0 Cont', 'inue\r', '\n\r', '\nHTTP/1.1 2', answer.slice(10)]],
  ['100 Continue and the answer in one piece', (answer) => [CONTINUE + answer]],
];

describe('interim 1xx replies before a write is answered', () => {
  let api: ScriptedApi;
  let pieces: (answer: string) => string[] = (answer) => [answer];
  before(async () => {
    api = await rawApi((request) => {
      if (request.method === 'POST') return { pieces, json: { report: { id: '60001', url: 'x' } } };
      const id = /conversations\/(\d+)/.exec(request.url)?.[1] ?? '';
      return { pieces, json: { conversation: { id, url: 'x', status: 'on_hold', tags: [] } } };
    });
  });
  after(() => api.close());

  for (const [name, cut] of INTERIMS) {
    test(`${name}: update and reports create succeed, each change sent once`, async () => {
      pieces = cut;
      const from = api.requests.length;
      const update = await runCli(['conversations', 'update', '500010', '--status', 'on_hold', '-o', 'csv'], {
        env: scriptedEnv(api),
      });
      assert.equal(update.code, 0, update.stderr);
      assert.equal(update.stderr, '');
      assert.equal(update.stdout, 'id,ok,status,tags,error.kind,error.status,error.message\r\n500010,true,on_hold,[],,,\r\n');
      const create = await runCli(['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07'], { env: scriptedEnv(api) });
      assert.equal(create.code, 0, create.stderr);
      assert.equal(create.stdout, '60001\n');
      const writes = api.requests.slice(from).filter((r) => r.method !== 'GET');
      assert.deepEqual(
        writes.map((r) => r.method),
        ['PATCH', 'POST'],
      );
    });
  }
});

describe('a change answered with a reply that cannot be parsed', () => {
  const BROKEN: Array<[string, string]> = [
    ['an unsolicited 101', 'HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\nconnection: upgrade\r\n\r\n'],
    ['a status line that is not one', 'HTTP/1.1 2OO OK\r\ncontent-length: 2\r\n\r\n{}'],
    ['a 200 whose body does not match its Content-Length', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}'],
  ];
  let api: ScriptedApi;
  let broken = '';
  before(async () => {
    api = await rawApi((request) => {
      const id = /conversations\/(\d+)/.exec(request.url)?.[1] ?? '';
      const json = { conversation: { id, url: 'x', status: 'on_hold', tags: [] } };
      return { json, pieces: (answer) => [request.method === 'PATCH' ? broken : answer] };
    });
  });
  after(() => api.close());

  for (const [name, reply] of BROKEN) {
    test(`${name}: the PATCH is not sent again (the service answered it), and may have been applied`, async () => {
      broken = reply;
      const from = api.requests.length;
      const clock = fakeClock();
      const out = await runCli(['conversations', 'update', '500010', '--status', 'on_hold', '-o', 'csv'], {
        env: scriptedEnv(api),
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(out.code, 1, out.stderr);
      assert.equal(api.requests.slice(from).filter((r) => r.method === 'PATCH').length, 1, out.stdout);
      assert.match(
        out.stdout,
        /^500010,false,on_hold,\[\],network,,PATCH http:\/\/127\.0\.0\.1:\d+\/v1\.3\/conversations\/500010 failed: .*; the change may have been applied \(an attempt ended after the request was sent\)\r\n$/m,
      );
    });
  }
});
