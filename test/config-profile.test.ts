/** A --profile or CARECTL_PROFILE that the config file lacks is named as such, with the profiles it has. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { runCli, useConfigHome } from './helpers.js';

let sandbox: Sandbox;
let home: string;
let configFile: string;
useConfigHome('carectl-profile-', (fixture) => ({ sandbox, home, configFile } = fixture));

describe('a --profile that the config file lacks', () => {
  function writeProfiles(profiles: object): void {
    mkdirSync(path.dirname(configFile), { mode: 0o700 });
    writeFileSync(configFile, JSON.stringify({ profiles }), { mode: 0o600 });
  }

  it('is named, with the profiles there are, instead of "no base address" (exit 2, nothing sent)', async () => {
    writeProfiles({ default: { output: 'json' }, staging: { 'base-url': sandbox.baseUrl, user: sandbox.user, password: sandbox.password } });
    const sent = sandbox.requests.length;
    const flag = await runCli(['--profile', 'stagin', 'tags', 'get', '7005'], { env: { XDG_CONFIG_HOME: home } });
    assert.deepEqual(flag, {
      code: 2,
      stdout: '',
      stderr: `carectl: --profile: profile "stagin" does not exist in ${configFile}; its profiles: default, staging\n`,
    });
    const env = await runCli(['tags', 'get', '7005'], { env: { XDG_CONFIG_HOME: home, CARECTL_PROFILE: 'stagin' } });
    assert.deepEqual(env, {
      code: 2,
      stdout: '',
      stderr: `carectl: CARECTL_PROFILE: profile "stagin" does not exist in ${configFile}; its profiles: default, staging\n`,
    });
    assert.equal(sandbox.requests.length, sent);
    assert.equal((await runCli(['--profile', 'staging', 'tags', 'get', '7005'], { env: { XDG_CONFIG_HOME: home } })).code, 0);
  });

  it('is no mistake when the address comes from elsewhere, or for login, which makes it', async () => {
    writeProfiles({ staging: { output: 'json' } });
    const env = { XDG_CONFIG_HOME: home, CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
    assert.equal((await runCli(['--profile', 'new', 'tags', 'get', '7005'], { env })).code, 0);
    const login = await runCli(['--profile', 'new', 'login', '--base-url', sandbox.baseUrl, '--user', sandbox.user, '--password-stdin'], {
      stdin: `${sandbox.password}\n`,
      env: { XDG_CONFIG_HOME: home },
    });
    assert.equal(login.code, 0, login.stderr);
  });

  it('the default profile, not chosen, still says there is no base address', async () => {
    writeProfiles({ staging: { output: 'json' } });
    const result = await runCli(['tags', 'get', '7005'], { env: { XDG_CONFIG_HOME: home } });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^carectl: no base address/);
  });
});
