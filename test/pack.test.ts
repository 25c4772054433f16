/**
 * The package as users get it: `npm pack` makes a tarball that `npm install -g` puts into an empty
 * prefix with the network off (--offline): one package, no dependencies (the libraries are built
 * into the bundle, so every one is a devDependency), and no build on install (the prepare script
 * runs only from git; it would fail here, with no tsc). Its `carectl` prints its version and reads
 * the embedded sandbox.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, lstat, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string> };
const NPM_QUIET = { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false' };

describe('npm pack', () => {
  let folder: string;
  let files: string[];
  let prefix: string;
  let carectl: string;

  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'carectl-pack-'));
    // dist/ is already built by `npm test`; the prepare script would build it again
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', folder], { cwd: ROOT, env: NPM_QUIET });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    assert.ok(packed, 'npm pack reported the tarball');
    files = packed.files.map((file) => file.path);
    prefix = join(folder, 'prefix');
    await run('npm', ['install', '--global', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, join(folder, packed.filename)], {
      cwd: folder,
      env: NPM_QUIET,
      timeout: 120_000,
    });
    carectl = join(prefix, 'bin', 'carectl');
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test("the tarball holds the command, its bundle with its files' hashes and the man page; no sources, tests or module-by-module build", () => {
    for (const path of [
      'package.json',
      'bin/carectl.js',
      'bin/package.json',
      'dist/bundle/package.json',
      'dist/bundle/carectl.js',
      'dist/bundle/hashes.json',
      'man/carectl.1',
    ])
      assert.ok(files.includes(path), path);
    // Code caches are made by the node that runs carectl, in the user's cache folder.
    assert.deepEqual(
      files.filter((path) => path.endsWith('.cache')),
      [],
    );
    // bin/carectl.js runs dist/bundle only; dist/src (tsc's output, for the tests) would be dead weight
    assert.deepEqual(
      files.filter((path) => /^(dist\/(src|test)|src|test)\//.test(path)),
      [],
    );
  });

  test('the package depends on nothing: the offline install added carectl alone', async () => {
    assert.equal(PACKAGE.dependencies, undefined);
    assert.deepEqual(await readdir(join(prefix, 'lib', 'node_modules')), ['carectl']);
    // what the tarball holds, and no node_modules of its own
    assert.deepEqual((await readdir(join(prefix, 'lib', 'node_modules', 'carectl'))).sort(), [...new Set(files.map((path) => path.split('/')[0]))].sort());
  });

  test('the installed carectl prints its version', async () => {
    const { stdout } = await run(carectl, ['--version']);
    assert.equal(stdout, `${PACKAGE.version}\n`);
  });

  test('the installed carectl reads the embedded sandbox', async () => {
    const { stdout, stderr } = await run(carectl, ['--sandbox', 'tags', 'list'], { env: { ...process.env, XDG_CONFIG_HOME: join(folder, 'config') } });
    const [header, ...rows] = stdout.trimEnd().split('\n');
    assert.equal(header, 'id\tname\tis_active', stderr);
    assert.ok(rows.length > 0, 'tags are listed');
  });
});

/** The line of README.md's install block that installs the command globally. */
async function readmeInstallLine(): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n(npm install\n[\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const line = block.split('\n').find((text) => text.includes('npm install -g'));
  assert.ok(line, 'README.md has an install block whose second line runs npm install -g');
  return line;
}

describe("README's install line", () => {
  test('installs a copy, not a link to the folder: carectl and its manual page work once that folder is gone', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'carectl-install-'));
    try {
      // What a clone holds once `npm install` has built it. `npm pack` runs its prepare script (`npm run build`) as on a
      // clone, but the build script does nothing: the build is there already (`npm test`), and prints nothing on success.
      const clone = join(folder, 'clone');
      for (const path of ['README.md', 'bin', 'dist/bundle', 'man']) await cp(join(ROOT, path), join(clone, path), { recursive: true });
      const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      assert.equal(manifest.scripts['prepare'], 'npm run build');
      manifest.scripts['build'] = 'true';
      await writeFile(join(clone, 'package.json'), JSON.stringify(manifest, null, 2));
      const prefix = join(folder, 'prefix');
      const env = { ...NPM_QUIET, npm_config_prefix: prefix, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' };
      await run('bash', ['-euo', 'pipefail', '-c', await readmeInstallLine()], { cwd: clone, env, timeout: 120_000 });
      await rm(clone, { recursive: true, force: true });

      assert.equal((await lstat(join(prefix, 'lib', 'node_modules', 'carectl'))).isSymbolicLink(), false, 'a copy, not a link');
      const { stdout } = await run(join(prefix, 'bin', 'carectl'), ['--version']);
      assert.equal(stdout, `${PACKAGE.version}\n`);
      assert.match(await readFile(join(prefix, 'share', 'man', 'man1', 'carectl.1'), 'utf8'), /^\.TH CARECTL 1 /m);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
