/**
 * carectl's own documentation: the tree that buildProgram makes, and the man page rendered from
 * it. scripts/gen-man.js writes the page to man/carectl.1 and the docs test compares that file
 * with it, so both use carectlManPage.
 */
import { PassThrough, Readable } from 'node:stream';
import type { Io } from '../core/io.js';
import { realSleep } from '../core/io.js';
import { buildProgram } from '../cli/program.js';
import { VERSION } from '../core/version.js';
import { renderManPage } from './man.js';
import { describeCommand, type CommandDoc } from './tree.js';

export function carectlManPage(): string {
  return renderManPage(buildProgram(unusedIo()), VERSION);
}

export function carectlTree(): CommandDoc {
  return describeCommand(buildProgram(unusedIo()));
}

/** No command runs while the tree is read; an empty environment keeps the page the same everywhere. */
function unusedIo(): Io {
  return {
    stdout: { stream: new PassThrough(), isTTY: false },
    stderr: { stream: new PassThrough(), isTTY: false },
    stdin: { stream: Readable.from([]), isTTY: false },
    env: {},
    cwd: '/',
    now: () => 0,
    sleep: realSleep,
    signal: new AbortController().signal,
  };
}
