/** `carectl api PATH`: raw requests with the same credentials, errors, retries and origin rules. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, openSandbox, runCli } from './helpers.js';

let sandbox: Sandbox;
let folder: string;

before(async () => {
  sandbox = await openSandbox();
  folder = mkdtempSync(path.join(tmpdir(), 'carectl-api-'));
});
after(async () => {
  await sandbox.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The service's own answer, fetched without carectl. */
async function direct(pathAndQuery: string): Promise<unknown> {
  const reply = await fetch(`${sandbox.baseUrl}/${pathAndQuery}`, {
    headers: { authorization: `Basic ${Buffer.from(`${sandbox.user}:${sandbox.password}`).toString('base64')}` },
  });
  return reply.json();
}

describe('api PATH', () => {
  it('prints the reply as one JSON line off a terminal', async () => {
    const result = await runCli(['api', 'v1.3/tags?page_size=3&fields=name'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.split('\n').length, 2);
    assert.deepEqual(JSON.parse(result.stdout), await direct('v1.3/tags?page_size=3&fields=name'));
  });

  it('indents the reply on a terminal', async () => {
    const result = await runCli(['api', `/v1.3/tags/${FIXTURES.activeTagIds[0]}`], { sandbox, stdoutTTY: true });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${JSON.stringify(await direct(`v1.3/tags/${FIXTURES.activeTagIds[0]}`), null, 2)}\n`);
  });

  it('accepts an absolute address on the base origin', async () => {
    const result = await runCli(['api', `${sandbox.baseUrl}/v1.3/tags/7005`], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), await direct('v1.3/tags/7005'));
  });

  it('refuses an address on another origin (exit 2) and sends it nothing', async () => {
    const sent = sandbox.requests.length;
    const result = await runCli(['api', `${sandbox.downloadBaseUrl}/v1.3/tags`], { sandbox });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /api: http:\/\/127\.0\.0\.1:\d+ is not the base address.s origin .*credentials go nowhere else/);
    assert.equal(sandbox.requests.length, sent);
  });

  it('--paginate follows next_page and prints one JSON page per line', async () => {
    const sent = sandbox.requests.length;
    const result = await runCli(['api', 'v1.3/tags?page_size=7', '--paginate'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    const pages = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { tags: Array<{ id: string }>; paging: { next_page: string | null } });
    assert.equal(pages.length, Math.ceil(sandbox.data.tags.length / 7));
    assert.deepEqual(
      pages.flatMap((page) => page.tags.map((tag) => tag.id)),
      sandbox.data.tags.map((tag) => tag.id),
    );
    const urls = apiRequests(sandbox, sent).map((request) => request.url);
    assert.deepEqual(
      urls.slice(1),
      pages.slice(0, -1).map((page) => new URL(page.paging.next_page as string).pathname + new URL(page.paging.next_page as string).search),
    );
  });

  it('sends -d JSON with PATCH, and -d @FILE and @- as the body', async () => {
    const id = FIXTURES.hostile.conversationId;
    const sent = sandbox.requests.length;
    const inline = await runCli(['api', `v1.3/conversations/${id}`, '-X', 'patch', '-d', '{"status":"on_hold","tag_ids":["7005"]}'], { sandbox });
    assert.equal(inline.code, 0, inline.stderr);
    const patched = apiRequests(sandbox, sent)[0];
    assert.equal(patched?.method, 'PATCH');
    assert.deepEqual(JSON.parse(patched?.body ?? ''), { status: 'on_hold', tag_ids: ['7005'] });
    assert.equal(sandbox.data.byId.conversations.get(id)?.status, 'on_hold');

    writeFileSync(path.join(folder, 'body.json'), '{"status":"closing","close_reason":"spam","tag_ids":[]}\n');
    const fromFile = await runCli(['api', `v1.3/conversations/${id}`, '-X', 'PATCH', '-d', '@body.json'], { sandbox, cwd: folder });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.equal(sandbox.data.byId.conversations.get(id)?.close_reason, 'spam');

    const fromStdin = await runCli(['api', `v1.3/conversations/${id}`, '-X', 'PATCH', '-d', '@-'], {
      sandbox,
      stdin: '{"status":"on_hold","tag_ids":["7006"]}',
    });
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.deepEqual(sandbox.data.byId.conversations.get(id)?.tag_ids, ['7006']);
  });

  it('-d without -X sends a POST', async () => {
    const sent = sandbox.requests.length;
    const body = { account: FIXTURES.accountIds[0], date_from: '2026-06-01', date_to: '2026-06-02', date_type: 'created_date', format: 'json' };
    const result = await runCli(['api', 'v1.1/reports', '-d', JSON.stringify(body)], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(apiRequests(sandbox, sent)[0]?.method, 'POST');
    assert.ok((JSON.parse(result.stdout) as { report: { id: string } }).report.id);
  });

  it('maps error replies to exit codes with the service message', async () => {
    const missing = await runCli(['api', 'v1.3/tags/999999'], { sandbox });
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /^carectl: .+ \(HTTP 404\)\n$/);
    const bad = await runCli(['api', 'v1.3/tags?is_active=maybe'], { sandbox });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is_active must be true or false.*\(HTTP 400\)/);
    const denied = await runCli(['api', 'v1.3/tags'], { sandbox, env: { CARECTL_PASSWORD: 'wrong' } });
    assert.equal(denied.code, 3);
    assert.match(denied.stderr, /\(HTTP 401\)/);
  });

  it('retries GET, PUT and DELETE but never PATCH or POST', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['503'] });
    try {
      const attempts = async (argv: string[]): Promise<number> => {
        const sent = sandbox.requests.length;
        const clock = fakeClock();
        const result = await runCli(['--retries', '2', 'api', ...argv], { sandbox, now: clock.now, sleep: clock.sleep });
        assert.equal(result.code, 1);
        assert.match(result.stderr, /Service unavailable/);
        return apiRequests(sandbox, sent).length;
      };
      assert.equal(await attempts(['v1.3/tags']), 3);
      assert.equal(await attempts(['v1.3/tags/7005', '-X', 'PUT', '-d', '{}']), 3);
      assert.equal(await attempts(['v1.3/tags/7005', '-X', 'DELETE']), 3);
      assert.equal(await attempts(['v1.3/conversations/500001', '-X', 'PATCH', '-d', '{"status":"on_hold","tag_ids":[]}']), 1);
      assert.equal(await attempts(['v1.1/reports', '-d', '{}']), 1);
    } finally {
      sandbox.setFaults(undefined);
    }
  });
});

describe('api -X POST that may have reached the service', () => {
  it('a gateway 502 after the POST was sent says the change may have been applied; a 403 says nothing of the kind', async () => {
    const { scriptedApi, scriptedEnv } = await import('./scripted-server.js');
    const api = await scriptedApi((request) =>
      request.url.startsWith('/v1.1/reports')
        ? { status: 502, text: '<html><head><title>502 Bad Gateway</title></head></html>', headers: { 'content-type': 'text/html' } }
        : { status: 403, json: { status: 'error', message: 'permission denied' } },
    );
    try {
      const env = { ...scriptedEnv(api) };
      const gateway = await runCli(['api', 'v1.1/reports', '-X', 'POST', '-d', '{"account":"1001"}'], { env });
      assert.equal(gateway.code, 1);
      assert.match(gateway.stderr, /may have been applied: look before sending it again\n$/);
      assert.equal(api.requests.length, 1, 'a POST is never repeated');
      const refused = await runCli(['api', 'v1.3/conversations/1', '-X', 'POST', '-d', '{}'], { env });
      assert.equal(refused.code, 3);
      assert.doesNotMatch(refused.stderr, /may have been/);
    } finally {
      await api.close();
    }
  });
});
