#!/usr/bin/env node
/**
 * The package's entry point: runs the bundled build (scripts/bundle.mjs, made by `npm run build`),
 * minified CommonJS files, which start far faster than loading dist/src module by module.
 *
 * Compiled code is cached, as each node allows:
 * - Node ≥ 22.1 keeps its own compile cache, made by the node that runs carectl, in the user's
 *   cache folder (`$XDG_CACHE_HOME/carectl`, default `~/.cache/carectl`). A folder that cannot be
 *   written only means no cache.
 * - Node 20 has none: the files are compiled with the V8 code caches made at bundle time (by a
 *   node 20; V8 rejects a cache from another version, which only means compiling as usual).
 * CommonJS (bin/package.json) so that it can use the caches and skip the ESM loader.
 * scripts/bundle.mjs requires this file to make the caches through the same loader.
 */
'use strict';
const { readFileSync, writeSync } = require('node:fs');
const Module = require('node:module');
const { isAbsolute, join } = require('node:path');

const directory = join(__dirname, '../dist/bundle');

/**
 * `--version` and `--help` print the same text on every run whose stdout is not a terminal (help
 * fits a terminal's width): scripts/bundle.mjs keeps what the bundle printed for each
 * (printed.json), and it is written here without loading the bundle, its V8 flags or its tree, the
 * ~15 ms of CPU past node's own start that made them ~1.8× `node -e 0` on node 22 and 24. When a
 * write fails the command runs as usual, meets the same failure and reports it as it does for any
 * output (a closed pipe quietly, a full disk as an error).
 */
function printedAtBundleTime(args) {
  if (args.length !== 1 || require('node:tty').isatty(1)) return false;
  let text;
  try {
    const printed = JSON.parse(readFileSync(join(directory, 'printed.json'), 'utf8'));
    if (!Object.hasOwn(printed, args[0])) return false;
    text = Buffer.from(printed[args[0]]);
  } catch {
    return false; // no printed.json: a bundle made before it
  }
  try {
    for (let written = 0; written < text.length;) written += writeSync(1, text, written);
  } catch {
    return false;
  }
  return true;
}
if (require.main === module && printedAtBundleTime(process.argv.slice(2))) process.exit(0);

const { setFlagsFromString } = require('node:v8');
const { Script } = require('node:vm');

/**
 * V8 settings for a short-lived process that streams (npm run bench measures each):
 * - undici parses HTTP with WebAssembly. V8 recompiles the hot parser with its optimizing
 *   compiler on a background thread, and node 20 waits for that compile when it exits: ~80 ms of
 *   CPU added to a lookup (node 22 and 24 do not wait: ~1 ms). The baseline code is fast enough
 *   for carectl's traffic.
 * - V8 grows its young generation as a busy process goes on, ~6 MB more resident memory by the
 *   end of a long export for no measurable speed: pages are garbage once written.
 * - Inlining makes the optimizing compiler's work on the hot stream code larger, and the memory
 *   that work used stays with the process. Without it, an export's peak is ~2 MB lower, and a
 *   100k export takes 0–5 % more CPU time.
 * - V8 lets the old generation grow well past its live data (~6 MB here) before a full
 *   collection; pages read ahead in parallel reach it and wait there as garbage. Growing it by
 *   10 % at a time keeps a parallel 20k export at ~72 MB instead of ~92 (60 one request at a
 *   time), for no measured loss of speed.
 * - V8 runs a regular expression's first match in its interpreter and compiles it to machine
 *   code from the second. The expression that finds the credentials in a reply
 *   (src/http/redact.ts: each form of each secret, each character in all its escapes) is large,
 *   and its interpreter code costs more to make than its machine code: compiled straight away, a
 *   lookup whose reply holds the password takes 23–44 ms less CPU. An ordinary reply never
 *   makes it (mayHoldSecret), and a lookup measured the same with and without this flag.
 * Set before any script is compiled, since a code cache is only valid under the flags it was
 * made with.
 */
setFlagsFromString('--liftoff-only --semi-space-growth-factor=1 --no-turbo-inlining --heap-growing-percent=10 --no-regexp-tier-up');

/** `$XDG_CACHE_HOME/carectl`, else `~/.cache/carectl`; undefined without an absolute folder for it. */
function cacheFolder(env) {
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return join(env.XDG_CACHE_HOME, 'carectl');
  if (env.HOME && isAbsolute(env.HOME)) return join(env.HOME, '.cache', 'carectl');
  return undefined;
}

/**
 * Whether node compiles with its own cache. An unwritable folder leaves it disabled, silently;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off as for any node program.
 */
const nodeCompileCache = typeof Module.enableCompileCache === 'function';
if (nodeCompileCache) {
  const folder = cacheFolder(process.env);
  if (folder !== undefined) Module.enableCompileCache(folder);
}

/** Node 20: every bundle file compiled in this process, by path: the code cache writer saves each. */
const compiledScripts = new Map();
const chunks = new Map();
/** What node wraps a CommonJS file in, given to vm.Script around each file on node 20. */
const WRAPPER = ['(function (exports, require, module, __filename, __dirname) {', '\n})'];

/**
 * Node 20: runs one bundle file as node would run a CommonJS file, with the code cache made at
 * bundle time, into `module` (registered by the caller first, as node does, so a cycle would not recurse).
 */
function runBundleFile(name, module) {
  const file = join(directory, name);
  let cachedData;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    // no cache: compile without one
  }
  const script = new Script(WRAPPER[0] + readFileSync(file, 'utf8') + WRAPPER[1], { filename: file, cachedData });
  compiledScripts.set(file, script);
  script.runInThisContext()(module.exports, bundleRequire, module, file, directory);
  return module.exports;
}

// The bundles require only node's built-ins besides their own lazy files: this file's require will do.
const nodeRequire = require;

/** Node 20: the bundle's `require`, its lazy files (`./undici.cjs`) through the code cache, the rest as node does. */
function bundleRequire(id) {
  if (!id.startsWith('./')) return nodeRequire(id);
  let module = chunks.get(id);
  if (!module) {
    module = { exports: {} };
    chunks.set(id, module);
    runBundleFile(id.slice(2), module);
  }
  return module.exports;
}
Object.assign(bundleRequire, nodeRequire);

/** One bundle file's exports (`./undici.cjs`), loaded as this node caches code. */
const requireBundleFile = (id) => (nodeCompileCache ? nodeRequire(join(directory, id)) : bundleRequire(id));

/** The names of the bundle files this process has loaded (for the tests). */
const loadedBundleFiles = () =>
  (nodeCompileCache ? Object.keys(nodeRequire.cache).filter((file) => file.startsWith(directory)) : [...compiledScripts.keys()]).map((file) =>
    file.slice(directory.length + 1),
  );

/** carectl's `main()`, resolving to the exit code. */
const loadCarectl = () => requireBundleFile('./carectl.js');

/**
 * Sets the exit code `running` resolves to. Should node run out of work with it unsettled (a bug: a
 * list waiting on a page nothing will bring), node would exit 0 with the output cut short: exit 1, saying so.
 */
function exitWith(running) {
  let settled = false;
  process.on('beforeExit', () => {
    if (settled) return;
    process.stderr.write('carectl: unexpected error: the command stopped with nothing left to wait for, unfinished; its output may be incomplete\n');
    process.exit(1);
  });
  return running.then((code) => {
    settled = true;
    process.exitCode = code;
  });
}

if (require.main === module) {
  exitWith(loadCarectl().main({ exitWhenDone: true }));
} else {
  module.exports = { loadCarectl, requireBundleFile, loadedBundleFiles, compiledScripts, nodeCompileCache, exitWith };
}
