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
export async function fileSink(partial: PartialFile, path: string, unzip?: Unzipping): Promise<Sink> {
  const failed = (err: unknown): never => {
    throw new CarectlError(`cannot write ${path}: ${err instanceof Error && 'syscall' in err ? systemReason(err) : redact(err instanceof Error ? err.message : String(err))}`);
  };
  await partial.restart().catch(failed);
  return {
    write: (chunk) => partial.write(chunk).catch(failed),
    commit: () => (unzip ? extract(partial, path, unzip, failed) : partial.commit(path).catch(failed)),
    discard: async () => undefined,
  };
}

/** Extracts the archive's member into a temporary file of its own, renamed into place; the archive goes. */
async function extract(archive: PartialFile, path: string, unzip: Unzipping, failed: (err: unknown) => never): Promise<void> {
  const extracted = await PartialFile.create(dirname(path), basename(path)).catch(failed);
  try {
    const { name, bytes } = await extractSingleMember(archive.path, extracted, unzip.what).catch((err: unknown) => (err instanceof CarectlError ? Promise.reject(err) : failed(err)));
    const final = unzip.finalPath(name);
    await extracted.commit(final).catch(failed);
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
    discard: async () => undefined,
  };
}
