/**
 * --parallel: where the setting comes from and how a bad value is refused; lists and update
 * batches with several requests in flight give the same output as one at a time.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli, sandboxEnv, type RunOptions } from './helpers.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox({ conversations: 400 });
});
after(async () => {
  await sandbox.close();
});

const cli = (argv: string[], options: RunOptions = {}) => runCli(argv, { sandbox, ...options });

describe('--parallel, CARECTL_PARALLEL and the profile key parallel', () => {
  test('a bad value is a one-line usage error naming where it came from and the range; nothing is sent', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'carectl-parallel-'));
    mkdirSync(path.join(home, 'carectl'));
    writeFileSync(path.join(home, 'carectl', 'config.json'), JSON.stringify({ profiles: { default: { parallel: '40' } } }));
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['--parallel', '0'], {}, '--parallel: must be an integer from 1 to 32 (got "0")'],
      [['--parallel', 'many'], {}, '--parallel: must be an integer from 1 to 32 (got "many")'],
      [[], { CARECTL_PARALLEL: '33' }, 'CARECTL_PARALLEL: must be an integer from 1 to 32 (got "33")'],
      [[], { XDG_CONFIG_HOME: home }, 'parallel in profile "default": must be an integer from 1 to 32 (got "40")'],
    ];
    for (const [flags, env, message] of cases) {
      for (const command of [['conversations', 'list'], ['conversations', 'update', '500002', '--status', 'on_hold']]) {
        const mark = sandbox.requests.length;
        const result = await cli([...command, ...flags], { env });
        assert.equal(result.code, 2, `${command.join(' ')} ${flags.join(' ')}`);
        assert.equal(result.stderr, `carectl: ${message}\n`);
        assert.equal(apiRequests(sandbox, mark).length, 0);
      }
    }
    // The flag wins over the environment, the environment over the profile.
    assert.equal((await cli(['tags', 'list', '--parallel', '2'], { env: { CARECTL_PARALLEL: '33' } })).code, 0);
    assert.equal((await cli(['tags', 'list'], { env: { CARECTL_PARALLEL: '3', XDG_CONFIG_HOME: home } })).code, 0);
  });

  test('config set parallel checks the value and stores it; get reads it back', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'carectl-parallel-'));
    const env = { ...sandboxEnv(sandbox), XDG_CONFIG_HOME: home };
    const refused = await runCli(['config', 'set', 'parallel', '0'], { env });
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr, 'carectl: parallel: must be an integer from 1 to 32 (got "0")\n');
    assert.equal((await runCli(['config', 'set', 'parallel', '12'], { env })).code, 0);
    assert.equal((await runCli(['config', 'get', 'parallel'], { env })).stdout, '12\n');
  });

  test('a command that sends one request does not take --parallel', async () => {
    const result = await cli(['tags', 'get', '7001', '--parallel', '4']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'carectl: --parallel: `carectl tags get` does not take it\n');
  });
});
