#!/usr/bin/env node
// The package's entry point. It runs the bundled build (one minified file with a V8 code cache,
// made by `npm run build`, see scripts/bundle.mjs), which starts far faster than loading
// dist/src module by module; bin/carectl-bundle.cjs is CommonJS so that it can use the cache.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./carectl-bundle.cjs');
