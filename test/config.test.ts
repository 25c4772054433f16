/** Profiles: the config file's place, modes and schema; login, logout and config commands; precedence. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, beforeEach, describe, it } from 'node:test';
import { realSleep, type Io } from '../src/core/io.js';
import { run } from '../src/main.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { Collector, apiRequests, openSandbox, runCli, type RunResult } from './helpers.js';

let sandbox: Sandbox;
let home: string;
let configFile: string;
const homes: string[] = [];

before(async () => {
  sandbox = await openSandbox();
});
after(async () => {
  await sandbox.close();
});
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'carectl-config-'));
  homes.push(home);
  configFile = path.join(home, 'carectl', 'config.json');
});

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** carectl with only the config file (no CARECTL_* credentials in the environment). */
function runWithConfig(argv: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<RunResult> {
  return runCli(argv, { ...(options.stdin !== undefined && { stdin: options.stdin }), env: { XDG_CONFIG_HOME: home, ...options.env } });
}

function login(password = sandbox.password, extra: string[] = []): Promise<RunResult> {
  return runWithConfig([...extra, 'login', '--base-url', sandbox.baseUrl, '--user', sandbox.user, '--password-stdin'], { stdin: `${password}\n` });
}

function storedConfig(): unknown {
  return JSON.parse(readFileSync(configFile, 'utf8'));
}

function mode(file: string): number {
  return statSync(file).mode & 0o777;
}

/**
 * bin/carectl.js with a preload that makes loading conf fail (the bundle reads its lazy conf.cjs
 * itself; the package would be required): a command that loads it cannot succeed.
 */
function carectlWithoutConf(argv: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string }> {
  const hook = path.join(home, 'no-conf.cjs');
  writeFileSync(
    hook,
    `const fs = require('node:fs');\n` +
      `const Module = require('node:module');\n` +
      `const refuse = (name) => { if (/(^|[\\\\/])conf(\\.cjs)?$/.test(String(name))) throw new Error('conf was loaded'); };\n` +
      `const readFileSync = fs.readFileSync;\n` +
      `fs.readFileSync = function (file, ...rest) { refuse(file); return readFileSync.call(this, file, ...rest); };\n` +
      `const load = Module._load;\n` +
      `Module._load = function (request, ...rest) { refuse(request); return load.call(this, request, ...rest); };\n`,
  );
  const bin = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));
  return promisify(execFile)(process.execPath, ['--require', hook, bin, ...argv], { env });
}

/** carectl on a terminal: stdin is a TTY that can switch to raw mode (recorded). */
async function runOnTerminal(argv: string[], input: string[], signal?: AbortSignal): Promise<RunResult & { rawModes: boolean[] }> {
  const rawModes: boolean[] = [];
  const stdin = Object.assign(Readable.from(input), { setRawMode: (raw: boolean) => rawModes.push(raw) });
  const stdout = new Collector();
  const stderr = new Collector();
  const io: Io = {
    stdout: { stream: stdout, isTTY: true },
    stderr: { stream: stderr, isTTY: true },
    stdin: { stream: stdin, isTTY: true },
    env: { PATH: process.env.PATH, XDG_CONFIG_HOME: home },
    cwd: home,
    now: () => Date.now(),
    sleep: realSleep,
    signal: signal ?? new AbortController().signal,
  };
  const code = await run(argv, io);
  return { code, stdout: stdout.text, stderr: stderr.text, rawModes };
}

