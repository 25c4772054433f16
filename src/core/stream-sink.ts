import type { Writable } from 'node:stream';
import { InterruptedError, OutputError, isBrokenPipe } from './errors.js';

/** How long a stopped command still waits for a reader that is not reading. */
const STOP_GRACE_MS = 200;
/** Gathered text goes out once it is this many characters long, whether or not its page ended. */
const GATHER_LENGTH = 64 * 1024;
/** What a gathered write returns: already settled. */
const GATHERED: Promise<void> = Promise.resolve();

/**
 * Writes whole chunks to a stream, honouring backpressure and turning stream errors into rejected
 * promises instead of an unhandled 'error' event: EPIPE as it is (the reader went away, which
 * ends output quietly), a failed system write (a full disk) as an OutputError. A stop signal
 * ends a wait for a reader that is not reading (InterruptedError), so Ctrl-C never hangs.
 */
export class StreamSink {
  readonly #stream: Writable;
  /**
   * Into a regular file (nobody reads it while it is written, and a write never waits), lines
   * are gathered until flush(): one system write a page instead of one a record. Elsewhere (a
   * pipe, a terminal) each write goes out at once, so that a reader that stops reading has taken
   * whole records only, as `handled` counts them.
   */
  readonly #gather: boolean;
  #gathered = '';
  #gatheredWrites = 0;
  #failure: Error | undefined;
  /** Settles when the stream has handled the most recent chunk (its write callback ran). */
  #lastWrite: Promise<void> = Promise.resolve();
  /** How many writes the stream has handed on (their callbacks ran). */
  #handled = 0;
  readonly #signal: AbortSignal | undefined;
  readonly #recordFailure = (error: Error): void => {
    this.#failure ??= error;
  };

  constructor(stream: Writable, signal: AbortSignal | undefined, gather = false) {
    this.#stream = stream;
    this.#signal = signal;
    this.#gather = gather;
    // Kept until end(): an error may surface after write() already resolved.
    stream.on('error', this.#recordFailure);
  }

  /**
   * Not async: a gathered write settles at once with a promise shared by all (an export writes
   * 20k records; each async call is a promise more for the young generation to collect). After a
   * stream error #send rejects with it, sending nothing.
   */
  write(text: string): Promise<void> {
    if (!this.#gather || this.#failure !== undefined) return this.#send(text, 1);
    this.#gathered += text;
    this.#gatheredWrites++;
    return this.#gathered.length >= GATHER_LENGTH ? this.flush() : GATHERED;
  }

  /** Sends what was gathered (a page ends). */
  async flush(): Promise<void> {
    if (this.#gatheredWrites === 0) return;
    const [text, writes] = [this.#gathered, this.#gatheredWrites];
    this.#gathered = '';
    this.#gatheredWrites = 0;
    await this.#send(text, writes);
  }

  async #send(text: string, writes: number): Promise<void> {
    this.#throwIfFailed();
    let accepted = true;
    this.#lastWrite = new Promise((resolve) => {
      accepted = this.#stream.write(text, (error) => {
        if (error) this.#recordFailure(error);
        else this.#handled += writes;
        resolve();
      });
    });
    if (!accepted) await this.#untilStopped(this.#drained());
    this.#throwIfFailed();
  }

  /** Writes handed on to the system so far: what a reader that stops reading now still gets. */
  get handled(): number {
    return this.#handled;
  }

  /** Waits until the last chunk was handled, then stops listening; rejects with any stream error. */
  async end(): Promise<void> {
    await this.flush();
    await this.#untilStopped(this.#lastWrite);
    this.#stream.off('error', this.#recordFailure);
    this.#throwIfFailed();
  }

  /**
   * `wait`, unless a stop signal came and the stream still has not moved a moment later: then an
   * InterruptedError. The moment lets a write that is merely in progress finish as usual.
   */
  #untilStopped(wait: Promise<void>): Promise<void> {
    const signal = this.#signal;
    if (signal === undefined) return wait;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const giveUp = (): void => {
        timer = setTimeout(() => reject(new InterruptedError()), STOP_GRACE_MS);
      };
      if (signal.aborted) giveUp();
      else signal.addEventListener('abort', giveUp, { once: true });
      void wait.then(() => {
        signal.removeEventListener('abort', giveUp);
        clearTimeout(timer);
        resolve();
      });
    });
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

/** One-off write of a complete text with the same backpressure, error handling and stop signal. */
export async function writeText(stream: Writable, text: string, signal: AbortSignal | undefined): Promise<void> {
  const sink = new StreamSink(stream, signal);
  await sink.write(text);
  await sink.end();
}
