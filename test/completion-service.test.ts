/**
 * Completion from the service: the cache (fresh, stale, per profile and address, a broken file),
 * `carectl __complete names|ids|close-reasons` against the sandbox, a closed port and a service
 * that never answers, and the scripts running it.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { COMPLETION_FILE_NAME, FILL_FOR_MS, FRESH_FOR_MS, openCompletionCache } from '../src/config/completion-cache.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { fileURLToPath } from 'node:url';
import { apiRequests, fakeClock, freePort, openSandbox, runCli } from './helpers.js';
import { json, serve } from './scripted-server.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

function installed(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0;
}

describe('the completion cache', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'carectl-completion-cache-'));
  });
  after(() => rm(home, { recursive: true, force: true }));

  const scope = { profile: 'default', base: 'https://care.example/api/' };

  test('fresh for 10 minutes, then stale with the same words; another profile or address has its own', async () => {
    const clock = fakeClock();
    const io = { env: { XDG_CONFIG_HOME: join(home, 'a') }, now: clock.now, signal: new AbortController().signal, createFolder: true };
    const cache = openCompletionCache(io);
    assert.equal(cache.words(scope, 'names tags'), undefined);
    await cache.storeWords(scope, 'names tags', ['vip', 'spam']);
    assert.deepEqual(cache.words(scope, 'names tags'), { words: ['vip', 'spam'], fresh: true });
    clock.advance(FRESH_FOR_MS - 1);
    assert.equal(cache.words(scope, 'names tags')?.fresh, true);
    clock.advance(1);
    assert.deepEqual(cache.words(scope, 'names tags'), { words: ['vip', 'spam'], fresh: false });
    assert.equal(cache.words({ ...scope, profile: 'staging' }, 'names tags'), undefined);
    assert.equal(cache.words({ ...scope, base: 'https://other.example/api/' }, 'names tags'), undefined);
    assert.equal(cache.words(scope, 'names channels'), undefined);
    assert.equal((await stat(cache.path)).mode & 0o777, 0o600);
    assert.equal((await stat(join(home, 'a', 'carectl'))).mode & 0o777, 0o700);
  });

  test('close reasons: newest first once each, per profile and address', async () => {
    const io = { env: { XDG_CONFIG_HOME: join(home, 'b') }, now: () => 0, signal: new AbortController().signal, createFolder: true };
    const cache = openCompletionCache(io);
    assert.deepEqual(cache.closeReasons(scope), []);
    for (const reason of ['resolved', 'spam', 'resolved']) await cache.addCloseReason(scope, reason);
    assert.deepEqual(cache.closeReasons(scope), ['spam', 'resolved']);
    assert.deepEqual(cache.closeReasons({ ...scope, profile: 'other' }), []);
  });

  test('words a script could not offer (controls, format characters, empty, 300 characters) are left out on write and again on read', async () => {
    const env = { XDG_CONFIG_HOME: join(home, 'd') };
    const folder = join(home, 'd', 'carectl');
    await mkdir(folder, { recursive: true });
    const unsafe = ['red\u001b[31m', 'two\nlines', 'right\u202eleft', 'zero\u200bwidth', '', 'x'.repeat(300)];
    const kept = ['vip', 'dup $(touch FILE)', "won't fix", 'Acme Support'];
    // as an older carectl, or a hand, may have written it
    const scopeKey = JSON.stringify([scope.profile, scope.base]);
    await writeFile(
      join(folder, COMPLETION_FILE_NAME),
      JSON.stringify({ scopes: { [scopeKey]: { lists: { 'names tags': { at: 0, words: [...unsafe, ...kept] } }, closeReasons: [...kept, ...unsafe] } } }),
    );
    const cache = openCompletionCache({ env, now: () => 0, signal: new AbortController().signal, createFolder: true });
    assert.deepEqual(cache.words(scope, 'names tags')?.words, kept);
    assert.deepEqual(cache.closeReasons(scope), kept);
    await cache.storeWords(scope, 'names channels', [...unsafe, 'web']);
    for (const reason of unsafe) await cache.addCloseReason(scope, reason);
    const written = JSON.parse(await readFile(join(folder, COMPLETION_FILE_NAME), 'utf8')) as {
      scopes: Record<string, { lists: Record<string, { words: string[] }>; closeReasons: string[] }>;
    };
    assert.deepEqual(written.scopes[scopeKey]?.lists['names channels']?.words, ['web']);
    assert.deepEqual(written.scopes[scopeKey]?.closeReasons, [...kept, ...unsafe], 'a refused reason is not added');
  });

  test('a read in the background begins once a minute at most, and ends when the words are stored', async () => {
    const clock = fakeClock();
    const cache = openCompletionCache({ env: { XDG_CONFIG_HOME: join(home, 'e') }, now: clock.now, signal: new AbortController().signal, createFolder: true });
    assert.equal(await cache.startFill(scope, 'names tags'), true);
    assert.equal(await cache.startFill(scope, 'names tags'), false);
    assert.equal(await cache.startFill(scope, 'names channels'), true, 'each list its own');
    clock.advance(FILL_FOR_MS);
    assert.equal(await cache.startFill(scope, 'names tags'), true, 'a read that never stored its words is begun again');
    await cache.storeWords(scope, 'names tags', ['vip']);
    assert.equal(await cache.startFill(scope, 'names tags'), true, 'stored: a later stale read may begin at once');
  });

  test('a broken file is an empty cache, replaced by the next write', async () => {
    const folder = join(home, 'c', 'carectl');
    await mkdir(folder, { recursive: true });
    for (const text of [
      '{ not json',
      'null',
      '{"scopes":[1]}',
      '{"scopes":{"[\\"default\\",\\"https://care.example/api/\\"]":{"lists":{"names tags":{"at":"x","words":[1]}},"closeReasons":"x"}}}',
    ]) {
      await writeFile(join(folder, COMPLETION_FILE_NAME), text);
      const cache = openCompletionCache({ env: { XDG_CONFIG_HOME: join(home, 'c') }, now: () => 0, signal: new AbortController().signal, createFolder: true });
      assert.equal(cache.words(scope, 'names tags'), undefined, text);
      assert.deepEqual(cache.closeReasons(scope), [], text);
    }
    const cache = openCompletionCache({ env: { XDG_CONFIG_HOME: join(home, 'c') }, now: () => 0, signal: new AbortController().signal, createFolder: true });
    await cache.storeWords(scope, 'names tags', ['vip']);
    assert.deepEqual(cache.words(scope, 'names tags')?.words, ['vip']);
  });
});

describe('carectl __complete from the service', () => {
  let sandbox: Sandbox;
  let home: string;
  let count = 0;
  before(async () => {
    sandbox = await openSandbox();
    home = await mkdtemp(join(tmpdir(), 'carectl-complete-'));
  });
  after(async () => {
    await sandbox.close();
    await rm(home, { recursive: true, force: true });
  });
  /** A fresh config folder per test: no cache yet. */
  const fresh = (): string => join(home, String(++count));

  /**
   * A TAB's budget that never runs out, and a request timeout far from it: what the words are must
   * not depend on how busy the machine is (the budget has tests of its own below).
   */
  const patient = {
    sleep: (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
  };
  const complete = (words: string[], env: Record<string, string>) => runCli(['--request-timeout', '60s', '__complete', ...words], { sandbox, env, ...patient });

  test('names and ids of tags and channels; plain words only, other records by their id; the cache answers the next TAB', async () => {
    const env = { XDG_CONFIG_HOME: fresh() };
    const tags = await complete(['names', 'tags'], env);
    assert.equal(tags.code, 0);
    assert.equal(tags.stderr, '');
    const words = tags.stdout.split('\n').slice(0, -1);
    assert.ok(words.includes('praise-follow-up') && words.includes('order-bug'), tags.stdout);
    // a name that would print raw controls is offered as the tag's id
    assert.ok(!words.some((word) => /[\p{Cc}\p{Cf}]/u.test(word)), tags.stdout);
    assert.ok(!words.some((word) => word.includes('HYPERLINK')));
    const ids = await complete(['ids', 'channels'], env);
    assert.match(ids.stdout, /^(\d+\n)+$/);
    // Conversations have no names: after get, the ids of those that moved last, a page of them.
    const recent = await complete(['ids', 'conversations'], env);
    const newest = await runCli(
      ['conversations', 'list', '--priority', '--sort', '-newest_sort_date', '--limit', '50', '--columns', 'id', '--no-header', '--quiet'],
      {
        sandbox,
      },
    );
    assert.equal(recent.stdout, newest.stdout);
    const from = sandbox.requests.length;
    const again = await complete(['names', 'tags'], env);
    assert.equal(again.stdout, tags.stdout);
    assert.equal(apiRequests(sandbox, from).length, 0, 'fresh words are not read again');
  });

  test('after 10 minutes the words are read again', async () => {
    const env = { XDG_CONFIG_HOME: fresh() };
    const clock = fakeClock();
    await runCli(['__complete', 'names', 'tags'], { sandbox, env, now: clock.now });
    clock.advance(FRESH_FOR_MS);
    const from = sandbox.requests.length;
    const again = await runCli(['__complete', 'names', 'tags'], { sandbox, env, now: clock.now });
    assert.match(again.stdout, /praise-follow-up/);
    assert.ok(apiRequests(sandbox, from).length > 0);
  });

  test('offline (a closed port) or without credentials: nothing, exit 0', async () => {
    const port = await freePort();
    const offline = { CARECTL_BASE_URL: `http://127.0.0.1:${port}/api/`, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p', XDG_CONFIG_HOME: fresh() };
    for (const what of [['names', 'tags'], ['ids', 'channels'], ['close-reasons']]) {
      const result = await runCli(['--insecure-http', '__complete', ...what], { env: offline });
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', ''], what.join(' '));
    }
    const anonymous = await runCli(['__complete', 'names', 'tags'], { env: { CARECTL_BASE_URL: sandbox.baseUrl, XDG_CONFIG_HOME: fresh() } });
    assert.deepEqual([anonymous.code, anonymous.stdout, anonymous.stderr], [0, '', '']);
    const unknown = await runCli(['__complete', 'names', 'nosuch'], { sandbox, env: { XDG_CONFIG_HOME: fresh() } });
    assert.deepEqual([unknown.code, unknown.stdout, unknown.stderr], [0, '', '']);
  });

  test('a service that does not answer within the budget: the stale words, without waiting for it', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(silent.address() as { port: number }).port}/api/`;
    try {
      const folder = fresh();
      const clock = fakeClock();
      const cache = openCompletionCache({ env: { XDG_CONFIG_HOME: folder }, now: clock.now, signal: new AbortController().signal, createFolder: true });
      await cache.storeWords({ profile: 'default', base }, 'names tags', ['vip', 'spam']);
      clock.advance(FRESH_FOR_MS + 1);
      const env = { CARECTL_BASE_URL: base, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p', XDG_CONFIG_HOME: folder };
      // the fake clock's sleep ends the 1 s budget at once; the request would wait for its 1 s timeout
      const stale = await runCli(['--insecure-http', '__complete', 'names', 'tags'], { env, now: clock.now, sleep: clock.sleep });
      assert.deepEqual([stale.code, stale.stdout, stale.stderr], [0, 'vip\nspam\n', '']);
      assert.ok(clock.slept.includes(1000), String(clock.slept));
      const none = await runCli(['--insecure-http', '__complete', 'names', 'channels'], { env, now: clock.now, sleep: clock.sleep });
      assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', '']);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test('close reasons: those the service accepted, newest first; not one it refused, nor one of a dry run', async () => {
    const env = { XDG_CONFIG_HOME: fresh() };
    const id = (await runCli(['conversations', 'list', '--limit', '1', '--columns', 'id', '--no-header', '-o', 'tsv'], { sandbox })).stdout.trim();
    // a home without carectl's folder (cron, credentials in the environment) is left as it was
    const bare = await runCli(['conversations', 'update', id, '--status', 'closing', '--close-reason', 'resolved', '-o', 'json'], { sandbox, env });
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(existsSync(env.XDG_CONFIG_HOME), false);
    await mkdir(join(env.XDG_CONFIG_HOME, 'carectl'), { recursive: true });
    assert.deepEqual((await runCli(['__complete', 'close-reasons'], { sandbox, env })).stdout, '');
    const refused = await runCli(['conversations', 'update', id, '--status', 'closing', '--close-reason', 'nosuch-reason', '-o', 'json'], { sandbox, env });
    assert.notEqual(refused.code, 0);
    await runCli(['conversations', 'update', id, '--status', 'closing', '--close-reason', 'spam', '--dry-run'], { sandbox, env });
    assert.deepEqual((await runCli(['__complete', 'close-reasons'], { sandbox, env })).stdout, '');
    for (const reason of ['resolved', 'spam']) {
      const done = await runCli(['conversations', 'update', id, '--status', 'closing', '--close-reason', reason, '-o', 'json'], { sandbox, env });
      assert.equal(done.code, 0, done.stderr);
    }
    assert.deepEqual((await runCli(['__complete', 'close-reasons'], { sandbox, env })).stdout, 'spam\nresolved\n');
    const file = join(env.XDG_CONFIG_HOME, 'carectl', COMPLETION_FILE_NAME);
    assert.doesNotMatch(await readFile(file, 'utf8'), /nosuch-reason|password/);
  });
});

describe('__complete against a service we did not write', () => {
  const TAGS = [
    { id: '7001', name: 'Acme Support' },
    { id: '7002', name: '7001' },
    { id: '7003', name: 'dup' },
    { id: '7004', name: 'dup' },
    { id: '7005', name: 'a,b' },
    { id: '7006', name: ' padded' },
    { id: '7007', name: 'red\u001b[31m' },
    { id: '7008', name: 'dup $(touch FILE)' },
    { id: '7009', name: "won't fix" },
    { id: '7010', name: '`touch F2`' },
    { id: '7011', name: 'x'.repeat(300) },
    { id: '70\u001b12', name: '\u001b' },
    { id: '7013', name: '7003' },
  ].map((tag) => ({ ...tag, url: 'https://care.example/x', is_active: true }));
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'carectl-complete-scripted-'));
  });
  after(() => rm(home, { recursive: true, force: true }));
  const credentials = (url: string, folder: string): Record<string, string> => ({
    CARECTL_BASE_URL: `${url}/api/`,
    CARECTL_USER: 'u',
    CARECTL_PASSWORD: 'p',
    XDG_CONFIG_HOME: join(home, folder),
  });

  test('a name is offered when it finds its tag again, as it is; else the id (id:ID where it is the name of another tag); a word no script can offer, not at all', async () => {
    const server = await serve((_req, res) => json(res, 200, { tags: TAGS, paging: {} }));
    try {
      const result = await runCli(['--insecure-http', '--request-timeout', '60s', '__complete', 'names', 'tags'], {
        env: credentials(server.url, 'names'),
        sleep: () => new Promise(() => undefined),
      });
      assert.deepEqual(
        [result.code, result.stdout, result.stderr],
        [0, "Acme Support\n7002\nid:7003\n7004\n7005\n7006\n7007\ndup $(touch FILE)\nwon't fix\n`touch F2`\n7011\n7013\n", ''],
      );
    } finally {
      await server.close();
    }
  });

  test('a service slower than the budget: the TAB starts the read in a process of its own, once; that process waits for it and stores the words', async () => {
    const replies: Array<() => void> = [];
    const server = await serve((_req, res) => replies.push(() => json(res, 200, { tags: TAGS.slice(0, 2), paging: {} })));
    try {
      const env = credentials(server.url, 'fill');
      const clock = fakeClock();
      const started: Array<Readonly<Record<string, string>>> = [];
      const respawn = (extra: Readonly<Record<string, string>>): Promise<void> => Promise.resolve(void started.push(extra));
      const tab = () => runCli(['--insecure-http', '__complete', 'names', 'tags'], { env, now: clock.now, sleep: clock.sleep, respawn });
      assert.deepEqual((await tab()).stdout, '');
      assert.deepEqual(started, [{ CARECTL_COMPLETE_FILL: '1' }]);
      assert.deepEqual((await tab()).stdout, '', 'still nothing stored');
      assert.equal(started.length, 1, 'one read in the background at a time');
      // the process the TAB started: no budget, and nothing printed
      const filling = runCli(['--insecure-http', '__complete', 'names', 'tags'], {
        env: { ...env, CARECTL_COMPLETE_FILL: '1' },
        now: clock.now,
        sleep: clock.sleep,
      });
      while (replies.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      for (const reply of replies) reply();
      assert.deepEqual(await filling, { code: 0, stdout: '', stderr: '' });
      const later = await tab();
      assert.equal(later.stdout, 'Acme Support\n7002\n');
      assert.equal(started.length, 1);
    } finally {
      await server.close();
    }
  });

  test('the real command: against a service 1.5 s away, the first TAB offers nothing at once and a later TAB has the words', async () => {
    const server = await serve((_req, res) => setTimeout(() => json(res, 200, { tags: TAGS.slice(0, 1), paging: {} }), 1500));
    try {
      const env = { PATH: process.env.PATH, HOME: home, ...credentials(server.url, 'real') };
      const tab = () => run(process.execPath, [BIN, '--insecure-http', '__complete', 'names', 'tags'], { env });
      assert.equal((await tab()).stdout, '');
      const file = join(home, 'real', 'carectl', COMPLETION_FILE_NAME);
      // the read in the background ends within its request timeout; the guard only keeps a broken one from hanging the suite
      for (let waited = 0; !(existsSync(file) && (await readFile(file, 'utf8')).includes('Acme Support')); waited += 50) {
        assert.ok(waited < 30_000, 'no words stored after 30 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal((await tab()).stdout, 'Acme Support\n');
    } finally {
      await server.close();
    }
  });
});

describe('the scripts run carectl __complete for the options that name records', () => {
  let folder: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'carectl-complete-scripts-'));
    await mkdir(join(folder, 'bin'));
    // a stand-in carectl that prints words for __complete, so the script's side is tested alone
    await writeFile(
      join(folder, 'bin', 'carectl'),
      '#!/bin/sh\ncase "$*" in\n  "__complete names tags") printf "vip\\nspam\\npraise-follow-up\\n" ;;\n  "__complete names channels") printf "acme-x\\n201\\n" ;;\n  "__complete close-reasons") printf "resolved\\n" ;;\n  "__complete ids tags") printf "7001\\n7002\\n" ;;\n  "--profile work __complete ids tags"|"--profile=work __complete ids tags") printf "8001\\n" ;;\n  "--base-url http://127.0.0.1:9 --insecure-http --user ann __complete names tags") printf "elsewhere\\n" ;;\n  "--sandbox __complete ids tags") printf "9001\\n" ;;\n  "--profile evil __complete close-reasons") printf "%s\\n" resolved \'dup $(touch FILE)\' \'`touch F2`\' "won\'t fix" ;;\n  "--profile evil __complete names tags") printf "%s\\n" vip "Acme Support" \'$(touch F3)\' ;;\n  "--profile bs __complete close-reasons") printf "%s\\n" resolved twofold \'back\\slash\' \'two\\\\back\' \'a b\\c\' \'dup "q"\' \'won\\to\' ;;\n  "--profile bs __complete names tags") printf "%s\\n" vip "sp ace" \'C:\\temp\' ;;\n  "--profile colon __complete names tags") printf "%s\\n" id:7004 id:7005 \'C:\\temp\' ;;\nesac\n',
    );
    await chmod(join(folder, 'bin', 'carectl'), 0o755);
    env = { PATH: `${join(folder, 'bin')}:${process.env.PATH ?? ''}`, HOME: folder };
  });
  after(() => rm(folder, { recursive: true, force: true }));

  async function script(shell: string): Promise<string> {
    const { code, stdout, stderr } = await runCli(['completion', shell]);
    assert.equal(code, 0, stderr);
    const file = join(folder, `carectl.${shell}`);
    await writeFile(file, stdout);
    return file;
  }

  /** The candidates fish's `complete -C` gives for `line`, sorted. */
  async function fishOffers(file: string, line: string): Promise<string[]> {
    const { stdout } = await run('fish', ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C${JSON.stringify(line)}`], { cwd: folder, env });
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((entry) => entry.split('\t')[0] as string)
      .sort();
  }

  /** What zsh prints running `lines` after the script, with stand-ins for its completion builtins (they work only inside completion). */
  async function zshPrints(file: string, standIns: readonly string[], lines: readonly string[]): Promise<string> {
    const driver = ['compdef() { :; }', `source ${JSON.stringify(file)}`, ...standIns, ...lines].join('\n');
    return (await run('zsh', ['-f', '-c', driver], { cwd: folder, env })).stdout;
  }

  /** What bash's _carectl leaves in COMPREPLY for each line of words, as `print` shows it, a line each. */
  async function bashReplies(file: string, lines: readonly string[][], print = 'printf "%s\\n" "${COMPREPLY[*]-}"'): Promise<string[]> {
    const driver = [
      `source ${JSON.stringify(file)}`,
      // the line as typed (COMP_WORDS would split id:7004 and --profile=work at : and =)
      `offer() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=\${#COMP_LINE}; COMPREPLY=(); _carectl; ${print}; }`,
      ...lines.map((words) => `offer ${words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ')}`),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', driver], { cwd: folder, env });
    return stdout.split('\n').slice(0, lines.length);
  }

  test('bash: tag names as a comma list, channels, close reasons, ids after get', async () => {
    const file = await script('bash');
    const cases = [
      ['carectl', 'conversations', 'update', '1', '--add-tags', ''],
      ['carectl', 'conversations', 'update', '1', '--remove-tags', 'vip,'],
      ['carectl', 'conversations', 'list', '--tag', 's'],
      ['carectl', 'conversations', 'list', '--channel', ''],
      ['carectl', 'reports', 'create', '--channel', 'a'],
      ['carectl', 'conversations', 'update', '1', '--close-reason', ''],
      ['carectl', 'conversations', 'update', '1', '--tags', 'p'],
      ['carectl', 'tags', 'get', ''],
      ['carectl', 'tags', 'get', '7001', '70'],
    ];
    assert.deepEqual(await bashReplies(file, cases), [
      'vip spam praise-follow-up',
      'vip,spam vip,praise-follow-up',
      'spam',
      'acme-x 201',
      'acme-x',
      'resolved',
      'praise-follow-up',
      '7001 7002',
      '7001 7002',
    ]);
  });

  test(
    'zsh: the words read now go to compadd; no file names after a verb without arguments',
    { skip: installed('zsh') ? false : 'zsh is not installed' },
    async () => {
      const file = await script('zsh');
      const stdout = await zshPrints(
        file,
        [
          'compadd() { local -a out; while (( $# )); do case $1 in (-a) shift; out+=("${(@P)1}") ;; (--) shift; out+=("$@"); break ;; (-S|-P) shift ;; (-*) ;; (*) out+=("$1") ;; esac; shift; done; print -r -- "compadd ${out[*]}"; }',
          'compset() { [[ ${words[CURRENT]} == *,* ]] && IPREFIX=${words[CURRENT]%,*},; }',
          '_files() { print -r -- files; }',
          '_message() { print -r -- message; }',
          'offer() { local -a words; words=("$@"); CURRENT=$#; _carectl; print -r -- .; }',
        ],
        [
          "offer carectl conversations update 1 --add-tags 'vip,'",
          "offer carectl conversations list --channel ''",
          "offer carectl conversations update 1 --close-reason ''",
          "offer carectl tags get 7001 ''",
          "offer carectl conversations list ''",
          "offer carectl reports get ''",
        ],
      );
      assert.deepEqual(stdout.split('\n'), [
        'compadd spam praise-follow-up',
        '.',
        'compadd acme-x 201',
        '.',
        'compadd resolved',
        '.',
        'compadd 7001 7002',
        '.',
        '.',
        'files',
        '.',
        '',
      ]);
    },
  );

  test('fish: the words read now; no file names after a verb without arguments', { skip: installed('fish') ? false : 'fish is not installed' }, async () => {
    const file = await script('fish');
    const offers = (line: string): Promise<string[]> => fishOffers(file, line);
    assert.deepEqual(await offers('carectl conversations update 1 --add-tags vip,'), ['vip,praise-follow-up', 'vip,spam']);
    assert.deepEqual(await offers('carectl conversations list --channel '), ['201', 'acme-x']);
    assert.deepEqual(await offers('carectl conversations update 1 --close-reason '), ['resolved']);
    assert.deepEqual(await offers('carectl tags get 7001 '), ['7001', '7002']);
    assert.ok(!(await offers('carectl conversations list ')).includes('carectl.fish'));
    assert.ok((await offers('carectl reports get ')).includes('carectl.fish'));
  });

  const EVIL_REASONS = ['resolved', 'dup $(touch FILE)', '`touch F2`', "won't fix"];
  const EVIL = [
    ['carectl', '--profile', 'evil', 'conversations', 'update', '1', '--close-reason', ''],
    ['carectl', '--profile', 'evil', 'conversations', 'update', '1', '--close-reason', 'won'],
    ['carectl', '--profile', 'evil', 'conversations', 'update', '1', '--close-reason', '"won'],
    ['carectl', '--profile', 'evil', 'conversations', 'update', '1', '--add-tags', 'vip,'],
    ['carectl', '--profile', 'evil', 'conversations', 'list', '--tag', 'Acme\\ S'],
    // after an opening quote bash keeps it and closes it: the word as it reads inside those quotes
    ['carectl', '--profile', 'evil', 'conversations', 'list', '--tag', "'Acm"],
    ['carectl', '--profile', 'evil', 'conversations', 'update', '1', '--close-reason', '"d'],
    ['carectl', '--profile', 'evil', 'conversations', 'update', '1', '--close-reason', "'"],
  ];
  /** The files the words would make if a script ran them (removed, so each shell is judged alone). */
  const ran = async (): Promise<string[]> => {
    const made = ['FILE', 'F2', 'F3'].filter((name) => existsSync(join(folder, name)));
    await Promise.all(made.map((name) => rm(join(folder, name))));
    return made;
  };

  test("bash: the service's words are offered quoted, one each, and never run", async () => {
    const file = await script('bash');
    assert.deepEqual(await bashReplies(file, EVIL, 'printf "[%s]" "${COMPREPLY[@]}"; printf "\\n"'), [
      "[resolved][dup\\ \\$\\(touch\\ FILE\\)][\\`touch\\ F2\\`][won\\'t\\ fix]",
      "[won\\'t\\ fix]",
      "[won't fix]",
      '[vip,Acme\\ Support][vip,\\$\\(touch\\ F3\\)]',
      '[Acme\\ Support]',
      '[Acme Support]',
      '[dup \\$(touch FILE)]',
      '[resolved][dup $(touch FILE)][`touch F2`]',
    ]);
    assert.deepEqual(await ran(), []);
  });

  test('zsh: one word each to compadd, which quotes them; none runs', { skip: installed('zsh') ? false : 'zsh is not installed' }, async () => {
    const file = await script('zsh');
    const stdout = await zshPrints(
      file,
      [
        'compadd() { while (( $# )); do case $1 in (--) shift; break ;; (-S|-P) shift ;; esac; shift; done; print -rn -- "${(j:|:)@}"; }',
        'compset() { [[ ${words[CURRENT]} == *,* ]] && IPREFIX=${words[CURRENT]%,*},; }',
        'offer() { local -a words; words=("$@"); CURRENT=$#; _carectl; print; }',
      ],
      ["offer carectl --profile evil conversations update 1 --close-reason ''", "offer carectl --profile evil conversations update 1 --add-tags 'vip,'"],
    );
    assert.deepEqual(stdout.split('\n').slice(0, 2), [EVIL_REASONS.join('|'), 'Acme Support|$(touch F3)']);
    assert.deepEqual(await ran(), []);
  });

  test('fish: one candidate each; none runs', { skip: installed('fish') ? false : 'fish is not installed' }, async () => {
    const file = await script('fish');
    assert.deepEqual(await fishOffers(file, 'carectl --profile evil conversations update 1 --close-reason '), [...EVIL_REASONS].sort());
    assert.deepEqual(await fishOffers(file, 'carectl --profile evil conversations update 1 --add-tags vip,'), ['vip,$(touch F3)', 'vip,Acme Support']);
    assert.deepEqual(await ran(), []);
  });

  // Words with backslashes, and words typed with backslashes and quotes: what bash, fish or zsh will
  // read the word as is the prefix; what is offered reads back as the word in that shell.
  const BACKSLASHED = [
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', 'back'],
    // back\s: the backslash typed as \\ (stripping every backslash read it as "backs")
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', 'back\\\\s'],
    // two\\ typed: two backslashes, so not "twofold"
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', 'two\\\\\\\\'],
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', '"two\\\\\\\\'],
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', "'a b\\"],
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', '"a b\\'],
    // inside "…" bash would not close a quote after a word ending in \"
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', '"dup \\"'],
    // 'won\'t reads as won\t in bash: the quote closes after the backslash
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--close-reason', "'won\\'t"],
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--add-tags', 'sp\\ ace,'],
    ['carectl', '--profile', 'bs', 'conversations', 'update', '1', '--add-tags', 'vip,"sp'],
    ['carectl', 'conversations', 'list', '-o', '"js'],
  ];

  test('bash: a word typed with backslashes or quotes is matched as bash reads it, and each offer reads back as the word', async () => {
    const file = await script('bash');
    assert.deepEqual(await bashReplies(file, BACKSLASHED, 'printf "[%s]" "${COMPREPLY[@]}"; printf "\\n"'), [
      '[back\\\\slash]',
      '[back\\\\slash]',
      '[two\\\\\\\\back]',
      '[two\\\\\\\\back]',
      '[a b\\c]',
      '[a b\\\\c]',
      '[dup \\"q\\""]',
      // what was typed stays, the rest follows
      "['won\\'to]",
      '[sp\\ ace,vip][sp\\ ace,C:\\\\temp]',
      '[sp ace]',
      '[json]',
    ]);
    // what bash reads each offer back as is the word
    const { stdout } = await run(
      'bash',
      ['-c', 'for word in back\\\\slash two\\\\\\\\back "a b\\\\c" "dup \\"q\\"" \'won\\\'to sp\\ ace,C:\\\\temp; do printf "[%s]" "$word"; done'],
      { cwd: folder, env },
    );
    assert.equal(stdout, '[back\\slash][two\\\\back][a b\\c][dup "q"][won\\to][sp ace,C:\\temp]');
  });

  test('bash: a word with : or = (id:7004, --add-tags=…): bash splits COMP_WORDS there and replaces only what follows the last one', async () => {
    const file = await script('bash');
    // COMP_WORDS as bash makes them (split at : and =); COMP_LINE as typed
    const cases: Array<[line: string, words: string[]]> = [
      ['--add-tags id:7004,id:70', ['--add-tags', 'id', ':', '7004,id', ':', '70']],
      ['--add-tags=id:7', ['--add-tags', '=', 'id', ':', '7']],
      ['--add-tags C', ['--add-tags', 'C']],
      ['--add-tags C:\\\\', ['--add-tags', 'C', ':', '\\\\']],
      ['--tags "id:7004,id:70', ['--tags', '"id:7004,id:70']],
    ];
    const head = 'carectl --profile colon conversations update 1';
    const quoted = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;
    const driver = [
      `source ${JSON.stringify(file)}`,
      'offer() { COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _carectl; printf "[%s]" "${COMPREPLY[@]}"; printf "\\n"; }',
      ...cases.map(([line, words]) => `offer ${[`${head} ${line}`, ...head.split(' '), ...words].map(quoted).join(' ')}`),
      // a user who took : out of COMP_WORDBREAKS (as bash-completion advises) gets the whole word
      'COMP_WORDBREAKS=${COMP_WORDBREAKS//:}',
      `offer ${[`${head} --add-tags id:7004,id:70`, ...head.split(' '), '--add-tags', 'id:7004,id:70'].map(quoted).join(' ')}`,
    ].join('\n');
    const { stdout } = await run('bash', ['-c', driver], { cwd: folder, env });
    assert.deepEqual(stdout.split('\n').slice(0, cases.length + 1), [
      '[7005]',
      '[7004][7005]',
      '[C:\\\\temp]',
      '[\\\\temp]',
      '[id:7004,id:7005]',
      '[id:7004,id:7005]',
    ]);
  });

  test(
    'fish: the items of a list typed with backslashes or quotes are read as fish reads them',
    { skip: installed('fish') ? false : 'fish is not installed' },
    async () => {
      const file = await script('fish');
      assert.deepEqual(await fishOffers(file, 'carectl --profile bs conversations update 1 --add-tags sp\\ ace,'), ['sp ace,C:\\temp', 'sp ace,vip']);
      assert.deepEqual(await fishOffers(file, "carectl --profile bs conversations update 1 --add-tags 'sp ace',v"), ['sp ace,vip']);
      assert.deepEqual(await fishOffers(file, 'carectl --profile bs conversations update 1 --add-tags "C:\\\\temp",'), ['C:\\temp,sp ace', 'C:\\temp,vip']);
      assert.deepEqual(await fishOffers(file, 'carectl --profile bs conversations update 1 --close-reason back\\\\s'), ['back\\slash']);
    },
  );

  test(
    'zsh: the items of a list typed with backslashes are left out as zsh reads them',
    { skip: installed('zsh') ? false : 'zsh is not installed' },
    async () => {
      const file = await script('zsh');
      const stdout = await zshPrints(
        file,
        [
          'compadd() { while (( $# )); do case $1 in (--) shift; break ;; (-S|-P) shift ;; esac; shift; done; print -rn -- "${(j:|:)@}"; }',
          'compset() { [[ ${words[CURRENT]} == *,* ]] && IPREFIX=${words[CURRENT]%,*},; }',
          'offer() { local -a words; words=("$@"); CURRENT=$#; _carectl; print; }',
        ],
        [
          "offer carectl --profile bs conversations update 1 --add-tags 'sp\\ ace,'",
          'offer carectl --profile bs conversations update 1 --add-tags \'vip,"sp ace",\'',
        ],
      );
      assert.deepEqual(stdout.split('\n').slice(0, 2), ['vip|C:\\temp', 'C:\\temp']);
    },
  );

  const SERVICE_LINES = [
    'carectl --profile work tags get ',
    'carectl --profile=work tags get ',
    'carectl --base-url http://127.0.0.1:9 --insecure-http --user ann conversations list --tag ',
    'carectl --sandbox -o json tags get 1 ',
  ];
  const SERVICE_WORDS = ['8001', '8001', 'elsewhere', '9001'];

  test('bash and zsh pass the options that choose the service on to carectl __complete (--profile=work too)', async () => {
    const file = await script('bash');
    assert.deepEqual(
      await bashReplies(
        file,
        SERVICE_LINES.map((line) => line.split(' ')),
      ),
      SERVICE_WORDS,
    );
    if (!installed('zsh')) return;
    const zshFile = await script('zsh');
    const zshDriver = [
      'compdef() { :; }',
      `source ${JSON.stringify(zshFile)}`,
      'compadd() { local -a out; while (( $# )); do case $1 in (-a) shift; out+=("${(@P)1}") ;; (--) shift; out+=("$@"); break ;; (-S|-P) shift ;; (-*) ;; (*) out+=("$1") ;; esac; shift; done; print -r -- "${out[*]}"; }',
      '_files() { :; }',
      '_message() { :; }',
      'offer() { local -a words; words=("$@"); CURRENT=$#; _carectl; }',
      ...SERVICE_LINES.map(
        (line) =>
          `offer ${line
            .split(' ')
            .map((word) => `'${word}'`)
            .join(' ')}`,
      ),
    ].join('\n');
    const zsh = await run('zsh', ['-f', '-c', zshDriver], { cwd: folder, env });
    assert.deepEqual(zsh.stdout.split('\n').slice(0, SERVICE_LINES.length), SERVICE_WORDS);
  });

  test('fish passes them on too', { skip: installed('fish') ? false : 'fish is not installed' }, async () => {
    const file = await script('fish');
    for (const [index, line] of SERVICE_LINES.entries()) {
      assert.deepEqual(await fishOffers(file, line), [SERVICE_WORDS[index]], line);
    }
  });
});
