#!/usr/bin/env node
// Entry point: wires the real process into carectl's injected I/O.
import { main } from '../dist/src/process.js';

process.exitCode = await main();
