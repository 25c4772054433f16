/**
 * Bodies (issue 24 item 10): a reply in a declared character set other than UTF-8 is decoded
 * (latin1, UTF-16) or refused by name; a reply of millions of tiny values is refused at once
 * instead of keeping the process in JSON.parse and garbage collection for minutes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { BadReplyError } from '../src/core/errors.js';
import { decodeText, MAX_JSON_VALUES, parseReply } from '../src/http/reply.js';
import { fakeClock } from './helpers.js';
import { serve, testTransport } from './scripted-server.js';

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
