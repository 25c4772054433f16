/**
 * Writers of one config file at once: every change is kept (a lock file beside the config file
 * serialises read-modify-write), a lock left by a crashed writer is taken over, and the lock is
 * always released.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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
