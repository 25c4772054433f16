/**
 * Questions for `login` on a terminal (the base address, the user name, the password), asked
 * with npm's `read`: node's readline underneath, so the line editing people expect works (arrow
 * keys, Home/End, erase, Ctrl-U, Ctrl-W) and an arrow key never ends up in the answer; the
 * password is muted, nothing echoed. Callers ask only when stdin is a terminal. `read` is loaded
 * only when a question is asked (a lazy file of its own in the bundle).
 *
 * What `read` leaves to its caller:
 * - Ctrl-C: readline reports it and `read` rejects with "canceled": InterruptedError (exit 130).
 * - Ctrl-D on an empty line, or the input ending: readline closes without an answer and `read`
 *   never settles; this sees readline let go of the input and ends the question (exit 2).
 * - The command's abort signal (SIGTERM, SIGHUP): readline is handed a Ctrl-C keypress, so it
 *   closes and gives the terminal back its mode before the command stops.
 */
import type { Readable } from 'node:stream';
import { InterruptedError, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';

const CTRL_C = { sequence: '\u0003', name: 'c', ctrl: true, meta: false, shift: false };

export async function ask(io: Io, question: string, options: { secret: boolean }): Promise<string> {
  const { read } = await import('read');
  const input: Readable = io.stdin.stream;
  if (io.signal.aborted) throw new InterruptedError();
  if (input.readableEnded) throw endedEarly();
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, answer = ''): void => {
      if (settled) return;
      settled = true;
      input.off('pause', onRelease);
      input.off('end', onRelease);
      io.signal.removeEventListener('abort', onAbort);
      // The message that follows starts on a line of its own, not after the question.
      if (error) io.stderr.stream.write('\n');
      if (error) reject(error);
      else resolve(answer);
    };
    read({ input, output: io.stderr.stream, prompt: question, silent: options.secret, terminal: true }).then(
      (answer) => {
        // The muted Enter left the cursor on the question's line.
        if (options.secret) io.stderr.stream.write('\n');
        finish(undefined, answer);
      },
      (err: Error) => finish(err.message === 'canceled' ? new InterruptedError() : err),
    );
    // readline listens for keypresses on the input from here until it closes.
    const listening = input.listenerCount('keypress');
    // An answer settles before this runs (a promise callback runs before setImmediate); a
    // readline that closed without one (Ctrl-D, the input's end) no longer listens.
    const onRelease = (): void => {
      setImmediate(() => {
        if (input.listenerCount('keypress') < listening) finish(endedEarly());
      });
    };
    const onAbort = (): void => {
      input.emit('keypress', CTRL_C.sequence, CTRL_C);
      finish(new InterruptedError());
    };
    input.on('pause', onRelease);
    input.once('end', onRelease);
    io.signal.addEventListener('abort', onAbort, { once: true });
  });
}

function endedEarly(): UsageError {
  return new UsageError('login: the input ended before an answer was given');
}
