/**
 * A config folder or file that others can change is refused, as ssh refuses its own: one line
 * with the chmod that fixes it, exit 2 (as a corrupt file), nothing sent. A stored password that
 * others can read is refused too; writing the file tightens it.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { runCli, type RunResult, useConfigHome } from './helpers.js';

let sandbox: Sandbox;
let home: string;
let folder: string;
let configFile: string;
useConfigHome('carectl-config-modes-', (fixture) => ({ sandbox, home, folder, configFile } = fixture));

function run(argv: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<RunResult> {
  return runCli(argv, { ...(options.stdin !== undefined && { stdin: options.stdin }), env: { XDG_CONFIG_HOME: home, ...options.env } });
}

/** A config file as carectl writes it (folder 0700, file 0600), then given the modes asked. */
function writeConfig(profiles: object, modes: { folder?: number; file?: number } = {}): string {
  mkdirSync(folder, { mode: 0o700 });
  const content = JSON.stringify({ profiles });
  writeFileSync(configFile, content, { mode: 0o600 });
  chmodSync(folder, modes.folder ?? 0o700);
  chmodSync(configFile, modes.file ?? 0o600);
  return content;
}

function mode(file: string): number {
  return statSync(file).mode & 0o777;
}

const loggedIn = (): object => ({ default: { 'base-url': sandbox.baseUrl, user: sandbox.user, password: sandbox.password } });
const envCredentials = (): Record<string, string> => ({ CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password });

/** Every command that reads or writes the file, each refused with `message` and nothing sent or changed. */
async function assertRefused(message: string, content: string): Promise<void> {
  const sent = sandbox.requests.length;
  const runs: Array<[string, RunResult]> = [
    ['tags get (profile credentials)', await run(['tags', 'get', '7005'])],
    // the profile may give the address or output format that credentials from the environment go with
    ['tags get (environment credentials)', await run(['tags', 'get', '7005'], { env: envCredentials() })],
    ['config list', await run(['config', 'list'])],
    ['config get', await run(['config', 'get', 'base-url'])],
    ['config set', await run(['config', 'set', 'output', 'json'])],
    ['config unset', await run(['config', 'unset', 'output'])],
    ['logout', await run(['logout'])],
    ['login', await run(['login', '--base-url', sandbox.baseUrl, '--user', sandbox.user, '--password-stdin'], { stdin: `${sandbox.password}\n` })],
  ];
  for (const [what, result] of runs) {
    assert.deepEqual(result, { code: 2, stdout: '', stderr: `carectl: ${message}\n` }, what);
  }
  assert.equal(sandbox.requests.length, sent, 'nothing sent');
  assert.equal(readFileSync(configFile, 'utf8'), content, 'the file is left as it is');
}

describe('a config file or folder that others can write', () => {
  for (const fileMode of [0o620, 0o602, 0o666]) {
    it(`is refused for reading and writing, with the chmod that fixes it (file ${fileMode.toString(8)})`, async () => {
      const content = writeConfig(loggedIn(), { file: fileMode });
      await assertRefused(`${configFile} is writable by others; run: chmod 600 ${configFile}`, content);
      assert.equal(mode(configFile), fileMode);
      chmodSync(configFile, 0o600);
      assert.equal((await run(['tags', 'get', '7005'])).code, 0, 'the chmod fixes it');
    });
  }

  for (const folderMode of [0o770, 0o707, 0o777]) {
    it(`is refused when the folder is writable by others (folder ${folderMode.toString(8)})`, async () => {
      const content = writeConfig(loggedIn(), { folder: folderMode });
      await assertRefused(`${folder} is writable by others; run: chmod 700 ${folder}`, content);
      assert.equal(mode(folder), folderMode);
      chmodSync(folder, 0o700);
      assert.equal((await run(['tags', 'get', '7005'])).code, 0, 'the chmod fixes it');
    });
  }

  it('quotes a path with spaces in the chmod, so it can be pasted', async () => {
    home = path.join(home, "my config's home");
    folder = path.join(home, 'carectl');
    configFile = path.join(folder, 'config.json');
    mkdirSync(home);
    writeConfig({ default: { output: 'json' } }, { file: 0o666 });
    const result = await run(['config', 'list']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, `carectl: ${configFile} is writable by others; run: chmod 600 '${configFile.replace(/'/g, `'\\''`)}'\n`);
  });

  it('owned by another user is refused, with the chown that fixes it', { skip: process.getuid?.() !== 0 && 'needs root to give the file away' }, async () => {
    const content = writeConfig(loggedIn());
    chownSync(configFile, 4242, 4242);
    await assertRefused(
      `${configFile} belongs to another user (uid 4242), who can change it; run: sudo chown root ${configFile} (or use a config folder of your own with XDG_CONFIG_HOME)`,
      content,
    );
    chownSync(configFile, 0, 0);
    chownSync(folder, 4242, 4242);
    await assertRefused(
      `${folder} belongs to another user (uid 4242), who can change it; run: sudo chown root ${folder} (or use a config folder of your own with XDG_CONFIG_HOME)`,
      content,
    );
  });
});

describe('a config file that others can read', () => {
  for (const fileMode of [0o640, 0o604, 0o644]) {
    it(`holding a password is refused for reading it (file ${fileMode.toString(8)})`, async () => {
      const content = writeConfig(loggedIn(), { file: fileMode });
      const message = `carectl: ${configFile} holds a password and is readable by others; run: chmod 600 ${configFile}\n`;
      const sent = sandbox.requests.length;
      for (const argv of [
        ['tags', 'get', '7005'],
        ['config', 'list'],
        ['config', 'get', 'output'],
      ]) {
        assert.deepEqual(await run(argv), { code: 2, stdout: '', stderr: message }, argv.join(' '));
      }
      assert.deepEqual(await run(['tags', 'get', '7005'], { env: envCredentials() }), { code: 2, stdout: '', stderr: message });
      assert.equal(sandbox.requests.length, sent, 'nothing sent');
      assert.equal(readFileSync(configFile, 'utf8'), content);
      assert.equal(mode(configFile), fileMode, 'reading never changes the file');
    });
  }

  it('holding a password is tightened to 0600 by a command that writes it (logout, config set)', async () => {
    writeConfig(loggedIn(), { file: 0o644 });
    assert.equal((await run(['config', 'set', 'output', 'json'])).code, 0);
    assert.equal(mode(configFile), 0o600);
    assert.equal((await run(['tags', 'get', '7005'])).code, 0);

    chmodSync(configFile, 0o644);
    const logout = await run(['logout']);
    assert.equal(logout.code, 0, logout.stderr);
    assert.equal(mode(configFile), 0o600);
    assert.deepEqual(JSON.parse(readFileSync(configFile, 'utf8')), { profiles: { default: { 'base-url': sandbox.baseUrl, output: 'json' } } });
  });

  it('without a password is read as before (only the address and settings are in it)', async () => {
    writeConfig({ default: { 'base-url': sandbox.baseUrl, output: 'json' } }, { folder: 0o755, file: 0o644 });
    const result = await run(['tags', 'get', '7005'], { env: { CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password } });
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { id: string }).id, '7005');
    assert.equal((await run(['config', 'list'])).code, 0);
  });
});
