#!/usr/bin/env node
/**
 * The package's entry point: runs the bundled build (scripts/bundle.mjs, made by `npm run build`),
 * minified CommonJS files, which start far faster than loading dist/src module by module.
 *
 * Each bundle file is compiled with the V8 code cache this file keeps of it, made by the node that
 * runs carectl once a command is done, in the user's cache folder (`$XDG_CACHE_HOME/carectl`,
 * default `~/.cache/carectl`). CommonJS (bin/package.json) so that it skips node's ESM loader.
 */
'use strict';
const { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } = require('node:fs');
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
 * V8 code caches of the bundle files, made by the node that runs carectl, in the user's cache
 * folder. A cache is made when the command is done, so it holds the functions the command
 * compiled as it ran, not only those compiled when the file loaded (node's own compile cache
 * writes right after loading: 7 KB of undici's file against 290 KB here). NODE_DISABLE_COMPILE_CACHE=1
 * turns it off, as node's; a folder that cannot be written only means no cache.
 */
const cache = { folder: process.env.NODE_DISABLE_COMPILE_CACHE ? undefined : cacheFolder(process.env), key: cacheKey() };

/**
 * What a cache is valid for beyond its bundle file: this node and its flags (V8 rejects a cache
 * from another version or other flags, silently; keyed, a node that alternates does not rewrite
 * each time). The flags' text is hashed only to keep the name short.
 */
function cacheKey() {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`.trim();
  return `${process.version}-${process.arch}${flags === '' ? '' : `-${hashOf(flags).toString(36)}`}`;
}

/** A short hash of a text (not for security: names and sets only). */
function hashOf(text) {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash >>> 0;
}

/**
 * The cache file of a bundle file, named by its content's hash (hashes.json, from
 * scripts/bundle.mjs), so that a cache is never used with other code; throws without a hash.
 */
let hashes;
function cacheFile(name) {
  hashes ??= JSON.parse(readFileSync(join(directory, 'hashes.json'), 'utf8'));
  if (typeof hashes[name] !== 'string') throw new Error(`no hash for ${name}`);
  return join(cache.folder, `${name}-${hashes[name]}-${cache.key}.cache`);
}

/** Every bundle file compiled in this process, by name: { script, cached } (cached: what the cache file gave, or undefined). */
const compiled = new Map();
const chunks = new Map();
/** What node wraps a CommonJS file in, given to vm.Script around each file. */
const WRAPPER = ['(function (exports, require, module, __filename, __dirname) {', '\n})'];

/**
 * A cache file: 4 bytes, what the runs that made it did, then V8's data. What a run did is its
 * command's first two words (`tags get`) and the bundle files it loaded, a bit of the 32 each (by
 * hash: two may share one, which only means a cache not made again). A run that did something
 * none of them did makes the cache again, and since it ran with the cache, the new one holds
 * theirs too. Measured on node 24 (21–31 pairs): a lookup with the cache `config set` made took
 * 1.06×, `list --limit 1` with a lookup's 1.08×. The set only grows: a cache is made a few times at most.
 */
const HEADER = 4;
function readCache(name) {
  if (cache.folder === undefined) return undefined;
  try {
    const data = readFileSync(cacheFile(name));
    return { madeBy: data.readUInt32LE(0), data: data.subarray(HEADER) };
  } catch {
    return undefined; // none yet, or no folder
  }
}

/** What this run did, as readCache reads it. */
function runSet() {
  const command = process.argv
    .slice(2)
    .filter((arg) => !arg.startsWith('-'))
    .slice(0, 2)
    .join(' ');
  let set = 0;
  for (const done of [command, ...compiled.keys()]) set |= 1 << (hashOf(done) % 32);
  return set >>> 0;
}

/** Runs one bundle file as node would run a CommonJS file, with its code cache, into `module`. */
function runBundleFile(name, module) {
  const file = join(directory, name);
  const cached = readCache(name);
  const script = new Script(WRAPPER[0] + readFileSync(file, 'utf8') + WRAPPER[1], { filename: file, cachedData: cached?.data });
  if (compiled.size === 0 && cache.folder !== undefined) process.once('exit', writeCaches);
  compiled.set(name, { script, cached });
  script.runInThisContext()(module.exports, bundleRequire, module, file, directory);
  return module.exports;
}

/**
 * When the command is done: the cache of each file compiled without one, with one V8 rejected, or
 * with one whose runs did not do all this one did. Written beside and renamed, so that a run
 * never reads half a cache; any failure (a read-only or full disk) leaves the cache as it was, silently.
 */
function writeCaches() {
  if (hashes === undefined) return; // no hashes.json: a bundle made without them
  const done = runSet();
  for (const [name, { script, cached }] of compiled) {
    if (cached && !script.cachedDataRejected && (done & ~cached.madeBy) === 0) continue;
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE((done | (script.cachedDataRejected ? 0 : (cached?.madeBy ?? 0))) >>> 0);
    let temporary;
    try {
      const file = cacheFile(name);
      temporary = `${file}.${process.pid}`;
      mkdirSync(cache.folder, { recursive: true, mode: 0o700 });
      writeFileSync(temporary, Buffer.concat([header, script.createCachedData()]), { mode: 0o600 });
      renameSync(temporary, file);
      removeOtherBuilds(name);
    } catch {
      try {
        if (temporary) unlinkSync(temporary);
      } catch {
        // never written
      }
    }
  }
}

/**
 * Each build of carectl has caches of its own: when one is made, those of the same file from other
 * builds go (every upgrade, or `npm run build` in a checkout, would add ~750 KB a node version).
 */
function removeOtherBuilds(name) {
  const ours = `${name}-${hashes[name]}-`;
  for (const other of readdirSync(cache.folder)) {
    if (other.startsWith(`${name}-`) && !other.startsWith(ours) && other.endsWith('.cache')) unlinkSync(join(cache.folder, other));
  }
}

// The bundles require only node's built-ins besides their own lazy files: this file's require will do.
const nodeRequire = require;

/** The bundle's `require`: its lazy files (`./undici.cjs`) through the code cache, the rest as node does. */
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

/** The names of the bundle files this process has loaded (for the tests). */
const loadedBundleFiles = () => [...compiled.keys()];

/** What became of each loaded file's cache (for the tests): 'accepted', 'rejected' or 'none'. */
const codeCaches = () =>
  Object.fromEntries([...compiled].map(([name, { script, cached }]) => [name, !cached ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted']));

/** carectl's `main()`, resolving to the exit code. */
const loadCarectl = () => bundleRequire('./carectl.js');

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
  module.exports = { loadCarectl, requireBundleFile: bundleRequire, loadedBundleFiles, codeCaches, exitWith };
}