describe('config file', () => {
  it('lives in $XDG_CONFIG_HOME/carectl/config.json, folder 0700 and file 0600 under umask 022', async () => {
    const previous = process.umask(0o022);
    try {
      const result = await runWithConfig(['config', 'set', 'output', 'json']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(mode(path.join(home, 'carectl')), 0o700);
      assert.equal(mode(configFile), 0o600);
      assert.deepEqual(storedConfig(), { profiles: { default: { output: 'json' } } });
      assert.equal((await runWithConfig(['config', 'path'])).stdout, `${configFile}\n`);
    } finally {
      process.umask(previous);
    }
  });

  it('tightens a folder and file that were readable by others when it writes', async () => {
    const previous = process.umask(0o022);
    try {
      mkdirSync(path.join(home, 'carectl'), { mode: 0o755 });
      writeFileSync(configFile, '{"profiles":{}}', { mode: 0o644 });
      chmodSync(path.join(home, 'carectl'), 0o755);
      chmodSync(configFile, 0o644);
      assert.equal((await runWithConfig(['config', 'set', 'api-version', 'v1.3'])).code, 0);
      assert.equal(mode(path.join(home, 'carectl')), 0o700);
      assert.equal(mode(configFile), 0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('tightens a readable file before writing the password into it, also under a Snap (SNAP set)', async () => {
    // conf writes in place, keeping the file's mode, when SNAP is set (node installed as a snap)
    const previous = process.env.SNAP;
    process.env.SNAP = '/snap/node/current';
    try {
      mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
      writeFileSync(configFile, '{"profiles":{"default":{"output":"json"}}}');
      chmodSync(configFile, 0o644);
      assert.equal((await login()).code, 0);
      assert.equal((storedConfig() as { profiles: { default: { password?: string } } }).profiles.default.password, sandbox.password);
      assert.equal(mode(configFile), 0o600);
    } finally {
      if (previous === undefined) delete process.env.SNAP;
      else process.env.SNAP = previous;
    }
  });

  it('defaults to ~/.config/carectl without XDG_CONFIG_HOME (and ignores a relative one)', async () => {
    for (const xdg of [undefined, 'relative/config']) {
      const result = await runCli(['config', 'path'], { env: { HOME: home, XDG_CONFIG_HOME: xdg } });
      assert.equal(result.stdout, `${path.join(home, '.config', 'carectl', 'config.json')}\n`);
    }
  });

  it('is not created or touched by commands that only read it', async () => {
    const env = { CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env })).code, 0);
    assert.equal((await runWithConfig(['config', 'list'])).code, 0);
    assert.equal((await runWithConfig(['config', 'unset', 'output'])).code, 0);
    assert.equal((await runWithConfig(['logout'])).code, 0);
    assert.equal(existsSync(path.join(home, 'carectl')), false);

    assert.equal((await runWithConfig(['config', 'set', 'output', 'json'])).code, 0);
    const before = readFileSync(configFile, 'utf8');
    utimesSync(configFile, new Date('2020-01-01'), new Date('2020-01-01'));
    const mtime = statSync(configFile).mtimeMs;
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env })).code, 0);
    assert.equal((await runWithConfig(['config', 'list'])).code, 0);
    assert.equal((await runWithConfig(['config', 'get', 'output'])).stdout, 'json\n');
    assert.equal(statSync(configFile).mtimeMs, mtime);
    assert.equal(readFileSync(configFile, 'utf8'), before);
  });

  it('is never loaded (nor conf) when the environment gives everything and no file exists', async () => {
    // A preload makes loading conf fail (the bundle reads its lazy conf.cjs itself; the package
    // would be required): a command that loads it cannot succeed.
    const env = {
      PATH: process.env.PATH,
      XDG_CONFIG_HOME: home,
      CARECTL_BASE_URL: sandbox.baseUrl,
      CARECTL_USER: sandbox.user,
      CARECTL_PASSWORD: sandbox.password,
    };
    const carectl = (...argv: string[]) => carectlWithoutConf(argv, env);
    assert.match((await carectl('tags', 'get', '7005')).stdout, /^id\tname/);
    await assert.rejects(carectl('config', 'set', 'output', 'json'), /conf was loaded/, 'the hook does stop conf');
  });

  it('is read without conf: a logged-in lookup, a list and config get|list load it not; only a write does (issue 47)', async () => {
    assert.equal((await login()).code, 0);
    assert.equal((await runWithConfig(['config', 'set', 'output', 'json'])).code, 0);
    const carectl = (...argv: string[]) => carectlWithoutConf(argv, { PATH: process.env.PATH, XDG_CONFIG_HOME: home });
    assert.equal(JSON.parse((await carectl('tags', 'get', '7005')).stdout).id, '7005');
    assert.equal(JSON.parse((await carectl('conversations', 'list', '--limit', '1')).stdout).length, 1);
    assert.equal((await carectl('config', 'get', 'output')).stdout, 'json\n');
    assert.match((await carectl('config', 'list')).stdout, /output/);
    await assert.rejects(carectl('config', 'set', 'output', 'csv'), /conf was loaded/, 'the hook does stop conf');
  });

  const broken: Array<[string, string, RegExp]> = [
    ['not JSON', '{"profiles": {"default": {"password": "hunter2-corrupt"', /not valid JSON/],
    ['a bad value', '{"profiles": {"default": {"output": "xml", "password": "hunter2-corrupt"}}}', /profiles\/default\/output/],
    [
      'an unknown key',
      '{"profiles": {"default": {"baseurl": "https://x.example", "password": "hunter2-corrupt"}}, "colour": 1}',
      /not a valid carectl configuration: .*\(unknown: colour \(top level\), baseurl \(profile "default"\); a profile takes base-url, user, password, output, api-version, annotations-url, parallel\)/,
    ],
    ['a bad profile name', '{"profiles": {"__proto__x": {"password": "hunter2-corrupt"}}}', /not a valid carectl configuration/],
    ['a number for a text', '{"profiles": {"default": {"user": 5, "password": "hunter2-corrupt"}}}', /`profiles\/default\/user` must be string/],
    ['a list for the file', '["hunter2-corrupt"]', /not a valid carectl configuration: the file is not a JSON object/],
  ];
  for (const [what, content, reason] of broken) {
    it(`with ${what} is an error naming its path (exit 2), never rewritten, nothing sent`, async () => {
      mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
      writeFileSync(configFile, content, { mode: 0o600 });
      utimesSync(configFile, new Date('2020-01-01'), new Date('2020-01-01'));
      const mtime = statSync(configFile).mtimeMs;
      const sent = sandbox.requests.length;
      const env = { CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
      const runs = [
        await runWithConfig(['config', 'list']),
        await runWithConfig(['config', 'set', 'output', 'json']),
        await runWithConfig(['config', 'unset', 'output']),
        await runWithConfig(['logout']),
        await login(),
        // the output format may come from the profile, so even a fully configured cron job reads it
        await runWithConfig(['tags', 'get', '7005'], { env }),
      ];
      for (const result of runs) {
        assert.equal(result.code, 2, result.stderr);
        assert.ok(result.stderr.includes(configFile), result.stderr);
        assert.match(result.stderr, reason);
        assert.ok(!result.stderr.includes('hunter2-corrupt'), 'the file content is not quoted');
        assert.equal(result.stdout, '');
      }
      assert.equal(readFileSync(configFile, 'utf8'), content);
      assert.equal(statSync(configFile).mtimeMs, mtime);
      assert.equal(sandbox.requests.length, sent);
    });
  }
});

