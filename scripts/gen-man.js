#!/usr/bin/env node
// Writes man/carectl.1 from the built command tree. Run it with `npm run man`, which builds first.
import { mkdirSync, writeFileSync } from 'node:fs';
import { carectlManPage } from '../dist/src/program.js';

const target = new URL('../man/carectl.1', import.meta.url);
mkdirSync(new URL('.', target), { recursive: true });
writeFileSync(target, carectlManPage());
console.log(`wrote ${target.pathname}`);
