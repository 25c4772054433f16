import type { Writable } from 'node:stream';
import { OutputError, isBrokenPipe } from '../core/errors.js';

/**
 * Writes whole chunks to a stream, honouring backpressure and turning stream errors into rejected
 * promises instead of an unhandled 'error' event: EPIPE as it is (the reader went away, which
 * ends output quietly), a failed system write (a full disk) as an OutputError.
 */
export class StreamSink {
  readonly #stream: Writable;
  #failure: Error | undefined;
  /** Settles when the stream has handled the most recent chunk (its write callback ran). */
  #lastWrite: Promise<void> = Promise.resolve();
  readonly #recordFailure = (error: Error): void => {
    this.#failure ??= error;
  };

  constructor(stream: Writable) {
    this.#stream = stream;
    // Kept until end(): an error may surface after write() already resolved.
    stream.on('error', this.#recordFailure);
  }

  async write(text: string): Promise<void> {
    this.#throwIfFailed();
    let accepted = true;
    this.#lastWrite = new Promise((resolve) => {
      accepted = this.#stream.write(text, (error) => {
        if (error) this.#recordFailure(error);
        resolve();
      });
    });
    if (!accepted) await this.#drained();
    this.#throwIfFailed();
  }

  /** Waits until the last chunk was handled, then stops listening; rejects with any stream error. */
  async end(): Promise<void> {
    await this.#lastWrite;
    this.#stream.off('error', this.#recordFailure);
    this.#throwIfFailed();
  }

  #drained(): Promise<void> {
    const stream = this.#stream;
    // A destroyed stream never drains; its write callback carries the error.
    if (stream.destroyed || stream.writableEnded) return this.#lastWrite;
    return new Promise((resolve) => {
      const settle = (): void => {
        stream.off('drain', settle);
        stream.off('error', settle);
        stream.off('close', onClose);
        resolve();
      };
      const onClose = (): void => {
        this.#failure ??= new Error('output stream closed before all data was written');
        settle();
      };
      stream.on('drain', settle);
      stream.on('error', settle);
      stream.on('close', onClose);
    });
  }

  #throwIfFailed(): void {
    const failure = this.#failure;
    if (failure === undefined) return;
    // The system refused the write (ENOSPC, EFBIG …); a closed pipe or a stream's own state stays as it is.
    throw (failure as NodeJS.ErrnoException).syscall !== undefined && !isBrokenPipe(failure) ? new OutputError(failure) : failure;
  }
}

/** One-off write of a complete text with the same backpressure and error handling. */
export async function writeText(stream: Writable, text: string): Promise<void> {
  const sink = new StreamSink(stream);
  await sink.write(text);
  await sink.end();
}
