/**
 * Questions for `login` on a terminal: the user name (echoed by the terminal as usual) and the
 * password (raw mode: nothing is echoed). Callers ask only when stdin is a terminal.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { InterruptedError, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const CTRL_U = '\u0015';
const ERASE = new Set(['\u007f', '\b']);

type TerminalInput = Readable & { setRawMode?: (raw: boolean) => unknown };

export async function ask(io: Io, question: string, options: { secret: boolean }): Promise<string> {
  const input = io.stdin.stream as TerminalInput;
  const raw = options.secret && typeof input.setRawMode === 'function';
  io.stderr.stream.write(question);
  if (raw) input.setRawMode?.(true);
  try {
    return await readLine(input, io.signal);
  } finally {
    if (raw) {
      input.setRawMode?.(false);
      // the Enter key was not echoed either
      io.stderr.stream.write('\n');
    }
  }
}

/**
 * One line, with the editing a raw terminal leaves to the program (erase, Ctrl-U, Ctrl-C,
 * Ctrl-D). What follows the line is pushed back, so the next question reads it.
 */
function readLine(input: Readable, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (input.readableEnded) return reject(endedEarly());
    const decoder = new StringDecoder('utf8');
    let line = '';
    const finish = (error: Error | undefined, rest = ''): void => {
      input.off('data', onData);
      input.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      input.pause();
      if (rest !== '') input.unshift(Buffer.from(rest, 'utf8'));
      if (error) reject(error);
      else resolve(line);
    };
    const onData = (chunk: Buffer | string): void => {
      const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
      for (let i = 0; i < text.length; i++) {
        const char = text[i] as string;
        if (char === '\r' || char === '\n') {
          const next = char === '\r' && text[i + 1] === '\n' ? i + 2 : i + 1;
          return finish(undefined, text.slice(next));
        }
        if (char === CTRL_C) return finish(new InterruptedError());
        if (char === CTRL_D) return finish(line === '' ? endedEarly() : undefined, text.slice(i + 1));
        if (char === CTRL_U) line = '';
        else if (ERASE.has(char)) line = Array.from(line).slice(0, -1).join('');
        else line += char;
      }
    };
    const onEnd = (): void => finish(line === '' ? endedEarly() : undefined);
    const onAbort = (): void => finish(new InterruptedError());
    input.on('data', onData);
    input.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    input.resume();
  });
}

function endedEarly(): UsageError {
  return new UsageError('login: the input ended before an answer was given');
}
