/**
 * issue 49 (9): where a batch could send nothing (the tags list could not be read), every id
 * still comes as a row, as the ids a batch that stops early did not send do: a retry loop reads
 * the rows, and `network` says it is worth another try. Against a closed port and a scripted
 * service that refuses the credentials.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fakeClock, freePort, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

const IDS = ['500010', '500011', '500012'];

describe('update: nothing could be sent', () => {
  test('the service down while the tags list is read: every id a row with error.kind network, exit 1', async () => {
    const port = await freePort();
    const env = { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
    const argv = ['-o', 'ndjson', 'conversations', 'update', '-', '--status', 'on_hold', '--add-tags', 'praise-follow-up'];
    const result = await runCli(argv, { env, stdin: IDS.join('\n'), ...fakeClock() });
    assert.equal(result.code, 1);
    const why = `the tags list could not be read: GET http://127.0.0.1:${port}/v1.3/tags failed: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port})`;
    const row = (id: string): string =>
      `${JSON.stringify({ id, ok: false, status: null, tags: null, error: { kind: 'network', status: null, message: `not sent: ${why}` } })}\n`;
    assert.equal(result.stdout, IDS.map(row).join(''));
    assert.equal(result.stderr, `carectl: nothing was sent (${why}): 3 not sent, rows with error.kind network\n`);
    // csv and a table read the same rows
    const csv = await runCli(['-o', 'csv', '--columns', 'id,ok,error.kind,error.status', ...argv.slice(2)], { env, stdin: IDS.join('\n'), ...fakeClock() });
    assert.equal(csv.stdout, `id,ok,error.kind,error.status\r\n${IDS.map((id) => `${id},false,network,\r\n`).join('')}`);
  });

  test('--rest FILE: the ids go to FILE instead of rows', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'carectl-rest-'));
    try {
      const port = await freePort();
      const env = { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
      const argv = ['-o', 'ndjson', 'conversations', 'update', '-', '--status', 'on_hold', '--drop-inactive-tags', '--rest', 'rest.txt'];
      const result = await runCli(argv, { env, stdin: IDS.join('\n'), cwd: dir, ...fakeClock() });
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        /^carectl: nothing was sent \(the tags list could not be read: .*ECONNREFUSED.*\): 3 not sent, their ids are in rest\.txt\n$/,
      );
      assert.equal(await readFile(join(dir, 'rest.txt'), 'utf8'), IDS.map((id) => `${id}\n`).join(''));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('credentials refused while the tags list is read: rows with error.kind auth, exit 3; no conversation asked', async () => {
    const api = await scriptedApi(() => ({ status: 401, json: { error: 'bad credentials' } }));
    try {
      const argv = ['-o', 'csv', '--columns', 'id,ok,error.kind', 'conversations', 'update', ...IDS, '--status', 'on_hold', '--add-tags', 'vip'];
      const result = await runCli(argv, { env: scriptedEnv(api) });
      assert.equal(result.code, 3);
      assert.equal(result.stdout, `id,ok,error.kind\r\n${IDS.map((id) => `${id},false,auth\r\n`).join('')}`);
      assert.match(result.stderr, /^carectl: nothing was sent \(the tags list could not be read: .*\): 3 not sent, rows with error\.kind auth\n$/);
      assert.deepEqual(
        api.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`),
        ['GET /v1.3/tags'],
      );
    } finally {
      await api.close();
    }
  });

  test('a name the list does not hold is still exit 2 with no row; a dry run gives no rows either', async () => {
    const api = await scriptedApi((request) =>
      request.url.startsWith('/v1.3/tags') ? { json: { tags: [{ id: '7005', url: 'x', name: 'praise', is_active: true }], paging: {} } } : { status: 500 },
    );
    try {
      const unknown = await runCli(['-o', 'ndjson', 'conversations', 'update', ...IDS, '--status', 'on_hold', '--add-tags', 'vip'], { env: scriptedEnv(api) });
      assert.equal(unknown.code, 2);
      assert.equal(unknown.stdout, '');
      assert.match(unknown.stderr, /^carectl: --add-tags: no tag has the name or id "vip"/);
      const port = await freePort();
      const env = { CARECTL_BASE_URL: `http://127.0.0.1:${port}`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
      const dry = await runCli(['-o', 'ndjson', 'conversations', 'update', ...IDS, '--status', 'on_hold', '--add-tags', 'vip', '--dry-run'], {
        env,
        ...fakeClock(),
      });
      assert.equal(dry.code, 1);
      assert.equal(dry.stdout, '');
      assert.match(dry.stderr, /^carectl: GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/tags failed: ECONNREFUSED/);
    } finally {
      await api.close();
    }
  });
});
