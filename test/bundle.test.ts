/**
 * The bundled command (bin/carectl.js running dist/bundle/, see scripts/bundle.mjs) behaves as the
 * sources do, through the parts only the bundle has: its reduced undici, the lazy files loaded
 * with their code caches, and built-ins that load only when used.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import Module, { isBuiltin } from 'node:module';
import { chmod, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

  /** Whether this node caches compiled code in the user's folder (≥ 22.1) rather than with bundle-time caches (20). */
  const nodeCompileCache = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

  test(
    'V8 accepts the code cache of each bundle file a command compiles, under the flags bin/carectl.js sets',
    { skip: nodeCompileCache && 'node ≥ 22.1: its own compile cache' },
    async () => {
      // A rejected cache fails nothing: start-up just doubles (~220 ms to ~510 ms for a lookup). A
      // fresh process, since the flags and caches must meet before anything else is compiled.
      const probe = `const entry = require(${JSON.stringify(BIN)});
      entry.loadCarectl();
      for (const lazy of ['./undici.cjs', './sandbox.cjs']) entry.requireBundleFile(lazy);
      const seen = {};
      for (const [file, script] of entry.compiledScripts) seen[require('node:path').basename(file)] = script.cachedDataRejected;
      process.stdout.write(JSON.stringify(seen));`;
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', probe], { env: { PATH: process.env.PATH } });
      // false: a cache was given and taken (undefined would be no cache at all)
      assert.deepEqual(JSON.parse(stdout), { 'carectl.js': false, 'undici.cjs': false, 'sandbox.cjs': false });
    },
  );

  test(
    "keeps node's compile cache in $XDG_CACHE_HOME/carectl, else ~/.cache/carectl, and V8 accepts it on the next run",
    { skip: !nodeCompileCache && 'node 20: no compile cache of its own' },
    async () => {
      const lookup = async (env: Record<string, string>): Promise<{ stdout: string; stderr: string }> =>
        promisify(execFile)(process.execPath, [BIN, 'tags', 'get', '7001', '-o', 'json'], { env: { PATH: process.env.PATH, ...sandboxEnv(sandbox), ...env } });
      for (const [env, cacheFolder] of [
        [{ XDG_CACHE_HOME: join(folder, 'xdg'), HOME: join(folder, 'unused') }, join(folder, 'xdg', 'carectl')],
        [{ HOME: join(folder, 'home') }, join(folder, 'home', '.cache', 'carectl')],
      ] as const) {
        const expected = await lookup(env);
        assert.equal(JSON.parse(expected.stdout).id, '7001');
        assert.ok((await readdir(cacheFolder)).length > 0, `${cacheFolder} holds the cache`);
        const again = await lookup({ ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
        assert.equal(again.stdout, expected.stdout);
        // Node 22 says "cache for FILE was accepted", node 24 "V8 code cache for CommonJS FILE was accepted".
        for (const file of ['carectl.js', 'undici.cjs']) {
          assert.match(again.stderr, new RegExp(`cache for (CommonJS )?\\S+[\\\\/]${file.replace('.', '\\.')} was accepted`), file);
        }
      }
    },
  );

  test('a cache folder that cannot be written, or a broken cache, costs only the cache: the same output, nothing said', async () => {
    const run = (env: Record<string, string>, as: { uid?: number; gid?: number } = {}) =>
      promisify(execFile)(process.execPath, [BIN, 'tags', 'get', '7001', '-o', 'json'], {
        env: { PATH: process.env.PATH, ...sandboxEnv(sandbox), ...env },
        ...as,
      });
    const fine = join(folder, 'fine');
    const expected = { stdout: (await run({ XDG_CACHE_HOME: fine })).stdout, stderr: '' };
    assert.equal(JSON.parse(expected.stdout).id, '7001');

    const inTheWay = join(folder, 'not-a-folder');
    await writeFile(inTheWay, '');
    assert.deepEqual(await run({ XDG_CACHE_HOME: inTheWay, HOME: inTheWay }), expected, 'a file where the folder would be');

    if (nodeCompileCache) {
      const cacheFiles = (await readdir(join(fine, 'carectl'), { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
      assert.ok(cacheFiles.length > 0);
      for (const entry of cacheFiles) await writeFile(join(entry.parentPath, entry.name), 'not a cache');
      assert.deepEqual(await run({ XDG_CACHE_HOME: fine }), expected, 'every cache file overwritten with garbage');
    }

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
