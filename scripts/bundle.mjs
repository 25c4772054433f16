/**
 * Bundles carectl for start-up speed: `node scripts/bundle.mjs` writes dist/bundle/, which
 * bin/carectl.js runs. Bundled from the TypeScript sources (esbuild strips the types),
 * so it does not depend on tsc's output.
 *
 * Measured with `npm run bench` (see bench/run.js), and why each part is there:
 * - One minified file for carectl itself: resolving, reading and compiling ~70 modules one by one
 *   costs more than most commands take.
 * - CommonJS, not ESM: node's ESM loader costs ~4 ms more per start, and only a CommonJS-style
 *   script can be compiled with a V8 code cache on node 20.
 * - A V8 code cache, made here by running a few commands: compiling the bundle is the largest
 *   single cost left at start-up. A cache from another node/V8 version is rejected by V8 and
 *   the entry then compiles as usual.
 * - What only some commands need (undici, conf, cli-table3, the sandbox) is a file of its own,
 *   required by the dynamic import() calls in src/ when first used.
 */
import { spawnSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'dist/bundle');
const MAIN = join(outdir, 'carectl.js');
const CODE_CACHE = `${MAIN}.cache`;

/**
 * The main bundle is one function expression `(exports, require, module, __filename, __dirname)
 * => …`, compiled by bin/carectl.js with vm.Script; a code cache matches only the exact
 * source it was made from, so the file is used as it is, never wrapped at run time.
 */
const WRAPPER = { banner: { js: '(function (exports, require, module, __filename, __dirname) {' }, footer: { js: '})' } };

/**
 * What `await import(name)` in src/ gets, as a file beside the main bundle (see lazyFiles). As in
 * node, `default` of what import() yields is the file's module.exports, its properties the names.
 */
const LAZY = {
  undici: { file: 'undici.cjs', entry: { contents: "module.exports = require('undici');" } },
  // conf is ESM; src/ takes its default export, the Conf class.
  conf: { file: 'conf.cjs', entry: { contents: "module.exports = require('conf').default;" } },
  'cli-table3': { file: 'cli-table3.cjs', entry: { contents: "module.exports = require('cli-table3');" } },
  './sandbox/index.js': { file: 'sandbox.cjs', entry: { path: 'src/sandbox/index.ts' } },
  '../sandbox/index.js': { file: 'sandbox.cjs', entry: { path: 'src/sandbox/index.ts' } },
};

/** Commands run to make the code cache: the paths a shell loop or a cron job takes. */
const WARM_UP = [
  ['--help'],
  ['--sandbox', 'tags', 'get', '7001', '-o', 'json'],
  ['--sandbox', 'conversations', 'list', '--limit', '120', '-o', 'ndjson'],
  ['--sandbox', 'conversations', 'list', '--limit', '60', '-o', 'csv'],
];

const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'linked',
  logLevel: 'warning',
  // import() of a lazy file becomes require(): a vm.Script has no module loader for import().
  supported: { 'dynamic-import': false },
};

/**
 * src/version.ts reads package.json relative to its own file at run time; in a bundle that file
 * is gone, so the version is fixed at bundle time instead.
 */
function versionAtBundleTime(version) {
  return {
    name: 'version-at-bundle-time',
    setup(builder) {
      builder.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => ({ contents: `export const VERSION = ${JSON.stringify(version)};`, loader: 'ts' }));
    },
  };
}

/** Dynamic imports named in LAZY stay outside the main bundle, as require() of their file. */
const lazyFiles = {
  name: 'lazy-files',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import' && LAZY[args.path] ? { path: `./${LAZY[args.path].file}`, external: true } : undefined,
    );
  },
};

/**
 * Node built-ins that a module imports at load time but only a few commands use: commander
 * requires child_process for executable subcommands (carectl has none), the report download
 * needs crypto. Each becomes an object whose properties load the real module on first use.
 */
function lazyBuiltins(modules) {
  return {
    name: 'lazy-builtins',
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^(node:)?(${modules.join('|')})$`) }, (args) =>
        args.namespace === 'lazy-builtin' ? undefined : { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' },
      );
      builder.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, ({ path }) => {
        const names = Object.keys(createRequire(import.meta.url)(`node:${path}`));
        return {
          contents: `let loaded;
            const load = () => (loaded ??= require('node:${path}'));
            for (const name of ${JSON.stringify(names)}) Object.defineProperty(exports, name, { get: () => load()[name], enumerable: true });`,
          loader: 'js',
        };
      });
    },
  };
}

async function bundle() {
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  await rm(outdir, { recursive: true, force: true });
  const lazyBuilds = [...new Map(Object.values(LAZY).map((lazy) => [lazy.file, lazy])).values()].map(({ file, entry }) =>
    build({
      ...common,
      ...(entry.path ? { entryPoints: [entry.path] } : { stdin: { contents: entry.contents, resolveDir: root, sourcefile: file } }),
      outfile: join(outdir, file),
    }),
  );
  const results = await Promise.all([
    build({
      ...common,
      entryPoints: ['src/process.ts'],
      outfile: MAIN,
      ...WRAPPER,
      plugins: [versionAtBundleTime(version), lazyFiles, lazyBuiltins(['child_process', 'crypto'])],
    }),
    ...lazyBuilds,
  ]);
  // A warning here is a bundle that may behave differently from the sources (import.meta in
  // CommonJS, say): better no bundle.
  if (results.some((result) => result.warnings.length > 0)) throw new Error('esbuild warned; see above');
  // The warm-up runs carectl; a child process keeps its stdio, signals and exit code apart.
  const warmUp = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--write-code-cache'], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (warmUp.status !== 0) throw new Error(`making the code cache failed (exit ${warmUp.status}):\n${warmUp.stderr}`);
}

/** Compiles the bundle as the entry does, runs the WARM_UP commands, saves what V8 compiled. */
async function writeCodeCache() {
  const script = new Script(await readFile(MAIN, 'utf8'), { filename: MAIN });
  const bundled = { exports: {} };
  script.runInThisContext()(bundled.exports, createRequire(MAIN), bundled, MAIN, dirname(MAIN));
  for (const args of WARM_UP) {
    process.argv.splice(2, Infinity, ...args);
    const code = await bundled.exports.main();
    if (code !== 0) throw new Error(`carectl ${args.join(' ')} exited with ${code}`);
  }
  await writeFile(CODE_CACHE, script.createCachedData());
}

await (process.argv.includes('--write-code-cache') ? writeCodeCache() : bundle());
