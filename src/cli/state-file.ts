/**
 * `--state FILE` on disk: locked for the run, read (and checked against the query) before anything
 * is sent, replaced atomically (a temporary file beside it, flushed, renamed) only after a run's
 * output is whole.
 */
import { access, constants, open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { formatBytes } from '../core/bytes.js';
import { CarectlError, systemReason, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { linkTarget, PartialFile } from '../http/download.js';
import { checkSameQuery, MARGIN_MS, notAStateFile, parseState, serviceTime, stateText, type ListState, type OutputMark } from './incremental-state.js';
import { holdRunLock } from './run-lock.js';

/** Larger than any state (its ids are those of one day, a million of them some 12 MB): refused without being read. */
const MAX_STATE_BYTES = 16 * 1024 ** 2;

/** -O's file: its path (resolved) and as the user named it. */
export interface OutputName {
  path: string;
  shown: string;
}

export interface StateFile {
  /** The state the last complete run left; undefined on the first run. */
  prior: ListState | undefined;
  /** `state` written, with `output` (-O's file, just renamed into place) among the files its runs wrote. */
  save(state: ListState): Promise<void>;
  /** The lock let go. */
  release(): Promise<void>;
}

/**
 * FILE's state for `base` and `query`, locked for this run: another query's, a folder, a file that
 * cannot be written, or a mark past `now` is a usage error; so is an `output` (-O, resolved) that
 * an earlier run of this state wrote and that is still there, its records behind the state's mark.
 */
export async function openStateFile(io: Io, given: string, base: string, query: string, output?: OutputName): Promise<StateFile> {
  if (given.trim() === '') throw new UsageError('--state: needs a path');
  const path = resolve(io.cwd, given);
  const existing = await stat(path).catch(() => undefined);
  if (existing && !existing.isFile()) throw new UsageError(`--state: ${given} is not a regular file`);
  const folder = dirname(await linkTarget(path));
  // The state is replaced beside itself: found unwritable now, not after the list was printed.
  await access(folder, constants.W_OK).catch((err: Error) => {
    throw new UsageError(`--state: cannot write to ${given}: ${systemReason(err)}`);
  });
  const release = await holdRunLock(io, path, given, '--state');
  try {
    const prior = await readState(path, given);
    if (prior) {
      checkSameQuery(prior, base, query, given);
      // The mark is the service's clock, which may run ahead of ours by up to the margin.
      if (prior.since > io.now() + MARGIN_MS)
        throw new UsageError(
          `--state: ${given} marks ${serviceTime(prior.since)} UTC, later than now (a clock set back?); give another FILE or remove it to list everything again`,
        );
      if (output !== undefined) await refuseWrittenBefore(prior, output, given);
    }
    return { prior, save: (state) => save(path, given, state, output), release };
  } catch (err) {
    await release();
    throw err;
  }
}

/** The state in `path`, read whole only when it is of a state's size; undefined when there is none. */
async function readState(path: string, given: string): Promise<ListState | undefined> {
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new UsageError(`--state: cannot read ${given}: ${systemReason(err)}`);
  });
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    if (size > MAX_STATE_BYTES) return notAStateFile(given, `${formatBytes(size)}, more than any state holds`);
    const text = await handle.readFile('utf8').catch((err: Error) => {
      throw new UsageError(`--state: cannot read ${given}: ${systemReason(err)}`);
    });
    return parseState(text, given);
  } finally {
    await handle.close();
  }
}

/** The marks of `marks` whose file is still the one a run wrote there. */
async function stillThere(marks: readonly OutputMark[]): Promise<OutputMark[]> {
  const kept: OutputMark[] = [];
  for (const mark of marks) {
    const now = await stat(mark.path).catch(() => undefined);
    if (now && now.dev === mark.dev && now.ino === mark.ino) kept.push(mark);
  }
  return kept;
}

async function refuseWrittenBefore(prior: ListState, output: OutputName, given: string): Promise<void> {
  const target = await stat(output.path).catch(() => undefined);
  if (!target) return;
  const earlier = (await stillThere(prior.outputs)).find((mark) => mark.dev === target.dev && mark.ino === target.ino);
  if (earlier)
    throw new UsageError(
      `-O/--output-file: ${output.shown} holds records an earlier run of --state ${given} wrote, which the state has moved past; give another FILE (a name no other run takes) or move it away first`,
    );
}

async function save(path: string, given: string, state: ListState, output: OutputName | undefined): Promise<void> {
  const target = await linkTarget(path);
  let partial: PartialFile | undefined;
  try {
    const written = output === undefined ? undefined : await stat(output.path).catch(() => undefined);
    const mark = output && written?.isFile() ? [{ path: output.path, dev: written.dev, ino: written.ino }] : [];
    const outputs = [...(await stillThere(state.outputs)).filter((kept) => kept.path !== output?.path), ...mark];
    partial = await PartialFile.create(dirname(target), '.carectl');
    await partial.write(Buffer.from(stateText({ ...state, outputs })));
    await partial.commit(target);
  } catch (err) {
    // The output is out, the state stays as it was: the next run delivers these records again.
    throw new CarectlError(`--state: cannot write ${given}: ${systemReason(err as Error)}; the next run lists these records again`);
  } finally {
    await partial?.discard();
  }
}
