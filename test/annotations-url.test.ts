/** The api/1 form on a host of its own: --annotations-url, CARECTL_ANNOTATIONS_URL, profile key annotations-url. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const PASSWORD_BASIC = `Basic ${Buffer.from('bot:scripted-secret').toString('base64')}`;

describe('--annotations-url', () => {
  let main: ScriptedApi;
  let annotations: ScriptedApi;
  before(async () => {
    // The main host serves the Data API only: api/1 there is a 404, as on the real service.
    main = await scriptedApi((request) =>
      request.url.startsWith('/api/1/') ? { status: 404, json: { status: 'error', message: 'Not found' } } : { json: { tags: [], paging: {} } },
    );
    annotations = await scriptedApi((request) => {
      const token = new URL(request.url, 'http://x').searchParams.get('page_token');
      const next = token === null ? `${annotations.baseUrl}/api/1/annotation-types?page_token=p2` : null;
      const id = token === null ? 'at1' : 'at2';
      return { json: { annotationtypes: [{ id, name: `type ${id}`, format: 'short', is_active: true }], paging: { next_page: next } } };
    });
  });
  after(async () => {
    await main.close();
    await annotations.close();
  });

  test('the api/1 form goes to its own host, with the credentials, and its paging links are followed there', async () => {
    const from = annotations.requests.length;
    const mainFrom = main.requests.length;
    const out = await runCli(['annotation-types', 'list', '--annotations-url', annotations.baseUrl, '-o', 'csv'], { env: scriptedEnv(main) });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'id,name,format,is_active\r\nat1,type at1,short,true\r\nat2,type at2,short,true\r\n');
    assert.deepEqual(
      annotations.requests.slice(from).map((r) => r.url),
      ['/api/1/annotation-types?page_size=50', '/api/1/annotation-types?page_token=p2'],
    );
    assert.equal(main.requests.length, mainFrom, 'nothing went to the main host');
  });

  test('carectl api with an api/1 path goes to its host too, and --paginate follows its links there', async () => {
    const from = annotations.requests.length;
    const out = await runCli(['api', 'api/1/annotation-types', '--paginate', '--annotations-url', annotations.baseUrl], { env: scriptedEnv(main) });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim().split('\n').length, 2, 'two pages');
    assert.deepEqual(
      annotations.requests.slice(from).map((r) => r.url),
      ['/api/1/annotation-types', '/api/1/annotation-types?page_token=p2'],
    );
  });

  test('carectl api with an address on the api/1 host (a next_page link, copied) goes there too', async () => {
    const from = annotations.requests.length;
    const out = await runCli(['api', `${annotations.baseUrl}/api/1/annotation-types?page_token=p2`, '--annotations-url', annotations.baseUrl], {
      env: scriptedEnv(main),
    });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(
      annotations.requests.slice(from).map((r) => r.url),
      ['/api/1/annotation-types?page_token=p2'],
    );
  });

  test('CARECTL_ANNOTATIONS_URL does the same; without it the main host answers (404 here)', async () => {
    const ok = await runCli(['annotation-types', 'list', '-o', 'csv'], { env: { ...scriptedEnv(main), CARECTL_ANNOTATIONS_URL: annotations.baseUrl } });
    assert.equal(ok.code, 0, ok.stderr);
    const missing = await runCli(['annotation-types', 'list', '-o', 'csv'], { env: scriptedEnv(main) });
    assert.equal(missing.code, 4, missing.stderr);
  });

  test('the Data API still goes to the base address', async () => {
    const from = main.requests.length;
    const out = await runCli(['tags', 'list', '--annotations-url', annotations.baseUrl], { env: scriptedEnv(main) });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(main.requests.length, from + 1);
  });

  test('a bad address is a usage error naming its source, with nothing sent', async () => {
    const from = annotations.requests.length + main.requests.length;
    const out = await runCli(['annotation-types', 'list', '--annotations-url', 'ftp://x'], { env: scriptedEnv(main) });
    assert.equal(out.code, 2);
    assert.match(out.stderr, /^carectl: --annotations-url: "ftp:\/\/x" must use https:\/\//);
    assert.equal(annotations.requests.length + main.requests.length, from);
  });

  test('login stores it; config list shows it; config set checks it', async () => {
    const home = await mkdtemp(join(tmpdir(), 'carectl-annotations-'));
    try {
      const env = { XDG_CONFIG_HOME: home, CARECTL_PASSWORD: undefined };
      const login = await runCli(['login', '--base-url', main.baseUrl, '--user', 'bot', '--annotations-url', annotations.baseUrl, '--password-stdin'], {
        env,
        stdin: 'scripted-secret\n',
      });
      assert.equal(login.code, 0, login.stderr);
      const list = await runCli(['config', 'list', '-o', 'csv'], { env });
      assert.match(list.stdout, new RegExp(`^default,annotations-url,${annotations.baseUrl.replace(/[.]/g, '\\.')}$`, 'm'));
      const from = annotations.requests.length;
      const out = await runCli(['annotation-types', 'list', '-o', 'csv'], { env });
      assert.equal(out.code, 0, out.stderr);
      assert.equal(annotations.requests.length, from + 2);
      const bad = await runCli(['config', 'set', 'annotations-url', 'not a url'], { env });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /annotations-url: "not a url" is not a URL/);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  test("a profile's api/1 address is its base address's: not used with another, dropped when the profile moves", async () => {
    const home = await mkdtemp(join(tmpdir(), 'carectl-annotations-'));
    const other = await scriptedApi(() => ({ json: { annotationtypes: [], paging: { next_page: null } } }));
    try {
      const env = { XDG_CONFIG_HOME: home, CARECTL_PASSWORD: undefined };
      const login = await runCli(['login', '--base-url', main.baseUrl, '--user', 'bot', '--annotations-url', annotations.baseUrl, '--password-stdin'], {
        env,
        stdin: 'scripted-secret\n',
      });
      assert.equal(login.code, 0, login.stderr);
      // Another service named in the environment: its credentials never go to this profile's api/1 host.
      const from = annotations.requests.length;
      const elsewhere = await runCli(['annotation-types', 'list', '-o', 'csv'], { env: { ...scriptedEnv(other), XDG_CONFIG_HOME: home } });
      assert.equal(elsewhere.code, 0, elsewhere.stderr);
      assert.equal(annotations.requests.length, from);
      assert.deepEqual(
        other.requests.map((r) => r.url),
        ['/api/1/annotation-types?page_size=50'],
      );
      // A login to the same address keeps it; a login elsewhere, or config set base-url, drops it.
      const again = await runCli(['login', '--base-url', main.baseUrl, '--user', 'bot', '--password-stdin'], { env, stdin: 'scripted-secret\n' });
      assert.equal(again.code, 0, again.stderr);
      assert.equal((await runCli(['config', 'get', 'annotations-url'], { env })).stdout, `${annotations.baseUrl}\n`);
      // Unsetting the base address drops it too: it would go out with any address after that.
      const unset = await runCli(['config', 'unset', 'base-url'], { env });
      assert.equal(unset.code, 0, unset.stderr);
      assert.match(unset.stderr, /removed the stored annotations-url of profile "default": it was for the base address removed/);
      assert.equal((await runCli(['config', 'get', 'annotations-url'], { env })).code, 1);
      await runCli(['config', 'set', 'base-url', main.baseUrl], { env });
      await runCli(['config', 'set', 'annotations-url', annotations.baseUrl], { env });
      const moved = await runCli(['config', 'set', 'base-url', other.baseUrl], { env });
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(moved.stderr, /removed the stored .*annotations-url.* of profile "default"/);
      const gone = await runCli(['config', 'get', 'annotations-url'], { env });
      assert.equal(gone.code, 1);
      await runCli(['config', 'set', 'annotations-url', annotations.baseUrl], { env });
      const relogin = await runCli(['login', '--base-url', main.baseUrl, '--user', 'bot', '--password-stdin'], { env, stdin: 'scripted-secret\n' });
      assert.equal(relogin.code, 0, relogin.stderr);
      assert.equal((await runCli(['config', 'get', 'annotations-url'], { env })).code, 1, 'a login to another address drops it');
      assert.match(relogin.stderr, /removed the stored annotations-url of profile "default": it was for another address/);
    } finally {
      await other.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  test('an api/1 address set before any base address is kept by config set base-url and by login, and used', async () => {
    const home = await mkdtemp(join(tmpdir(), 'carectl-annotations-'));
    try {
      const env = { XDG_CONFIG_HOME: home, CARECTL_PASSWORD: undefined };
      assert.equal((await runCli(['config', 'set', 'annotations-url', annotations.baseUrl], { env })).code, 0);
      const set = await runCli(['config', 'set', 'base-url', main.baseUrl], { env });
      assert.deepEqual([set.code, set.stderr], [0, '']);
      assert.equal((await runCli(['config', 'get', 'annotations-url'], { env })).stdout, `${annotations.baseUrl}\n`);
      // Another profile, its api/1 address set first (unsetting a base address it lacks keeps it), then a login.
      const other = { ...env, CARECTL_PROFILE: 'eu' };
      assert.equal((await runCli(['config', 'set', 'annotations-url', annotations.baseUrl], { env: other })).code, 0);
      const unset = await runCli(['config', 'unset', 'base-url'], { env: other });
      assert.equal(unset.stderr, 'base-url was not set in profile "eu"\n');
      const login = await runCli(['login', '--base-url', main.baseUrl, '--user', 'bot', '--password-stdin'], { env: other, stdin: 'scripted-secret\n' });
      assert.equal(login.code, 0, login.stderr);
      assert.equal((await runCli(['config', 'get', 'annotations-url'], { env: other })).stdout, `${annotations.baseUrl}\n`);
      const from = annotations.requests.length;
      assert.equal((await runCli(['annotation-types', 'list', '-o', 'csv'], { env: other })).code, 0);
      assert.equal(annotations.requests.length, from + 2);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  test('the credentials go to the api/1 host too (the user named it)', async () => {
    const seen: string[] = [];
    const api = await scriptedApi((_request, res) => {
      seen.push(String(res.req.headers.authorization));
      return { json: { annotations: [], paging: { next_page: null } } };
    });
    try {
      const out = await runCli(['annotations', 'list', '--annotations-url', api.baseUrl, '--quiet'], { env: scriptedEnv(main) });
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(seen, [PASSWORD_BASIC]);
    } finally {
      await api.close();
    }
  });
});

describe('against the sandbox with api/1 on a port of its own', () => {
  test('every annotation type and annotation is listed from that port, none from the main one', async () => {
    const { openSandbox, sandboxEnv } = await import('./helpers.js');
    const sandbox = await openSandbox({ annotationsPort: 0 });
    try {
      const env = { ...sandboxEnv(sandbox), CARECTL_ANNOTATIONS_URL: sandbox.annotationsUrl };
      const without = await runCli(['annotations', 'list', '-o', 'ndjson'], { env: sandboxEnv(sandbox) });
      assert.equal(without.code, 4, 'the main port answers 404 for api/1');
      const from = sandbox.requests.length;
      const out = await runCli(['annotations', 'list', '-o', 'ndjson', '--page-size', '7'], { env });
      assert.equal(out.code, 0, out.stderr);
      const requests = sandbox.requests.slice(from);
      assert.ok(requests.length > 1, 'several pages');
      assert.ok(
        requests.every((r) => r.listener === 'annotations'),
        JSON.stringify(requests.map((r) => r.listener)),
      );
      assert.equal(out.stdout.trim().split('\n').length, sandbox.data.annotations.length);
    } finally {
      await sandbox.close();
    }
  });
});
