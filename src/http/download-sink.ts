/** Where one attempt of a download writes: the partial file, or a stream written straight. */
import type { Writable } from 'node:stream';
import { CarectlError, systemReason } from '../core/errors.js';
import { StreamSink } from '../core/stream-sink.js';
import type { PartialFile } from './partial-file.js';
import { redact } from './redact.js';

export interface Sink {
  write(chunk: Buffer): Promise<void>;
  /** Makes the bytes final (the file appears at PATH). */
  commit(): Promise<void>;
  /** Ends a failed attempt (a file's bytes stay until the next attempt empties it, or discard). */
  discard(): Promise<void>;
}

/** One attempt's writes into the partial file; errors name PATH, which is what the user gave. */
export async function fileSink(partial: PartialFile, path: string): Promise<Sink> {
  const failed = (err: unknown): never => {
    throw new CarectlError(`cannot write ${path}: ${err instanceof Error && 'syscall' in err ? systemReason(err) : redact(err instanceof Error ? err.message : String(err))}`);
  };
  await partial.restart().catch(failed);
  return {
    write: (chunk) => partial.write(chunk).catch(failed),
    commit: () => partial.commit(path).catch(failed),
    discard: async () => undefined,
  };
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
