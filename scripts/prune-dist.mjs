/**
 * Removes what tsc left in dist/ from sources that are gone (a test file renamed or split): tsc
 * builds incrementally and never deletes, and `npm test` runs every dist/test/*.test.js, so a
 * stale copy would run beside its successor.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const COMPILED = /\.(?:js|js\.map|d\.ts|d\.ts\.map)$/;

function prune(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      continue;
    }
    if (!COMPILED.test(entry.name)) continue;
    const source = join(root, relative(join(root, 'dist'), path)).replace(COMPILED, '.ts');
    if (!existsSync(source)) rmSync(path);
  }
}

for (const folder of ['src', 'test']) if (existsSync(join(root, 'dist', folder))) prune(join(root, 'dist', folder));
