import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { ApiError } from '../src/core/errors.js';
import { basicCredentialForms, redact, redactError, stripUserinfo } from '../src/http/redact.js';
import { json, serve } from './scripted-server.js';
import { assertNoCredential, BASE64, cliAgainst, PASSWORD, USER, withTransport } from './scripted-client.js';

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
