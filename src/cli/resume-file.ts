/**
 * --resume-file FILE (CARECTL_RESUME_FILE): where a script finds the --resume token of a list that
 * stopped early, without reading it out of a sentence on stderr. A list that completes removes
 * FILE, so its presence alone says whether there is more to fetch.
 */
import { rmSync } from 'node:fs';
import { systemReason } from '../core/errors.js';
import { writeAtomically } from '../config/report-ledger.js';

/**
 * Writes `token` (and a newline) to `path`, or removes `path` when the list completed (no token).
 * A failure is said, not thrown: the token is in the message too, and the list's own outcome
 * stays what decides the exit code.
 */
export function settleResumeFile(path: string, token: string | undefined, say: (message: string) => void): void {
  try {
    if (token === undefined) rmSync(path, { force: true });
    else writeAtomically(path, `${token}\n`);
  } catch (err) {
    say(`--resume-file: cannot ${token === undefined ? 'remove' : 'write'} ${path}: ${systemReason(err as Error)}`);
  }
}
