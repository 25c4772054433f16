/**
 * --resume-file FILE (CARECTL_RESUME_FILE): where a script finds the --resume token of a list that
 * stopped early, without reading it out of a sentence on stderr. A list that completes removes
 * FILE, so its presence alone says whether there is more to fetch.
 */
import { closeSync, constants, lstatSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { systemReason, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import type { NamedFile } from './file-options.js';
import { writeAtomically } from '../config/report-ledger.js';

/** What FILE is: a regular file (through a link, its target), something else (a device, a FIFO), or nothing yet. */
type Place = { kind: 'regular'; path: string } | { kind: 'other' } | { kind: 'missing' };

/** A token is one base64url line of a few KB; a file far larger than that is not one of ours. */
const MAX_TOKEN_FILE_BYTES = 1 << 20;

function place(path: string): Place {
  let link;
  try {
    link = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  if (link.isFile()) return { kind: 'regular', path };
  if (!link.isSymbolicLink()) return { kind: 'other' };
  // Through a link to a regular file, that file is replaced; a dangling link is written through.
  const target = statSync(path, { throwIfNoEntry: false });
  return target?.isFile() ? { kind: 'regular', path: realpathSync(path) } : { kind: 'other' };
}

/**
 * What a regular file holds, of what settleResumeFile writes (one token line, versions 3 to 5; `owns`
 * says which are this command's): empty, a line that may be a token of an older release, or other text.
 */
function tokenIn(path: string, owns: (token: string) => boolean): 'ours' | 'another' | 'empty' | 'unknown' | 'text' {
  if (statSync(path).size > MAX_TOKEN_FILE_BYTES) return 'text';
  const text = readFileSync(path, 'utf8');
  if (text === '') return 'empty';
  if (!/^[A-Za-z0-9_-]+\n?$/.test(text)) return 'text';
  if (!/^[345]\|/.test(Buffer.from(text.trim(), 'base64url').toString('latin1'))) return 'unknown';
  return owns(text.trim()) ? 'ours' : 'another';
}

/**
 * Before the list's first page: FILE holding the token of another list (CARECTL_RESUME_FILE set for
 * every job of a cron table), or text that is no token (`--resume-file out.ndjson`), is a usage
 * error, as this run would replace or remove it.
 */
export function refuseAnotherToken(io: Io, file: NamedFile, owns: (token: string) => boolean): void {
  const found = place(resolve(io.cwd, file.given));
  const held = found.kind === 'regular' ? tokenIn(found.path, owns) : undefined;
  if (held === 'another')
    throw new UsageError(
      `${file.flag}: ${file.given} holds the --resume token of another list; give this one another FILE, or remove it once that list needs no continuing`,
    );
  if (held === 'text')
    throw new UsageError(`${file.flag}: ${file.given} holds something other than a --resume token, which an early stop would replace; give another FILE`);
}

/** Into a device, a FIFO or through a dangling link: the bytes go where FILE points, nothing is renamed over it. */
function writeStraight(path: string, text: string): void {
  // O_NONBLOCK: a FIFO that nobody reads fails (ENXIO) instead of hanging the list's end.
  const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_CREAT | constants.O_APPEND, 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `token` (and a newline) to FILE (`given`, from `io.cwd`), or removes it when the list completed (no token).
 * Only a regular file holding this command's token is removed, and only a regular file is replaced (atomically);
 * anything else (`/dev/null`, a FIFO) is written into, never renamed over. A failure comes back as
 * its message (the token is on stderr too): the caller decides whether it changes the exit code.
 */
export function settleResumeFile(io: Io, given: string, token: string | undefined, owns?: (token: string) => boolean): string | undefined {
  const path = resolve(io.cwd, given);
  try {
    const found = place(path);
    if (token === undefined) {
      // Through a link, its target goes (as writes went there): the link dangles, and `test -f` says complete.
      if (found.kind === 'regular' && owns && tokenIn(found.path, owns) === 'ours') rmSync(found.path, { force: true });
      return undefined;
    }
    if (found.kind === 'other') writeStraight(path, `${token}\n`);
    else writeAtomically(found.kind === 'regular' ? found.path : path, `${token}\n`);
    return undefined;
  } catch (err) {
    return `--resume-file: cannot ${token === undefined ? 'remove' : 'write'} ${given}: ${systemReason(err as Error)}`;
  }
}

/**
 * Before anything is sent, as for -O: a folder that does not exist, is not a folder or cannot be
 * written, or FILE a folder, is a usage error (`flag`: --resume-file or CARECTL_RESUME_FILE).
 */
export async function checkResumeFile(io: Io, given: string, flag: string): Promise<void> {
  const path = resolve(io.cwd, given);
  if ((await stat(path).catch(() => undefined))?.isDirectory()) throw new UsageError(`${flag}: ${given} is a folder; give a file path`);
  const folder = await stat(dirname(path)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new UsageError(`${flag}: the folder ${dirname(given) || '.'} does not exist`);
  await access(dirname(path), constants.W_OK).catch((err: Error) => {
    throw new UsageError(`${flag}: cannot write to ${given}: ${systemReason(err)}`);
  });
}
