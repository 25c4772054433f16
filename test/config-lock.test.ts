/**
 * Writers of one config file at once: every change is kept (a lock file beside the config file
 * serialises read-modify-write), a lock left by a crashed writer is taken over, and the lock is
 * always released.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs, { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { runCli, useConfigHome } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

let sandbox: Sandbox;
let home: string;
let folder: string;
let configFile: string;
let lockFile: string;
useConfigHome('carectl-config-lock-', (fixture) => {
  ({ sandbox, home, folder, configFile } = fixture);
  lockFile = `${configFile}.lock`;
});

interface Exit {
  code: number | null;
  stderr: string;
}

/** bin/carectl.js as a process of its own, with only the config file for settings. */
function carectl(argv: string[], stdin = ''): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { env: { PATH: process.env.PATH, XDG_CONFIG_HOME: home }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdin.end(stdin);
  });
}

function stored(): Record<string, Record<string, string>> {
  return (JSON.parse(readFileSync(configFile, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles;
}

describe('concurrent config writers', () => {
  it('ten config set and login runs at once against one config file keep every change', async () => {
    // two profiles that get four keys each from four processes, and two logins into profiles of their own:
    // ten writers at once contend for the lock as fifty did, at a fifth of the processes
    const runs: Array<Promise<Exit>> = [];
    const expected: Record<string, Record<string, string>> = {};
    for (let i = 0; i < 2; i++) {
      const profile = `team${i}`;
      expected[profile] = {
        'base-url': `https://team${i}.example.com`,
        user: `user${i}`,
        output: i % 2 ? 'json' : 'csv',
        'api-version': i % 2 ? 'v1.2' : 'v1.1',
      };
      for (const [key, value] of Object.entries(expected[profile])) runs.push(carectl(['--profile', profile, 'config', 'set', key, value]));
      expected[`login${i}`] = { 'base-url': sandbox.baseUrl, user: sandbox.user, password: sandbox.password };
      runs.push(
        carectl(['--profile', `login${i}`, 'login', '--base-url', sandbox.baseUrl, '--user', sandbox.user, '--password-stdin'], `${sandbox.password}\n`),
      );
    }
    assert.equal(runs.length, 10);
    const exits = await Promise.all(runs);
    for (const exit of exits) assert.equal(exit.code, 0, exit.stderr);
    assert.deepEqual(stored(), expected);
    assert.deepEqual(readdirSync(folder), ['config.json'], 'no lock or temporary file is left behind');
  });
});

describe('the lock file', () => {
  it('held by another writer makes a write wait for it, then go on with what that writer stored', async () => {
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(lockFile, 'another carectl\n', { mode: 0o600 });
    let settled = false;
    const waiting = runCli(['config', 'set', 'output', 'json'], { env: { XDG_CONFIG_HOME: home } }).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(settled, false, 'the write waits for the lock');
    assert.equal(existsSync(configFile), false);
    // the other writer stores its change and releases the lock
    writeFileSync(configFile, JSON.stringify({ profiles: { other: { user: 'bob' } } }), { mode: 0o600 });
    rmSync(lockFile);
    const result = await waiting;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(stored(), { other: { user: 'bob' }, default: { output: 'json' } });
    assert.deepEqual(readdirSync(folder), ['config.json']);
  });

  it('held by another writer: Ctrl-C while waiting stops the write (exit 130), writes nothing and leaves that lock', async () => {
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(lockFile, 'another carectl\n', { mode: 0o600 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runCli(['config', 'set', 'output', 'json'], { env: { XDG_CONFIG_HOME: home }, signal: controller.signal });
    assert.equal(result.code, 130, result.stderr);
    assert.equal(existsSync(configFile), false);
    assert.equal(readFileSync(lockFile, 'utf8'), 'another carectl\n');
  });

  it('left by a writer that died (older than 10 s) is taken over', async () => {
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(lockFile, 'a carectl that was killed\n', { mode: 0o600 });
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockFile, old, old);
    const started = Date.now();
    const result = await runCli(['config', 'set', 'output', 'json'], { env: { XDG_CONFIG_HOME: home } });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(Date.now() - started < 5000, 'no long wait');
    assert.deepEqual(stored(), { default: { output: 'json' } });
    assert.deepEqual(readdirSync(folder), ['config.json'], 'the stale lock is gone');
  });

  it('is released when the write fails (a corrupt file), and never left for the next writer', async () => {
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(configFile, '{"profiles": ', { mode: 0o600 });
    for (const argv of [['config', 'set', 'output', 'json'], ['config', 'unset', 'output'], ['logout']]) {
      const result = await runCli(argv, { env: { XDG_CONFIG_HOME: home } });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /not valid JSON/);
      assert.deepEqual(readdirSync(folder), ['config.json'], argv.join(' '));
    }
    // a later writer gets the lock at once
    writeFileSync(configFile, '{}', { mode: 0o600 });
    const started = Date.now();
    assert.equal((await runCli(['config', 'set', 'output', 'json'], { env: { XDG_CONFIG_HOME: home } })).code, 0);
    assert.ok(Date.now() - started < 2000);
  });
});

describe('a full disk (ENOSPC)', () => {
  const enospc = (): never => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  };

  it('the lock file made but not written: one line naming the file and ENOSPC, exit 1, the lock removed', async (t) => {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // The lock's token is the first write (writeSync); the named import follows once synced.
    t.mock.method(fs, 'writeSync', enospc);
    syncBuiltinESMExports();
    try {
      const out = await runCli(['config', 'set', 'base-url', 'https://a.example.test'], { env: { XDG_CONFIG_HOME: home } });
      assert.equal(out.stderr, `carectl: cannot write ${configFile}: no space left on device (ENOSPC)\n`);
      assert.equal(out.code, 1);
    } finally {
      t.mock.restoreAll();
      syncBuiltinESMExports();
    }
    assert.equal(existsSync(lockFile), false);
  });

  it('on a full tmpfs: the same line, exit 1, no lock left', async (t) => {
    const mount = join(home, 'small');
    mkdirSync(mount);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) {
      const reason = `cannot mount a small tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()}): the full-disk test is skipped`;
      process.stdout.write(`# ${reason}\n`);
      return t.skip(reason);
    }
    try {
      mkdirSync(join(mount, 'carectl'), { mode: 0o700 });
      spawnSync('dd', ['if=/dev/zero', `of=${join(mount, 'fill')}`, 'bs=1k', 'count=64']);
      const file = join(mount, 'carectl', 'config.json');
      const out = await carectlIn(mount, ['config', 'set', 'base-url', 'https://a.example.test']);
      assert.equal(out.stderr, `carectl: cannot write ${file}: no space left on device (ENOSPC)\n`);
      assert.equal(out.code, 1);
      assert.deepEqual(readdirSync(join(mount, 'carectl')), []);
    } finally {
      spawnSync('umount', [mount]);
    }
  });
});

function carectlIn(configHome: string, argv: string[]): Exit {
  const child = spawnSync(process.execPath, [BIN, ...argv], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, XDG_CONFIG_HOME: configHome },
    timeout: 30_000,
  });
  return { code: child.status, stderr: child.stderr };
}
