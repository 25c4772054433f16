#!/usr/bin/env node
/**
 * The package's entry point: runs the bundled build (scripts/bundle.mjs, made by `npm run build`),
 * one minified file compiled with the V8 code cache made at bundle time, which starts far faster
 * than loading dist/src module by module. A cache V8 rejects (another node version) only means
 * compiling as usual. CommonJS (bin/package.json) so that it can use the cache and skip the ESM
 * loader.
 */
'use strict';
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { Script } = require('node:vm');

const directory = join(__dirname, '../dist/bundle');
const file = join(directory, 'carectl.js');
let cachedData;
try {
  cachedData = readFileSync(`${file}.cache`);
} catch {
  // no cache: compile without one
}
const bundled = { exports: {} };
new Script(readFileSync(file, 'utf8'), { filename: file, cachedData }).runInThisContext()(bundled.exports, createRequire(file), bundled, file, directory);
bundled.exports.main().then((code) => {
  process.exitCode = code;
});
