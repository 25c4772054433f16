/**
 * The transport below HTTP: requests go to undici's MockAgent with the network shut off, so a
 * request nobody expected fails the test, and so does an expected one that was never sent.
 * What users see stays tested end to end over loopback; this is for the transport's own rules.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { MockAgent } from 'undici';
import { ApiError, BadReplyError, ExitCode, NetworkError } from '../src/core/errors.js';
import { fakeClock } from './helpers.js';
import { testTransport } from './scripted-server.js';

const ORIGIN = 'https://api.example.test';
const ERROR_BODY = (message: string) => JSON.stringify({ status: 'error', message });
const JSON_HEADERS = { 'content-type': 'application/json' };

describe('transport against a mock dispatcher', () => {
  let agent: MockAgent;
  let clock: ReturnType<typeof fakeClock>;
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    clock = fakeClock();
  });
  afterEach(async () => {
    agent.assertNoPendingInterceptors();
    await agent.close();
  });
  const transport = () => testTransport(ORIGIN, clock, { dispatcher: agent });

  test('a GET carries Basic auth, asks for JSON and compression, and gives back the parsed reply', async () => {
    agent
      .get(ORIGIN)
      .intercept({
        path: '/v1.3/tags?page_size=2',
        method: 'GET',
        headers: { authorization: `Basic ${Buffer.from('user:secret').toString('base64')}`, accept: 'application/json', 'accept-encoding': /gzip/ },
      })
      .reply(200, { tags: [{ id: '7001' }] }, { headers: JSON_HEADERS });
    const t = transport();
    assert.deepEqual(await t.get(t.url('v1.3/tags', [['page_size', '2']])), { tags: [{ id: '7001' }] });
    await t.close();
  });

  test('a GET answered 503 twice is sent a third time after waits on the injected clock', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/v1.3/queues', method: 'GET' }).reply(503, ERROR_BODY('busy'), { headers: JSON_HEADERS }).times(2);
    pool.intercept({ path: '/v1.3/queues', method: 'GET' }).reply(200, { queues: [] }, { headers: JSON_HEADERS });
    const t = transport();
    assert.deepEqual(await t.get(t.url('v1.3/queues')), { queues: [] });
    assert.equal(clock.slept.length, 2, 'one wait before each repeat');
    await t.close();
  });

  test("a POST answered 503 is not repeated: one request, the service's words, exit 1", async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1.1/reports', method: 'POST', body: '{"account":"1001"}' })
      .reply(503, ERROR_BODY('try later'), { headers: JSON_HEADERS });
    const t = transport();
    const failure = await t.request('POST', t.url('v1.1/reports'), { body: { account: '1001' }, idempotent: false }).catch((err: unknown) => err);
    assert.ok(failure instanceof ApiError, String(failure));
    assert.equal(failure.status, 503);
    assert.equal(failure.exitCode, ExitCode.failure);
    assert.match(failure.message, /try later/);
    assert.deepEqual(clock.slept, [], 'no wait: nothing is sent again');
    await t.close();
  });

  test("a 404 with the spec's error body is a not-found error with its message, not retried", async () => {
    agent.get(ORIGIN).intercept({ path: '/v1.3/tags/9', method: 'GET' }).reply(404, ERROR_BODY('No tag with id 9'), { headers: JSON_HEADERS });
    const t = transport();
    const failure = await t.get(t.url('v1.3/tags/9')).catch((err: unknown) => err);
    assert.ok(failure instanceof ApiError);
    assert.equal(failure.exitCode, ExitCode.notFound);
    assert.match(failure.message, /No tag with id 9/);
    await t.close();
  });

  test('a 200 that is not JSON is a bad reply after the retries, each attempt one expected request', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/v1.3/teams', method: 'GET' })
      .reply(200, '<html>maintenance</html>', { headers: { 'content-type': 'text/html' } })
      .times(4);
    const t = transport();
    await assert.rejects(t.get(t.url('v1.3/teams')), BadReplyError);
    assert.equal(clock.slept.length, 3);
    await t.close();
  });

  test('a request nobody expected never reaches a network: it fails', async () => {
    agent.get(ORIGIN).intercept({ path: '/v1.3/users', method: 'GET' }).reply(200, { users: [] }, { headers: JSON_HEADERS });
    const t = testTransport(ORIGIN, clock, { dispatcher: agent, retries: 0 });
    await assert.rejects(t.get(t.url('v1.3/channels')), NetworkError);
    // the expected one is still sent, so afterEach finds nothing pending
    assert.deepEqual(await t.get(t.url('v1.3/users')), { users: [] });
    await t.close();
  });
});
