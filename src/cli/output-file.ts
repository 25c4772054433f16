/**
 * `-O, --output-file FILE`: a command's standard output written into a temporary file beside FILE
 * (the report downloads' PartialFile: same folder, a normal new file's mode), flushed to disk and
 * renamed into place only once the command succeeded. On any failure or stop FILE is untouched and
 * the temporary file is removed. `-` is standard output; a device or FIFO is written straight.
 */
import { createWriteStream } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { CarectlError, OutputError, systemReason, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { linkTarget, PartialFile } from '../http/download.js';

const FLAG = '-O/--output-file';
/**
 * The temporary file's name: short, so a FILE name near the system's limit still gets one, and
 * hidden, so a folder listing during the run shows no half file under a name of its own.
 */
const PARTIAL_NAME = '.carectl';

export interface OutputFile {
  /** The Io the command runs with: its stdout goes into the temporary file. */
  io: Io;
  /** After the command succeeded: flushed and renamed into place. */
  commit(): Promise<void>;
  /** After a failure or stop: removed (nothing once committed). */
  discard(): Promise<void>;
  /** A failure to write the output, named by FILE (the user never sees the temporary name); any other as it is. */
  explain(err: unknown): unknown;
}

function explainer(given: string): (err: unknown) => unknown {
  return (err) => (err instanceof OutputError ? new CarectlError(`${FLAG}: cannot write ${given}: ${err.reason}`, err.exitCode, { cause: err }) : err);
}

/**
 * Checks FILE and creates its temporary file before anything is sent: a folder that does not exist
 * or cannot be written is a usage error (exit 2), as for report downloads. Undefined for `-`.
 */
export async function openOutputFile(io: Io, given: string): Promise<OutputFile | undefined> {
  if (given === '-') return undefined;
  if (given.trim() === '') throw new UsageError(`${FLAG}: needs a path (or - for standard output)`);
  const path = resolve(io.cwd, given);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw new UsageError(`${FLAG}: ${given} is a folder; give a file path`);
  if (existing && !existing.isFile()) {
    await access(path, constants.W_OK).catch((err: Error) => {
      throw new UsageError(`${FLAG}: cannot write to ${given}: ${systemReason(err)}`);
    });
    return straightInto(io, path, given);
  }
  const folder = await stat(dirname(path)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new UsageError(`${FLAG}: the folder ${dirname(given) || '.'} does not exist`);
  // Through a symbolic link, beside the file it names: the rename stays on that file system.
  const target = await linkTarget(path);
  const partial = await PartialFile.create(dirname(target), PARTIAL_NAME).catch((err: Error) => {
    throw new UsageError(`${FLAG}: cannot write to ${given}: ${systemReason(err)}`);
  });
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      partial.write(chunk).then(() => done(), done);
    },
  });
  return {
    io: { ...io, stdout: { stream, isTTY: false, file: true, onlyIfWhole: given } },
    commit: async () => {
      await ended(stream);
      // A failed flush or rename (a full disk, the folder made read-only meanwhile): one line, exit 1.
      await partial.commit(target).catch((err: Error) => {
        throw new CarectlError(`${FLAG}: cannot write ${given}: ${systemReason(err)}`);
      });
    },
    discard: async () => {
      stream.destroy();
      await partial.discard();
    },
    explain: explainer(given),
  };
}

/** A device or FIFO (`/dev/null`, a named pipe): nothing to rename, the bytes go straight in. */
function straightInto(io: Io, path: string, given: string): OutputFile {
  const stream = createWriteStream(path, { flags: 'w' });
  // A failed write reaches the command through its writer and ended(); one still pending when a
  // failed run destroys the stream (ENOSPC again, on /dev/full) has nobody left to tell.
  stream.on('error', () => undefined);
  return {
    io: { ...io, stdout: { stream, isTTY: false } },
    commit: () => ended(stream),
    discard: () => Promise.resolve(void stream.destroy()),
    explain: explainer(given),
  };
}

function ended(stream: Writable): Promise<void> {
  return new Promise<void>((done, fail) => {
    stream.once('error', fail);
    stream.end(done);
  });
}