describe('login', () => {
  it('with --password-stdin checks the credentials with one request, then stores them', async () => {
    const sent = sandbox.requests.length;
    const result = await login();
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /logged in to http:\/\/127\.0\.0\.1:\d+ as demo/);
    const requests = apiRequests(sandbox, sent);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]?.method, 'GET');
    assert.equal(requests[0]?.url, '/v1.3/tags?page_size=1');
    assert.equal(requests[0]?.authorization, basic(sandbox.user, sandbox.password));
    assert.deepEqual(storedConfig(), { profiles: { default: { 'base-url': sandbox.baseUrl, user: sandbox.user, password: sandbox.password } } });
    assert.equal(mode(configFile), 0o600);

    // later commands use the profile without any CARECTL_* variable
    const tag = await runWithConfig(['-o', 'json', 'tags', 'get', '7005']);
    assert.equal(tag.code, 0, tag.stderr);
    assert.equal((JSON.parse(tag.stdout) as { id: string }).id, '7005');
  });

  it('stores into the profile chosen with --profile or CARECTL_PROFILE', async () => {
    assert.equal((await login(sandbox.password, ['--profile', 'staging'])).code, 0);
    const profiles = (storedConfig() as { profiles: Record<string, unknown> }).profiles;
    assert.deepEqual(Object.keys(profiles), ['staging']);
    const fromDefault = await runWithConfig(['tags', 'get', '7005']);
    assert.equal(fromDefault.code, 2, 'the default profile holds nothing');
    assert.match(fromDefault.stderr, /no base address/);
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env: { CARECTL_PROFILE: 'staging' } })).code, 0);
    // The flag beats the variable.
    assert.equal((await runWithConfig(['--profile', 'staging', 'tags', 'get', '7005'], { env: { CARECTL_PROFILE: 'default' } })).code, 0);
    assert.equal((await runWithConfig(['--profile', 'default', 'tags', 'get', '7005'], { env: { CARECTL_PROFILE: 'staging' } })).code, 2);
    assert.equal((await runWithConfig(['--profile', 'bad/name', 'config', 'list'])).code, 2);
  });

  it('with a wrong password exits 3 and stores nothing', async () => {
    const result = await login('wrong-password');
    assert.equal(result.code, 3);
    assert.match(result.stderr, /refused these credentials, nothing was stored/);
    assert.equal(existsSync(configFile), false);

    assert.equal((await runWithConfig(['config', 'set', 'output', 'json'])).code, 0);
    const before = readFileSync(configFile, 'utf8');
    assert.equal((await login('wrong-again')).code, 3);
    assert.equal(readFileSync(configFile, 'utf8'), before);
  });

  it('never prompts without a terminal: it says how, exits 2 and sends nothing', async () => {
    const sent = sandbox.requests.length;
    const result = await runWithConfig(['login', '--base-url', sandbox.baseUrl, '--user', 'demo'], { stdin: 'typed-ahead\n' });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no terminal to ask for the password.*--password-stdin.*CARECTL_USER and CARECTL_PASSWORD/);
    assert.doesNotMatch(result.stderr, /password for/);

    const noUser = await runWithConfig(['login', '--base-url', sandbox.baseUrl, '--password-stdin'], { stdin: 'x\n' });
    assert.equal(noUser.code, 2);
    assert.match(noUser.stderr, /--user NAME/);
    const noBase = await runWithConfig(['login', '--user', 'demo', '--password-stdin'], { stdin: 'x\n' });
    assert.equal(noBase.code, 2);
    assert.match(noBase.stderr, /--base-url URL/);
    assert.equal((await runWithConfig(['--sandbox', 'login', '--password-stdin'], { stdin: 'x\n' })).code, 2);
    const twoLines = await runWithConfig(['login', '--base-url', sandbox.baseUrl, '--user', 'demo', '--password-stdin'], { stdin: 'a\nb\n' });
    assert.equal(twoLines.code, 2);
    assert.equal(sandbox.requests.length, sent);
    assert.equal(existsSync(configFile), false);
  });

  it('on a terminal asks for the user, and for the password in raw mode without echo', async () => {
    const result = await runOnTerminal(
      ['login', '--base-url', sandbox.baseUrl],
      ['demo\n', `${sandbox.password.slice(0, -1)}X\u007f${sandbox.password.slice(-1)}\r`],
    );
    assert.equal(result.code, 0, result.stderr);
    // the terminal echoes the user name as typed (readline draws it), never the password
    assert.match(result.stderr, new RegExp(`user for ${sandbox.baseUrl}: (\\x1b\\[\\d+G)?demo\r\n.*password for demo: (\\x1b\\[\\d+G)?\n`, 's'));
    assert.deepEqual(result.rawModes, [true, false, true, false]);
    assert.ok(!result.stderr.includes(sandbox.password));
    assert.deepEqual(storedConfig(), { profiles: { default: { 'base-url': sandbox.baseUrl, user: 'demo', password: sandbox.password } } });
  });

  it('on a terminal stops at Ctrl-C (exit 130), restores the terminal and stores nothing', async () => {
    const sent = sandbox.requests.length;
    const result = await runOnTerminal(['login', '--base-url', sandbox.baseUrl, '--user', 'demo'], ['sec\u0003']);
    assert.equal(result.code, 130);
    assert.deepEqual(result.rawModes, [true, false]);
    assert.equal(existsSync(configFile), false);
    assert.equal(sandbox.requests.length, sent);
  });
});

