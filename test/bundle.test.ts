/**
 * The bundled command (bin/carectl.js running dist/bundle/, see scripts/bundle.mjs) behaves as the
 * sources do, through the parts only the bundle has: its reduced undici, the lazy files, the code
 * caches kept in the user's cache folder, and built-ins that load only when used.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { chmod, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { text } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { asNobody, openSandbox, runCli, sandboxEnv } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

describe('the bundled command', () => {
  let sandbox: Sandbox;
  let folder: string;
  before(async () => {
    sandbox = await openSandbox();
    folder = await mkdtemp(join(tmpdir(), 'carectl-bundle-'));
  });
  after(async () => {
    await sandbox.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** Runs bin/carectl.js; `loaded` lists the node built-ins the process loaded. */
  async function bundled(argv: string[]): Promise<{ stdout: string; stderr: string; loaded: string[] }> {
    const listFile = join(folder, 'loaded.txt');
    const preload = join(folder, 'list-builtins.cjs');
    await writeFile(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listFile)}, process.moduleLoadList.join('\\n')));\n`);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--require', preload, BIN, ...argv], {
      env: { PATH: process.env.PATH, ...sandboxEnv(sandbox) },
      encoding: 'buffer',
    });
    const loaded = (await readFile(listFile, 'utf8')).split('\n').map((line) => line.replace(/^NativeModule /, ''));
    return { stdout: stdout.toString('utf8'), stderr: stderr.toString('utf8'), loaded };
  }

  test('answers a lookup as the sources do, without loading http2, tls or zlib for plain http, nor node:http or node:assert', async () => {
    const { stdout, stderr, loaded } = await bundled(['tags', 'get', '7001', '-o', 'json']);
    assert.equal(stdout, (await runCli(['tags', 'get', '7001', '-o', 'json'], { sandbox })).stdout);
    assert.equal(stderr, '', 'V8 accepted the flags bin/carectl.js sets');
    assert.ok(loaded.includes('net'), 'the list of loaded built-ins is read');
    for (const unused of ['http2', 'tls', 'zlib', 'http', 'assert']) assert.ok(!loaded.includes(unused), `${unused} was loaded`);
  });

  test('ends the process as soon as a command is done, unless something is still open', async () => {
    // beforeExit fires when node ends the process by itself, not on process.exit().
    const preload = join(folder, 'note-natural-end.cjs');
    await writeFile(preload, "process.on('beforeExit', () => process.stderr.write('ended by itself'));\n");
    const ending = async (argv: string[]): Promise<{ stdout: string; stderr: string }> =>
      promisify(execFile)(process.execPath, ['--require', preload, BIN, ...argv], { env: { PATH: process.env.PATH, ...sandboxEnv(sandbox) } });
    assert.deepEqual(await ending(['--version']), {
      stdout: `${JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version}\n`,
      stderr: '',
    });
    const lookup = await ending(['tags', 'get', '7001', '-o', 'json']);
    assert.deepEqual([JSON.parse(lookup.stdout).id, lookup.stderr], ['7001', '']);
    // The embedded sandbox's server is still closing when the command is done: node ends it.
    assert.match((await ending(['--sandbox', 'tags', 'get', '7001', '-o', 'json'])).stderr, /ended by itself$/);
  });

  /** A lookup through bin/carectl.js with `env` (XDG_CACHE_HOME, HOME, …) added to the sandbox's. */
  const lookup = async (env: Record<string, string>, as: { uid?: number; gid?: number } = {}): Promise<{ stdout: string; stderr: string }> =>
    promisify(execFile)(process.execPath, [BIN, 'tags', 'get', '7001', '-o', 'json'], {
      env: { PATH: process.env.PATH, ...sandboxEnv(sandbox), ...env },
      ...as,
    });

  /**
   * What became of each bundle file's code cache in a run of `argv` with `env`: 'accepted',
   * 'rejected' or 'none'. A file run by node (not -e, whose text would be a node flag of its own).
   */
  async function cacheUse(argv: string[], env: Record<string, string>): Promise<Record<string, string>> {
    const probe = join(folder, 'cache-use.cjs');
    await writeFile(
      probe,
      `process.argv = [process.execPath, 'carectl', ...${JSON.stringify(argv)}];
      const entry = require(${JSON.stringify(BIN)});
      entry.loadCarectl().main().then(() => process.stderr.write(JSON.stringify(entry.codeCaches())));`,
    );
    const { stderr } = await promisify(execFile)(process.execPath, [probe], { env: { PATH: process.env.PATH, ...sandboxEnv(sandbox), ...env } });
    // the last line: a list says on stderr where it stopped first
    return JSON.parse(stderr.split('\n').at(-1)!) as Record<string, string>;
  }

  /** The cache files in `cacheFolder`, by the bundle file they are of, each with its inode and content. */
  async function cacheFiles(cacheFolder: string): Promise<Record<string, { ino: number; data: Buffer }>> {
    const files: Record<string, { ino: number; data: Buffer }> = {};
    for (const name of await readdir(cacheFolder)) {
      files[name.slice(0, name.indexOf('-'))] = { ino: (await stat(join(cacheFolder, name))).ino, data: await readFile(join(cacheFolder, name)) };
    }
    return files;
  }

  test('keeps a V8 code cache of each bundle file a command ran in $XDG_CACHE_HOME/carectl, else ~/.cache/carectl, which the next run takes', async () => {
    for (const [env, cacheFolder] of [
      [{ XDG_CACHE_HOME: join(folder, 'xdg'), HOME: join(folder, 'unused') }, join(folder, 'xdg', 'carectl')],
      [{ HOME: join(folder, 'home') }, join(folder, 'home', '.cache', 'carectl')],
    ] as const) {
      const expected = await lookup(env);
      assert.deepEqual([JSON.parse(expected.stdout).id, expected.stderr], ['7001', '']);
      const made = await cacheFiles(cacheFolder);
      assert.deepEqual(Object.keys(made).sort(), ['carectl.js', 'undici.cjs']);
      // Made once the command ran: it holds what was compiled lazily too (node's own cache of undici's file, made at load: ~7 KB).
      assert.ok(made['undici.cjs']!.data.length > 100_000, `undici's cache is ${made['undici.cjs']!.data.length} bytes`);
      assert.deepEqual(await cacheUse(['tags', 'get', '7001', '-o', 'json'], env), { 'carectl.js': 'accepted', 'undici.cjs': 'accepted' });
      assert.deepEqual(await lookup(env), expected);
      // Taken, not made again: creating a cache costs a run ~8 ms.
      assert.deepEqual(await cacheFiles(cacheFolder), made);
    }
    assert.ok(!existsSync(join(folder, 'unused')), 'HOME is not used with XDG_CACHE_HOME set');
  });

  test('makes a cache again when a run does what none of the runs that made it did: another command, another bundle file', async () => {
    const env = { XDG_CACHE_HOME: join(folder, 'after-config-set'), XDG_CONFIG_HOME: join(folder, 'after-config-set-config') };
    const cacheFolder = join(env.XDG_CACHE_HOME, 'carectl');
    const configSet = (value: string) =>
      promisify(execFile)(process.execPath, [BIN, 'config', 'set', 'output', value], { env: { PATH: process.env.PATH, ...env } });
    await configSet('json');
    const afterConfigSet = await cacheFiles(cacheFolder);
    assert.deepEqual(Object.keys(afterConfigSet).sort(), ['carectl.js', 'conf.cjs']);
    // A lookup compiles much of carectl.js that `config set` never ran (~4 ms a lookup with that cache).
    assert.deepEqual(await cacheUse(['tags', 'get', '7001', '-o', 'json'], env), { 'carectl.js': 'accepted', 'undici.cjs': 'none' });
    const afterLookup = await cacheFiles(cacheFolder);
    assert.notDeepEqual(afterLookup['carectl.js'], afterConfigSet['carectl.js'], "carectl.js's cache made again");
    assert.deepEqual(afterLookup['conf.cjs'], afterConfigSet['conf.cjs']);
    // A list loads the same bundle files as a lookup, and runs other parts of them (~8 ms a page with a lookup's cache).
    const list = ['conversations', 'list', '--limit', '1', '-o', 'json'];
    assert.deepEqual(await cacheUse(list, env), { 'carectl.js': 'accepted', 'undici.cjs': 'accepted' });
    const afterList = await cacheFiles(cacheFolder);
    assert.notDeepEqual(afterList['carectl.js'], afterLookup['carectl.js'], "carectl.js's cache made again for the list");
    // Every kind of run has made it now: none makes it again.
    await configSet('tsv');
    assert.equal(await lookup(env).then((run) => JSON.parse(run.stdout).id), '7001');
    assert.deepEqual(await cacheUse(list, env), { 'carectl.js': 'accepted', 'undici.cjs': 'accepted' });
    assert.deepEqual(await cacheFiles(cacheFolder), afterList);
  });

  test('a cache of other code or from another node is not taken, and is made again; those of other builds go', async () => {
    const env = { XDG_CACHE_HOME: join(folder, 'foreign') };
    const cacheFolder = join(env.XDG_CACHE_HOME, 'carectl');
    const expected = await lookup(env);
    const names = await readdir(cacheFolder);
    // Named by the bundle file's content and this node's version: another build or node has caches of its own.
    const hashes = JSON.parse(await readFile(fileURLToPath(new URL('../../dist/bundle/hashes.json', import.meta.url)), 'utf8')) as Record<string, string>;
    assert.deepEqual(names.sort(), [
      `carectl.js-${hashes['carectl.js']}-${process.version}-${process.arch}.cache`,
      `undici.cjs-${hashes['undici.cjs']}-${process.version}-${process.arch}.cache`,
    ]);
    // undici's cache under carectl.js's name: V8 rejects it (other source), as it does garbage.
    const [carectlCache, undiciCache] = names.map((name) => join(cacheFolder, name)) as [string, string];
    await writeFile(carectlCache, await readFile(undiciCache));
    await writeFile(undiciCache, 'not a cache');
    assert.deepEqual(await cacheUse(['tags', 'get', '7001', '-o', 'json'], env), { 'carectl.js': 'rejected', 'undici.cjs': 'rejected' });
    assert.deepEqual(await cacheUse(['tags', 'get', '7001', '-o', 'json'], env), { 'carectl.js': 'accepted', 'undici.cjs': 'accepted' });
    assert.deepEqual(await lookup(env), expected);
    // Under other V8 flags (here a node option), a cache of their own beside this one. Making it
    // removes the caches of other builds of the file, not those of other nodes.
    const otherBuild = `carectl.js-0123456789abcdef-${process.version}-${process.arch}.cache`;
    const otherNode = `carectl.js-${hashes['carectl.js']}-v0.0.0-${process.arch}.cache`;
    for (const name of [otherBuild, otherNode]) await writeFile(join(cacheFolder, name), 'a cache');
    assert.deepEqual(await lookup({ ...env, NODE_OPTIONS: '--max-old-space-size=900' }), expected);
    const after = await readdir(cacheFolder);
    assert.deepEqual([after.length, after.includes(otherBuild), after.includes(otherNode)], [5, false, true]);
  });

  test('NODE_DISABLE_COMPILE_CACHE=1 keeps no cache', async () => {
    const env = { XDG_CACHE_HOME: join(folder, 'disabled'), NODE_DISABLE_COMPILE_CACHE: '1' };
    assert.equal(JSON.parse((await lookup(env)).stdout).id, '7001');
    assert.ok(!existsSync(env.XDG_CACHE_HOME));
  });

  test('a cache folder that cannot be written, or a broken cache, costs only the cache: the same output, nothing said', async () => {
    const run = lookup;
    const fine = join(folder, 'fine');
    const expected = { stdout: (await run({ XDG_CACHE_HOME: fine })).stdout, stderr: '' };
    assert.equal(JSON.parse(expected.stdout).id, '7001');

    const inTheWay = join(folder, 'not-a-folder');
    await writeFile(inTheWay, '');
    assert.deepEqual(await run({ XDG_CACHE_HOME: inTheWay, HOME: inTheWay }), expected, 'a file where the folder would be');

    const cached = await readdir(join(fine, 'carectl'));
    assert.ok(cached.length > 0);
    for (const name of cached) await writeFile(join(fine, 'carectl', name), 'not a cache');
    assert.deepEqual(await run({ XDG_CACHE_HOME: fine }), expected, 'every cache file overwritten with garbage');
    for (const name of cached) await writeFile(join(fine, 'carectl', name), '');
    assert.deepEqual(await run({ XDG_CACHE_HOME: fine }), expected, 'every cache file empty');

    // Root writes anywhere: as nobody, a folder it cannot enter, and one it can read but not write
    // (the cache a `sudo carectl` left behind).
    const nobody = asNobody();
    if (typeof nobody === 'string') return;
    assert.deepEqual(await run({ XDG_CACHE_HOME: folder }, nobody), expected, "a folder nobody cannot enter (root's 0700)");
    const rootsCache = await mkdtemp(join(tmpdir(), 'carectl-roots-cache-'));
    try {
      await chmod(rootsCache, 0o755);
      await run({ XDG_CACHE_HOME: rootsCache });
      assert.deepEqual(await run({ XDG_CACHE_HOME: rootsCache }, nobody), expected, "root's cache, read-only to nobody");
    } finally {
      await rm(rootsCache, { recursive: true, force: true });
    }
  });

  test('requires no package at run time: only node built-ins and its own lazy files', async () => {
    // The package has no dependencies (the libraries are built in), so anything else fails to load.
    const bundleFolder = fileURLToPath(new URL('../../dist/bundle/', import.meta.url));
    const names = (await readdir(bundleFolder)).filter((name) => /\.c?js$/.test(name));
    const required = new Set<string>();
    for (const name of names) {
      // A require( right after a quote is text, as in ajv's generated-code strings (conf).
      for (const [, id] of (await readFile(join(bundleFolder, name), 'utf8')).matchAll(/(?<![\w$.'"`])require\("([^"]+)"\)/g)) required.add(id!);
    }
    assert.ok(required.has('./undici.cjs'), 'the requires are found');
    // node:sqlite is a built-in of newer nodes than 20, which undici requires only when asked to
    const other = [...required].filter((id) => !(isBuiltin(id) || id.startsWith('node:') || (id.startsWith('./') && names.includes(id.slice(2)))));
    assert.deepEqual(other, []);
  });

  // login's prompt library (read) and the unzip library (yauzl), each used by few commands.
  for (const [name, file, marker, loaded] of [
    ['read', 'read.cjs', 'default value must be string or number', 'read'],
    ['yauzl', 'yauzl.cjs', 'End of central directory record signature not found', 'openPromise'],
  ] as const) {
    test(`keeps ${name} out of the main bundle, in a lazy file of its own that loads`, async () => {
      const bundleFolder = fileURLToPath(new URL('../../dist/bundle/', import.meta.url));
      assert.ok(!(await readFile(join(bundleFolder, 'carectl.js'), 'utf8')).includes(marker));
      assert.ok((await readFile(join(bundleFolder, file), 'utf8')).includes(marker));
      // In a process of its own: bin/carectl.js sets V8 flags, which a process must not change once it runs (a SIGSEGV here).
      const probe = `process.stdout.write(typeof require(${JSON.stringify(BIN)}).requireBundleFile(${JSON.stringify(`./${file}`)})[${JSON.stringify(loaded)}])`;
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', probe]);
      assert.equal(stdout, 'function');
    });
  }

  /** The bundle files a run of `argv` compiled, and what it printed; in a process of its own. */
  async function filesCompiled(argv: string[]): Promise<{ stdout: string; files: string[] }> {
    const probe = `process.argv = [process.execPath, 'carectl', ...${JSON.stringify(argv)}];
      const entry = require(${JSON.stringify(BIN)});
      entry.loadCarectl().main().then(() => process.stderr.write(JSON.stringify(entry.loadedBundleFiles())));`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['-e', probe], { env: { PATH: process.env.PATH, ...sandboxEnv(sandbox) } });
    return { stdout, files: JSON.parse(stderr) as string[] };
  }

  test('prints --version, -V, --help and -h off a terminal as the bundle does, without loading it or its V8 flags', async () => {
    for (const arg of ['--version', '-V', '--help', '-h']) {
      const { stdout, stderr, loaded } = await bundled([arg]);
      assert.equal(stdout, (await filesCompiled([arg])).stdout, arg);
      assert.equal(stderr, '');
      // bin/carectl.js loads node:v8 for the bundle's flags
      assert.ok(!loaded.includes('v8'), `carectl ${arg} ran the bundle`);
    }
  });

  test('--help into a full disk or a closed pipe fails as any output does', { skip: !existsSync('/dev/full') && 'no /dev/full' }, async () => {
    const full = await open('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', full.fd, 'pipe'], env: { PATH: process.env.PATH } });
      const [stderr, [code]] = await Promise.all([text(child.stderr!), once(child, 'close')]);
      assert.deepEqual([code, stderr], [1, 'carectl: cannot write the output: no space left on device (ENOSPC)\n']);
    } finally {
      await full.close();
    }
    // Closed before carectl writes (it takes longer to start), or after: either way nothing to say.
    const child = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    child.stdout.destroy();
    const [stderr, [code]] = await Promise.all([text(child.stderr), once(child, 'close')]);
    assert.deepEqual([code, stderr], [0, '']);
  });

  test('wraps --help to the terminal it is read on', { skip: process.platform !== 'linux' && "util-linux's script" }, async () => {
    const { stdout } = await promisify(execFile)('script', ['-qec', `stty cols 40; exec '${process.execPath}' '${BIN}' --help`, '/dev/null'], {
      env: { PATH: process.env.PATH },
    });
    const lines = stdout.split('\r\n');
    assert.equal(lines[0], 'Usage: carectl [global options]');
    assert.ok(
      lines.every((line) => line.length <= 40),
      stdout,
    );
  });

  test('starts --version, --help and a lookup without what they do not use (issue 34)', async () => {
    for (const argv of [['--version'], ['--help']]) {
      const { loaded } = await bundled(argv);
      for (const unused of ['http', 'dns/promises', 'os']) assert.ok(!loaded.includes(unused), `carectl ${argv.join(' ')} loaded ${unused}`);
      assert.deepEqual((await filesCompiled(argv)).files, ['carectl.js'], `carectl ${argv.join(' ')}`);
    }
    // A lookup needs undici.
    const lookup = await filesCompiled(['tags', 'get', '7001', '-o', 'json']);
    assert.match(lookup.stdout, /"id": "7001"/);
    assert.deepEqual(lookup.files, ['carectl.js', 'undici.cjs']);
  });

  test('loads JMESPath, from a file of its own, only for --query', async () => {
    const argv = ['tags', 'list', '--query', '[?is_active].name | [:2]'];
    const queried = await filesCompiled(argv);
    assert.equal(queried.stdout, (await runCli(argv, { sandbox })).stdout);
    assert.equal((JSON.parse(queried.stdout) as string[]).length, 2);
    // The expression is compiled before the first request: a mistake in it sends nothing.
    assert.deepEqual(queried.files, ['carectl.js', 'jmespath.cjs', 'undici.cjs']);
    assert.deepEqual((await filesCompiled(['tags', 'list', '-o', 'json'])).files, ['carectl.js', 'undici.cjs']);
  });

  test('measures text beyond Latin-1 with nothing more to load (string-width made an Intl.Segmenter at load)', async () => {
    const { stdout, files } = await filesCompiled(['help', 'tags']);
    assert.match(stdout, /…/, "the group's help ends its global options line with …");
    assert.deepEqual(files, ['carectl.js']);
  });

  test('pages through a list as the sources do', async () => {
    const argv = ['conversations', 'list', '--limit', '120', '-o', 'ndjson'];
    const { stdout } = await bundled(argv);
    assert.equal(stdout.split('\n').length - 1, 120);
    assert.equal(stdout, (await runCli(argv, { sandbox })).stdout);
  });

  test('downloads a report through a redirect, byte for byte', async () => {
    const argv = ['reports', 'download', '60001', '--file', '-'];
    const expected = await runCli(argv, { sandbox });
    assert.equal(expected.code, 0, expected.stderr);
    assert.ok(expected.stdout.length > 0);
    sandbox.setFaults({ redirectDownloads: true });
    try {
      const from = sandbox.requests.length;
      assert.equal((await bundled(argv)).stdout, expected.stdout);
      assert.deepEqual(
        sandbox.requests
          .slice(from)
          .filter((r) => r.listener === 'download')
          .map((r) => [r.status, r.url.split('/')[1]]),
        [
          [302, 'redirect'],
          [200, 'downloads'],
        ],
      );
    } finally {
      sandbox.setFaults(undefined);
    }
  });
});

describe("bin/carectl.js's exit", () => {
  /** Node running `exitWith(PROMISE)` of bin/carectl.js: its exit code and stderr. */
  async function exitOf(promise: string): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(BIN)}).exitWith(${promise})`], { stdio: ['ignore', 'ignore', 'pipe'] });
    const [stderr, [code]] = await Promise.all([text(child.stderr), once(child, 'exit')]);
    return { code: code as number | null, stderr };
  }

  test('is the code the command resolved to', async () => {
    assert.deepEqual(await exitOf('Promise.resolve(4)'), { code: 4, stderr: '' });
  });

  test('is 1, said on stderr, where node ran out of work with the command unsettled (it would exit 0, its output cut short)', async () => {
    assert.deepEqual(await exitOf('new Promise(() => {})'), {
      code: 1,
      stderr: 'carectl: unexpected error: the command stopped with nothing left to wait for, unfinished; its output may be incomplete\n',
    });
  });
});
