/** Where one attempt of a download writes: the partial file, or a stream written straight. */
import type { Writable } from 'node:stream';
import { CarectlError, systemReason } from '../core/errors.js';
import { StreamSink } from '../core/stream-sink.js';
import { basename, dirname } from 'node:path';
import { PartialFile } from './partial-file.js';
import { extractSingleMember } from './unzip.js';
import { redact } from './redact.js';

export interface Sink {
  write(chunk: Buffer): Promise<void>;
  /** Makes the bytes final (the file appears at PATH). */
  commit(): Promise<void>;
  /** Ends a failed attempt (a file's bytes stay until the next attempt empties it, or discard). */
  discard(): Promise<void>;
}

/** --unzip: the download is a ZIP archive whose one member is saved instead. */
export interface Unzipping {
  /** The archive as errors name it (`the file of report 60001`). */
  what: string;
  /** Where the member goes, from its name. */
  finalPath(member: string): string;
  /** Set once saved: where, how large, and the member's name. */
  saved?: { path: string; bytes: number; member: string };
}

/** One attempt's writes into the partial file; errors name PATH, which is what the user gave. */
export async function fileSink(partial: PartialFile, path: string, unzip: Unzipping | undefined, signal: AbortSignal): Promise<Sink> {
  const failed = writeFailure(path);
  await partial.restart().catch(failed);
  return {
    write: (chunk) => partial.write(chunk).catch(failed),
    commit: () => (unzip ? extract(partial, path, unzip, signal) : partial.commit(path).catch(failed)),
    discard: () => Promise.resolve(),
  };
}

/** Throws a failed write (a full disk) as one line naming `path`. */
function writeFailure(path: string): (err: unknown) => never {
  return (err) => {
    throw new CarectlError(
      `cannot write ${path}: ${err instanceof Error && 'syscall' in err ? systemReason(err) : redact(err instanceof Error ? err.message : String(err))}`,
    );
  };
}

/**
 * Extracts the archive's member into a temporary file of its own, renamed into place; the archive
 * goes. A failed write names where the member was going (in a folder: report-ID.<its extension>).
 */
async function extract(archive: PartialFile, path: string, unzip: Unzipping, signal: AbortSignal): Promise<void> {
  const extracted = await PartialFile.create(dirname(path), basename(path)).catch(writeFailure(path));
  let destination = path;
  try {
    const onMember = (member: string): void => void (destination = unzip.finalPath(member));
    const { name, bytes } = await extractSingleMember(archive.path, extracted, unzip.what, { onMember, signal }).catch((err: unknown) =>
      err instanceof CarectlError ? Promise.reject(err) : writeFailure(destination)(err),
    );
    const final = unzip.finalPath(name);
    await extracted.commit(final).catch(writeFailure(final));
    unzip.saved = { path: final, bytes, member: name };
  } finally {
    await extracted.discard();
  }
  await archive.discard();
}

export function stdoutSink(stream: Writable, signal: AbortSignal): Sink {
  const sink = new StreamSink(stream, signal);
  return {
    // StreamSink hands the chunk to stream.write unchanged, which takes bytes as well as text.
    write: (chunk) => sink.write(chunk as unknown as string),
    commit: () => sink.end(),
    discard: () => Promise.resolve(),
  };
}