describe('logout and config commands', () => {
  it('logout removes the stored user and password and keeps the other settings', async () => {
    assert.equal((await login()).code, 0);
    assert.equal((await runWithConfig(['config', 'set', 'output', 'json'])).code, 0);
    const result = await runWithConfig(['logout']);
    assert.equal(result.code, 0);
    assert.match(result.stderr, /removed the stored credentials of profile "default"/);
    assert.deepEqual(storedConfig(), { profiles: { default: { 'base-url': sandbox.baseUrl, output: 'json' } } });
    const after = await runWithConfig(['tags', 'get', '7005']);
    assert.equal(after.code, 3);
    assert.match((await runWithConfig(['logout'])).stderr, /holds no stored credentials/);
  });

  it('config list shows every profile and masks the password', async () => {
    assert.equal((await login()).code, 0);
    assert.equal((await runWithConfig(['--profile', 'other', 'config', 'set', 'api-version', 'v1.2'])).code, 0);
    const tsv = await runWithConfig(['config', 'list']);
    assert.equal(tsv.code, 0);
    assert.equal(
      tsv.stdout,
      [
        'profile\tkey\tvalue',
        `default\tbase-url\t${sandbox.baseUrl}`,
        'default\tuser\tdemo',
        'default\tpassword\t********',
        'other\tapi-version\tv1.2',
        '',
      ].join('\n'),
    );
    const json = await runWithConfig(['-o', 'json', 'config', 'list']);
    assert.deepEqual(JSON.parse(json.stdout)[2], { profile: 'default', key: 'password', value: '********' });
    assert.ok(!json.stdout.includes(sandbox.password));
    // --columns picks among profile, key and value, as on any list; another is exit 2, not ignored
    const keys = await runWithConfig(['config', 'list', '--columns', 'key,value']);
    assert.deepEqual(keys, { code: 0, stdout: `key\tvalue\nbase-url\t${sandbox.baseUrl}\nuser\tdemo\npassword\t********\napi-version\tv1.2\n`, stderr: '' });
    const other = await runWithConfig(['config', 'list', '--columns', 'name']);
    assert.deepEqual(other, {
      code: 2,
      stdout: '',
      stderr: 'carectl: --columns: unknown column "name"; accepted: profile, key, value (dotted paths allowed; --columns help lists them)\n',
    });
    const help = await runWithConfig(['config', 'list', '--columns', 'help']);
    assert.deepEqual(help, {
      code: 0,
      stdout:
        'The columns of config list, for --columns LIST (comma-separated); those marked\ndefault are shown without it.\n\n  profile  default\n  key      default\n  value    default\n',
      stderr: '',
    });
  });

  it('config set/get/unset round-trip', async () => {
    assert.equal((await runWithConfig(['config', 'set', 'base-url', 'https://api.example.com'])).code, 0);
    assert.equal((await runWithConfig(['config', 'get', 'base-url'])).stdout, 'https://api.example.com\n');
    assert.equal((await runWithConfig(['config', 'unset', 'base-url'])).code, 0);
    const missing = await runWithConfig(['config', 'get', 'base-url']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /base-url is not set in profile "default"/);
  });

  const invalid: Array<[string[], RegExp]> = [
    [['config', 'set', 'output', 'xml'], /output: "xml" is not one of table, json, ndjson, csv, tsv/],
    [['config', 'set', 'api-version', 'v9'], /api-version: "v9" is not one of/],
    [['config', 'set', 'base-url', 'http://api.example.com'], /--insecure-http/],
    [['config', 'set', 'base-url', 'not a url'], /is not a URL/],
    [['config', 'set', 'user', 'a:b'], /cannot contain ":"/],
    [['config', 'set', 'password', 'x'], /carectl login/],
    [['config', 'get', 'password'], /never printed/],
    [['config', 'unset', 'password'], /carectl logout/],
    [['config', 'set', 'colour', 'x'], /"colour" is not one of base-url, user, output, api-version/],
  ];
  for (const [argv, message] of invalid) {
    it(`${argv.join(' ')} is a usage error (exit 2) that writes nothing`, async () => {
      const result = await runWithConfig(argv);
      assert.equal(result.code, 2);
      assert.match(result.stderr, message);
      assert.equal(existsSync(configFile), false);
    });
  }

  it('config set base-url accepts plain http on another host only with --insecure-http', async () => {
    assert.equal((await runWithConfig(['--insecure-http', 'config', 'set', 'base-url', 'http://api.example.com'])).code, 0);
    assert.equal((await runWithConfig(['config', 'get', 'base-url'])).stdout, 'http://api.example.com\n');
  });

  it("another stored user name drops the stored password, which was the old user's", async () => {
    assert.equal((await login()).code, 0);
    assert.equal((await runWithConfig(['config', 'set', 'user', sandbox.user])).stderr, '', 'the same user keeps it');
    const changed = await runWithConfig(['config', 'set', 'user', 'bob']);
    assert.equal(changed.code, 0);
    assert.equal(changed.stderr, `removed the stored password of profile "default": it was demo's; run \`carectl login\` as bob\n`);
    assert.deepEqual(storedConfig(), { profiles: { default: { 'base-url': sandbox.baseUrl, user: 'bob' } } });
  });

  it('moving a profile to another origin drops its stored credentials', async () => {
    assert.equal((await login()).code, 0);
    assert.equal((await runWithConfig(['config', 'set', 'base-url', `${sandbox.baseUrl}/`])).code, 0, 'same origin keeps them');
    assert.equal((storedConfig() as { profiles: { default: { password?: string } } }).profiles.default.password, sandbox.password);
    const moved = await runWithConfig(['config', 'set', 'base-url', 'https://elsewhere.example']);
    assert.equal(moved.code, 0);
    assert.match(moved.stderr, /removed the stored credentials/);
    assert.deepEqual(storedConfig(), { profiles: { default: { 'base-url': 'https://elsewhere.example' } } });
  });
});

