/**
 * cli-table3, padding and cutting with carectl's measure (width.ts). Its own string-width (4) knows
 * no emoji newer than Unicode 12: a tag named `melting 🫠 face` put its row's last column one to the
 * right of the header's, or cut `false` to `fals`. scripts/bundle.mjs builds cli-table3's file with
 * displayWidth in place of string-width and this module as a plain import; run from tsc's output,
 * the string-width cli-table3 requires is put in node's module cache first.
 */
import { createRequire, Module } from 'node:module';
import { dirname } from 'node:path';
import type CliTable from 'cli-table3';
import { displayWidth } from './width.js';

export async function tableLibrary(): Promise<typeof CliTable> {
  const require = createRequire(import.meta.url);
  const measure = require.resolve('string-width', { paths: [dirname(require.resolve('cli-table3'))] });
  if (require.cache[measure] === undefined) {
    const replaced = new Module(measure);
    replaced.filename = measure;
    replaced.loaded = true;
    replaced.exports = (text: string): number => displayWidth(text);
    require.cache[measure] = replaced;
  }
  return (await import('cli-table3')).default;
}
