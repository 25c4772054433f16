/**
 * Bundles carectl for start-up speed: `node scripts/bundle.mjs` writes dist/bundle/, which
 * bin/carectl.js runs. Bundled from the TypeScript sources (esbuild strips the types),
 * so it does not depend on tsc's output.
 *
 * Measured with `npm run bench` (see bench/run.js), and why each part is there:
 * - One minified file for carectl itself: resolving, reading and compiling ~70 modules one by one
 *   costs more than most commands take.
 * - CommonJS, not ESM: node's ESM loader costs ~4 ms more per start on node 20 (~25 on 22 and
 *   24), and bin/carectl.js compiles each file as a vm.Script with the V8 code cache it keeps in
 *   the user's cache folder (hashes.json names each file's content for it).
 * - What only some commands need (undici, conf, chalk, the sandbox) is a file of its own,
 *   required by the dynamic import() calls in src/ when first used, with a code cache of its own.
 * - undici's file holds only the parts carectl uses (src/http/undici.ts): its index also loads
 *   fetch, WebSocket, the mocks and cache stores, and the http2 client loads node:http2 (and with
 *   it tls and crypto) at once; together that doubled the time a lookup spends loading undici.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { UNDICI_API, UNDICI_DISPATCHER, UNDICI_LAZY_PARTS, UNDICI_PARTS } from './undici-parts.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = join(root, 'dist/bundle');
const MAIN = join(outdir, 'carectl.js');

/** The undici file's entry: undici's index as carectl uses it (scripts/undici-parts.mjs), the rest left out. */
function undiciEntry() {
  const parts = Object.entries(UNDICI_PARTS).map(([name, path]) => `${name}: require('${path}'),`);
  const lazy = Object.entries(UNDICI_LAZY_PARTS).map(([name, path]) => `get ${name}() { return require('${path}'); },`);
  return `const Dispatcher = require('${UNDICI_DISPATCHER}');
    Object.assign(Dispatcher.prototype, require('${UNDICI_API}'));
    module.exports = { ${[...parts, ...lazy].join(' ')} };`;
}

/**
 * What `await import(name)` in src/ gets, as a file beside the main bundle (see lazyFiles). As in
 * node, `default` of what import() yields is the file's module.exports, its properties the names.
 */
const LAZY = {
  undici: { file: 'undici.cjs', entry: { contents: undiciEntry() } },
  // conf is ESM; src/ takes its default export, the Conf class.
  conf: { file: 'conf.cjs', entry: { contents: "module.exports = require('conf').default;" } },
  // login's questions on a terminal only
  read: { file: 'read.cjs', entry: { contents: "module.exports = require('read');" } },
  // tables on a terminal (or -o table) only
  'cli-table3': { file: 'cli-table3.cjs', entry: { contents: "module.exports = require('cli-table3');" } },
  // --query only
  '@jmespath-community/jmespath': { file: 'jmespath.cjs', entry: { contents: "module.exports = require('@jmespath-community/jmespath');" } },
  // reports … --unzip only
  yauzl: { file: 'yauzl.cjs', entry: { contents: "module.exports = require('yauzl');" } },
  './sandbox/index.js': { file: 'sandbox.cjs', entry: { path: 'src/sandbox/index.ts' } },
  '../sandbox/index.js': { file: 'sandbox.cjs', entry: { path: 'src/sandbox/index.ts' } },
};

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
 * src/core/version.ts reads package.json relative to its own file at run time; in a bundle that file
 * is gone, so the version is fixed at bundle time instead.
 */
function versionAtBundleTime(version) {
  return {
    name: 'version-at-bundle-time',
    setup(builder) {
      builder.onLoad({ filter: /[\\/]src[\\/]core[\\/]version\.ts$/ }, () => ({
        contents: `export const VERSION = ${JSON.stringify(version)};`,
        loader: 'ts',
      }));
    },
  };
}

/**
 * cli-table3 measures with carectl's displayWidth, not its own string-width 4 (which knows no emoji
 * past Unicode 12): its file gets a string-width that is displayWidth, and src/output/table-library.ts
 * (which puts it in node's module cache when run from tsc's output) becomes a plain import.
 */
const CARECTL_MEASURE = {
  name: 'carectl-measure',
  setup(builder) {
    builder.onResolve({ filter: /^string-width$/ }, (args) =>
      /[\\/]cli-table3[\\/]/.test(args.importer) ? { path: 'string-width', namespace: 'carectl-measure' } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'carectl-measure' }, () => ({
      contents: `const { displayWidth } = require(${JSON.stringify(join(root, 'src/output/width.ts'))});
        module.exports = (text) => displayWidth(text);`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};

const TABLE_LIBRARY = {
  name: 'table-library',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]src[\\/]output[\\/]table-library\.ts$/ }, () => ({
      contents: "export async function tableLibrary() { return (await import('cli-table3')).default; }",
      loader: 'ts',
    }));
  },
};

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
 * needs crypto, and undici's http2 client (never used: carectl speaks HTTP/1.1) needs http2. Each
 * becomes an object whose properties load the real module on first use. `values` are the
 * properties read at load time, copied as they are at bundle time: http2's protocol constants.
 */
