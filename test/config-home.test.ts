/**
 * No home folder to hold the config: HOME set but empty (libuv then names "" as the home, and the
 * config went to ./.config of whatever folder the command ran in, password included), a relative
 * HOME, and no HOME on a uid the system knows no home for (a container's --user 12345: every
 * command failed with "unexpected error: uv_os_homedir"). Settings from the environment still work;
 * what must store the file says how to give it a folder.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { configDirectory } from '../src/config/paths.js';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

const bin = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

function carectl(argv: string[], env: Record<string, string>, cwd: string, stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...argv], { env: { PATH: process.env.PATH ?? '', ...env }, cwd, timeout: 20_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

test('configDirectory: never a relative folder; none when no absolute home is known', () => {
  const noHome = (): string => {
    throw new Error('uv_os_homedir returned ENOENT');
  };
  assert.equal(
    configDirectory({ HOME: '' }, () => ''),
    undefined,
  );
  assert.equal(configDirectory({}, noHome), undefined);
  assert.equal(
    configDirectory({ HOME: 'relative' }, () => '/home/u'),
    '/home/u/.config/carectl',
  );
  assert.equal(configDirectory({ HOME: '/h', XDG_CONFIG_HOME: 'rel' }, noHome), '/h/.config/carectl');
  assert.equal(configDirectory({ XDG_CONFIG_HOME: '/x' }, noHome), '/x/carectl');
});

test('HOME set but empty: a list with settings in the environment works; login says how to give the config a folder, and writes nothing here', async () => {
  const cwd = mkdtempSync(path.join(tmpdir(), 'carectl-home-'));
  const api = await scriptedApi(() => ({ json: { tags: [{ id: '1', name: 'a', is_active: true }], paging: {} } }));
  try {
    const env = { ...scriptedEnv(api), HOME: '' };
    delete (env as Record<string, string | undefined>).XDG_CONFIG_HOME;
    const list = await carectl(['tags', 'list', '-o', 'csv'], env, cwd);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout, 'id,name,is_active\r\n1,a,true\r\n');
    const login = await carectl(['login', '--base-url', api.baseUrl, '--user', 'bot', '--password-stdin'], env, cwd, 'scripted-secret\n');
    assert.equal(login.code, 2, login.stderr);
    assert.equal(login.stderr, 'carectl: no folder for the config file: HOME is empty and names no folder; set HOME or XDG_CONFIG_HOME to an absolute path\n');
    assert.equal(existsSync(path.join(cwd, '.config')), false, 'nothing written in the current folder');
  } finally {
    await api.close();
    rmSync(cwd, { recursive: true, force: true });
  }
});
