/**
 * `--state FILE` on disk: read (and checked against the query) before anything is sent, replaced
 * atomically (a temporary file beside it, flushed, renamed) only after a run's output is whole.
 */
import { access, constants, readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CarectlError, systemReason, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { linkTarget, PartialFile } from '../http/download.js';
import { checkSameQuery, parseState, stateText, type ListState } from '../api/incremental.js';

export interface StateFile {
  /** The state the last complete run left; undefined on the first run. */
  prior: ListState | undefined;
  save(state: ListState): Promise<void>;
}

/** FILE's state for `base` and `query`: another query's, a folder, or a file that cannot be written is a usage error. */
export async function openStateFile(io: Io, given: string, base: string, query: string): Promise<StateFile> {
  if (given.trim() === '') throw new UsageError('--state: needs a path');
  const path = resolve(io.cwd, given);
  const existing = await stat(path).catch(() => undefined);
  if (existing && !existing.isFile()) throw new UsageError(`--state: ${given} is not a regular file`);
  const folder = dirname(await linkTarget(path));
  // The state is replaced beside itself: found unwritable now, not after the list was printed.
  await access(folder, constants.W_OK).catch((err: Error) => {
    throw new UsageError(`--state: cannot write to ${given}: ${systemReason(err)}`);
  });
  let prior: ListState | undefined;
  if (existing) {
    const text = await readFile(path, 'utf8').catch((err: Error) => {
      throw new UsageError(`--state: cannot read ${given}: ${systemReason(err)}`);
    });
    prior = parseState(text, given);
    checkSameQuery(prior, base, query, given);
  }
  return {
    prior,
    save: async (state) => {
      const target = await linkTarget(path);
      let partial: PartialFile | undefined;
      try {
        partial = await PartialFile.create(dirname(target), '.carectl');
        await partial.write(Buffer.from(stateText(state)));
        await partial.commit(target);
      } catch (err) {
        // The output is out, the state stays as it was: the next run delivers these records again.
        throw new CarectlError(`--state: cannot write ${given}: ${systemReason(err as Error)}; the next run lists these records again`);
      } finally {
        await partial?.discard();
      }
    },
  };
}