function lazyBuiltins(modules, values = {}) {
  return {
    name: 'lazy-builtins',
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^(node:)?(${modules.join('|')})$`) }, (args) =>
        args.namespace === 'lazy-builtin' ? undefined : { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' },
      );
      builder.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, ({ path }) => {
        const real = createRequire(import.meta.url)(`node:${path}`);
        const copied = values[path] ?? [];
        return {
          // What is read of the module goes to its prototype, which loads it: one object, not a
          // getter per name (defining ~700 of them was ~0.4 ms of every start). Not on the module
          // itself: esbuild's interop copies a module's own properties for each module that imports
          // it, and reads __esModule, which is no reason to load one.
          contents: `let loaded;
            const load = () => (loaded ??= require('node:${path}'));
            module.exports = Object.create(new Proxy({}, { get: (_, name) => (name === '__esModule' ? undefined : load()[name]) }));
            ${copied.map((name) => `module.exports.${name} = ${JSON.stringify(real[name])};`).join('\n')}`,
          loader: 'js',
        };
      });
    },
  };
}

/** A plugin that gives `require(builtin)` in the bundle the module `contents`, in place of node's. */
function replaceBuiltin(builtin, contents) {
  const namespace = `replaced-${builtin}`;
  return {
    name: namespace,
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`^(node:)?${builtin}$`) }, (args) =>
        // The replacement's own require reaches node's module.
        args.namespace === namespace ? { path: `node:${builtin}`, external: true } : { path: builtin, namespace },
      );
      builder.onLoad({ filter: /.*/, namespace }, () => ({ contents, loader: 'js' }));
    },
  };
}

/**
 * What undici's file requires of node at load but a request does not need; each cost a lookup's
 * start (npm run bench, measured one by one):
 * - node:assert (~0.7 ms): undici checks its own invariants with `assert(value)` in 33 files. Here a
 *   function that loads node:assert only when one fails, which then throws node's AssertionError.
 * - node:http (~4 ms: it loads node's own HTTP parser and agent too): undici reads two values of it
 *   when it loads. The header size limit: node's, as this node gives it at bundle time (a node
 *   flag alone changes it). IncomingMessage: undici's destroy() spares the socket of an
 *   IncomingMessage used as a request body; carectl's request bodies are strings
 *   (src/http/attempt.ts), so a class nothing is an instance of. Any other value of node:http
 *   loads it: an undici that reads more still works, and test/bundle.test.ts, which finds no
 *   node:http loaded by a lookup, fails.
 */
const UNDICI_BUILTINS = [
  replaceBuiltin('assert', "module.exports = function assert(value, message) { if (!value) require('node:assert')(value, message); };"),
  replaceBuiltin(
    'http',
    `const values = { maxHeaderSize: ${createRequire(import.meta.url)('node:http').maxHeaderSize}, IncomingMessage: class NeverSent {} };
    module.exports = new Proxy(values, { get: (_, name) => (name in values ? values[name] : require('node:http')[name]) });`,
  ),
];

async function bundle() {
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  await rm(outdir, { recursive: true, force: true });
  const lazyBuilds = [...new Map(Object.values(LAZY).map((lazy) => [lazy.file, lazy])).values()].map(({ file, entry }) =>
    build({
      ...common,
      ...(entry.path ? { entryPoints: [entry.path] } : { stdin: { contents: entry.contents, resolveDir: root, sourcefile: file } }),
      outfile: join(outdir, file),
      plugins: [
        lazyBuiltins(['http2'], { http2: ['constants'] }),
        ...(file === LAZY.undici.file ? UNDICI_BUILTINS : []),
        ...(file === LAZY['cli-table3'].file ? [CARECTL_MEASURE] : []),
      ],
    }),
  );
  const results = await Promise.all([
    build({
      ...common,
      entryPoints: ['src/process.ts'],
      outfile: MAIN,
      plugins: [
        versionAtBundleTime(version),
        TABLE_LIBRARY,
        lazyFiles,
        lazyBuiltins(['child_process', 'crypto', 'dns/promises', 'fs/promises', 'http', 'net', 'os', 'stream', 'stream/consumers', 'stream/promises']),
      ],
    }),
    ...lazyBuilds,
  ]);
  // A warning here is a bundle that may behave differently from the sources (import.meta in
  // CommonJS, say): better no bundle.
  if (results.some((result) => result.warnings.length > 0)) throw new Error('esbuild warned; see above');
  await writeFile(join(outdir, 'package.json'), '{ "type": "commonjs" }\n');
  await writeHashes();
  await writePrinted();
}

/**
 * Each file's content hash, in the name of its code cache (bin/carectl.js): V8 checks a cache's
 * version, flags and source length, not the source, so a cache must never meet other code.
 */
async function writeHashes() {
  const hashes = {};
  for (const name of (await readdir(outdir)).filter((file) => /\.c?js$/.test(file))) {
    hashes[name] = createHash('sha256')
      .update(await readFile(join(outdir, name)))
      .digest('hex')
      .slice(0, 16);
  }
  await writeFile(join(outdir, 'hashes.json'), `${JSON.stringify(hashes)}\n`);
}

/** The command lines whose output bin/carectl.js prints from dist/bundle/printed.json. */
const PRINTED = ['--version', '-V', '--help', '-h'];

/** What the bundle prints for each of PRINTED, off a terminal (printed.json is not there yet: the bundle runs). */
async function writePrinted() {
  const printed = {};
  for (const arg of PRINTED) {
    const run = spawnSync(process.execPath, [join(root, 'bin/carectl.js'), arg], { encoding: 'utf8', env: { NODE_DISABLE_COMPILE_CACHE: '1' } });
    if (run.status !== 0 || run.stderr !== '') throw new Error(`carectl ${arg} failed (exit ${run.status}):\n${run.stderr}`);
    printed[arg] = run.stdout;
  }
  await writeFile(join(outdir, 'printed.json'), `${JSON.stringify(printed)}\n`);
}

await bundle();