describe('precedence: flag > environment > profile > default', () => {
  async function expected(format: string): Promise<string> {
    const result = await runCli(['-o', format, 'tags', 'get', '7005'], { sandbox });
    assert.equal(result.code, 0);
    return result.stdout;
  }

  it('for the output format', async () => {
    const env = { CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env })).stdout, await expected('tsv'), 'default off a terminal: tsv');
    assert.equal((await runWithConfig(['config', 'set', 'output', 'json'])).code, 0);
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env })).stdout, await expected('json'));
    const withEnv = { ...env, CARECTL_OUTPUT: 'ndjson' };
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env: withEnv })).stdout, await expected('ndjson'));
    assert.equal((await runWithConfig(['-o', 'csv', 'tags', 'get', '7005'], { env: withEnv })).stdout, await expected('csv'));
  });

  it('for the api version', async () => {
    const env = { CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
    const versionUsed = async (argv: string[], extra: Record<string, string> = {}): Promise<string | undefined> => {
      const sent = sandbox.requests.length;
      const result = await runWithConfig([...argv, 'tags', 'get', '7005'], { env: { ...env, ...extra } });
      assert.equal(result.code, 0, result.stderr);
      return apiRequests(sandbox, sent)[0]?.url.split('/')[1];
    };
    assert.equal(await versionUsed([]), 'v1.3');
    assert.equal((await runWithConfig(['config', 'set', 'api-version', 'v1.1'])).code, 0);
    assert.equal(await versionUsed([]), 'v1.1');
    assert.equal(await versionUsed([], { CARECTL_API_VERSION: 'v1.2' }), 'v1.2');
    assert.equal(await versionUsed(['--api-version', 'v1.3'], { CARECTL_API_VERSION: 'v1.2' }), 'v1.3');
    // a standing default is passed over where the resource lacks that version; a flag is not
    const accounts = await runWithConfig(['accounts', 'list'], { env: { ...env, CARECTL_API_VERSION: 'v1.2' } });
    assert.equal(accounts.code, 0, accounts.stderr);
    const flagged = await runWithConfig(['--api-version', 'v1.2', 'accounts', 'list'], { env });
    assert.equal(flagged.code, 2);
    assert.match(flagged.stderr, /--api-version: "v1.2" is not one of v1/);
  });

  it('for the address, user and password', async () => {
    assert.equal((await login()).code, 0);
    const dead = 'http://127.0.0.1:9';
    // the environment's address wins over the profile's, whose credentials then stay home
    const envBase = await runWithConfig(['tags', 'get', '7005'], { env: { CARECTL_BASE_URL: dead } });
    assert.equal(envBase.code, 3);
    assert.match(
      envBase.stderr,
      /no credentials for http:\/\/127\.0\.0\.1:9: for scripts and cron set CARECTL_USER and CARECTL_PASSWORD; people can run `carectl login`/,
    );
    // a password from the environment without the user, which stayed with the profile's address: the message says which half is missing
    const noUser = await runWithConfig(['tags', 'get', '7005'], { env: { CARECTL_BASE_URL: dead, CARECTL_PASSWORD: 'from-env' } });
    assert.equal(noUser.code, 3);
    assert.match(noUser.stderr, /^carectl: no user name \(the password is set\) for http:\/\/127\.0\.0\.1:9: /);
    // the flag wins over the environment, and the profile's credentials belong to that address
    assert.equal((await runWithConfig(['--base-url', sandbox.baseUrl, 'tags', 'get', '7005'], { env: { CARECTL_BASE_URL: dead } })).code, 0);

    const sent = sandbox.requests.length;
    assert.equal((await runWithConfig(['tags', 'get', '7005'], { env: { CARECTL_PASSWORD: 'from-env' } })).code, 3);
    assert.equal(apiRequests(sandbox, sent)[0]?.authorization, basic('demo', 'from-env'));
    // the stored password is the stored user's: another user name does not get it
    const otherUser = await runWithConfig(['tags', 'get', '7005'], { env: { CARECTL_USER: 'env-user' } });
    assert.equal(otherUser.code, 3);
    assert.match(otherUser.stderr, /^carectl: no password for user "env-user" at http:\/\/127\.0\.0\.1:\d+: /);
    assert.equal(apiRequests(sandbox, sent).length, 1, 'nothing sent as env-user');
    assert.equal((await runWithConfig(['--user', 'demo', 'tags', 'get', '7005'], { env: { CARECTL_USER: 'env-user' } })).code, 0);
    assert.equal(apiRequests(sandbox, sent)[1]?.authorization, basic('demo', sandbox.password));
  });

  it('an api version that is no version at all exits 2 naming where it came from, and sends nothing', async () => {
    const env = { CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
    const sent = sandbox.requests.length;
    const result = await runWithConfig(['tags', 'get', '7005'], { env: { ...env, CARECTL_API_VERSION: 'v9' } });
    assert.deepEqual(result, { code: 2, stdout: '', stderr: 'carectl: CARECTL_API_VERSION: "v9" is not one of v1, v1.1, v1.2, v1.3, api/1\n' });
    assert.equal(sandbox.requests.length, sent);
  });

  it('--sandbox with its own address or user given too exits 2 and starts nothing', async () => {
    for (const flag of [
      ['--base-url', 'https://api.example.com'],
      ['--user', 'bob'],
      ['--annotations-url', 'https://api1.example.com'],
    ]) {
      const result = await runWithConfig(['--sandbox', ...flag, 'tags', 'get', '7005']);
      assert.equal(result.code, 2, flag.join(' '));
      assert.equal(result.stderr, `carectl: --sandbox: cannot be combined with ${flag[0]}; the sandbox brings its own address and demo credentials\n`);
      assert.equal(result.stdout, '');
    }
  });

  it('--sandbox refuses the commands that change the stored profile, and leaves it as it was', async () => {
    assert.equal((await login()).code, 0);
    const before = readFileSync(configFile, 'utf8');
    for (const argv of [['logout'], ['config', 'set', 'output', 'csv'], ['config', 'unset', 'user'], ['login', '--password-stdin']]) {
      const result = await runWithConfig(['--sandbox', ...argv], { stdin: 'x\n' });
      assert.equal(result.code, 2, argv.join(' '));
      const command = argv[0] === 'config' ? `config ${argv[1]}` : argv[0];
      assert.equal(
        result.stderr,
        `carectl: ${command}: --sandbox brings its own address and demo credentials; it neither uses nor changes the stored profile\n`,
      );
    }
    assert.equal(readFileSync(configFile, 'utf8'), before);
  });

  it('a profile name is checked whether or not a config file exists; an empty CARECTL_PROFILE is unset', async () => {
    const env = { CARECTL_BASE_URL: sandbox.baseUrl, CARECTL_USER: sandbox.user, CARECTL_PASSWORD: sandbox.password };
    const sent = sandbox.requests.length;
    for (const [argv, extra, source] of [
      [['--profile', 'a/b'], {}, '--profile'],
      [[], { CARECTL_PROFILE: 'a/b' }, 'CARECTL_PROFILE'],
    ] as const) {
      const result = await runWithConfig([...argv, 'tags', 'get', '7005'], { env: { ...env, ...extra } });
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr,
        `carectl: ${source}: "a/b" is not a profile name; use letters, digits, '.', '_' and '-' (up to 64, starting with a letter or digit)\n`,
      );
    }
    assert.equal(sandbox.requests.length, sent);
    assert.equal((await runWithConfig(['config', 'set', 'output', 'json'], { env: { CARECTL_PROFILE: '' } })).code, 0);
    assert.deepEqual(storedConfig(), { profiles: { default: { output: 'json' } } });
  });

  it('missing credentials exit 3 with how to give them, and send nothing', async () => {
    const sent = sandbox.requests.length;
    const result = await runWithConfig(['tags', 'list'], { env: { CARECTL_BASE_URL: sandbox.baseUrl } });
    assert.equal(result.code, 3);
    assert.match(result.stderr, /CARECTL_USER and CARECTL_PASSWORD/);
    assert.match(result.stderr, /carectl login/);
    assert.equal(sandbox.requests.length, sent);
  });
});

after(() => {
  for (const folder of homes) rmSync(folder, { recursive: true, force: true });
});
