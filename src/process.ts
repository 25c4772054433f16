/**
 * The real process as carectl's Io: stdio with TTY flags, the environment, the clock, and an
 * abort signal raised by Ctrl-C (SIGINT), SIGTERM or SIGHUP.
 */
import { setMaxListeners } from 'node:events';
import { fstatSync } from 'node:fs';
import { realSleep, type Io } from './core/io.js';
import { ExitCode } from './core/errors.js';
import { removePartialFiles } from './http/partial-file.js';
import { descriptorWrites, wholeWritesStream } from './core/whole-writes.js';
import { run } from './main.js';

/** The usual 128 + signal number, which shells and supervisors read as "stopped by a signal". */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
export type StopSignal = keyof typeof SIGNAL_EXIT_CODES;
export const STOP_SIGNALS = Object.keys(SIGNAL_EXIT_CODES) as StopSignal[];

export interface Stopper {
  stop(signal: StopSignal): void;
  /** The exit code for a command that ended `code`: a clean stop's 130 says which signal asked. */
  exitCode(code: number): number;
}

/** Said when a second signal ends carectl at once: no clean stop, so nothing else says what happened. */
export const STOPPED_AT_ONCE =
  'carectl: stopped at once by a second signal, cutting the clean stop short: how to continue (a --resume token, a reports wait command) is not printed, and a change under way may have been applied';

/**
 * The first signal asks the command to stop cleanly (`abort`); a second ends at once, as users
 * expect when a clean stop hangs, after `cleanUp` (no download's temporary file left behind).
 */
export function createStopper(actions: { abort(): void; cleanUp(): void; say(line: string): void; exit(code: number): void }): Stopper {
  let stoppedBy: StopSignal | undefined;
  return {
    stop(signal) {
      if (stoppedBy !== undefined) {
        actions.cleanUp();
        actions.say(STOPPED_AT_ONCE);
        actions.exit(SIGNAL_EXIT_CODES[signal]);
        return;
      }
      stoppedBy = signal;
      actions.abort();
    },
    exitCode: (code) => (code === ExitCode.interrupted && stoppedBy !== undefined ? SIGNAL_EXIT_CODES[stoppedBy] : code),
  };
}

/** Whether the descriptor is a regular file (`> out.csv`), not a pipe or a terminal. */
function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

/** The handles a finished command may still hold open: its own standard streams. */
const STDIO_HANDLES = new Set(['PipeWrap', 'TTYWrap']);

/**
 * Runs carectl on this process. With `exitWhenDone` (bin/carectl.js), a command that is done with
 * nothing left to write or wait for ends the process at once: left to end by itself, node first
 * frees every page of the heap, ~1.3 ms of every command (npm run bench).
 */
export async function main({ exitWhenDone = false } = {}): Promise<number> {
  const controller = new AbortController();
  // Every request, wait and writer of a parallel run listens for the stop: not a leak.
  setMaxListeners(0, controller.signal);
  const stopper = createStopper({
    abort: () => controller.abort(),
    cleanUp: removePartialFiles,
    // Written at once to a terminal, a file or a pipe, before the exit below.
    say: (line) => process.stderr.write(`${line}\n`),
    exit: (code) => process.exit(code),
  });
  for (const signal of STOP_SIGNALS) process.on(signal, () => stopper.stop(signal));
  // Write errors reach the command through its writer (StreamSink), which ends output quietly for
  // a reader that went away (| head -1) and reports anything else (a full disk) as one line. This
  // listener only keeps a stream's 'error' event from crashing the process with a stack trace.
  const file = isRegularFile(1);
  // Into a regular file, a write the disk took only part of must fail, not pass for whole (see whole-writes).
  const stdout = file ? wholeWritesStream(descriptorWrites(1)) : process.stdout;
  for (const stream of [stdout, process.stderr]) stream.on('error', () => undefined);
  const io: Io = {
    stdout: { stream: stdout, isTTY: process.stdout.isTTY === true, columns: process.stdout.columns, file },
    stderr: { stream: process.stderr, isTTY: process.stderr.isTTY === true, columns: process.stderr.columns },
    // process.stdin sets up a stream on first use: only the commands that read it pay for that
    // (from /dev/null, as cron gives it, a file stream and node's stream modules: 2-4 ms).
    stdin: {
      get stream() {
        return process.stdin;
      },
      get isTTY() {
        return process.stdin.isTTY === true;
      },
    },
    env: process.env,
    cwd: process.cwd(),
    now: () => Date.now(),
    sleep: realSleep,
    signal: controller.signal,
    respawn,
  };
  const code = stopper.exitCode(await run(process.argv.slice(2), io));
  // A stopped command whose stdout reader is not reading would wait for it forever. What the
  // reader has not taken is dropped; the resume line already counts only what it did take.
  if (controller.signal.aborted && stdout.writableLength > 0) process.exit(code);
  const idle = stdout.writableLength === 0 && process.stderr.writableLength === 0;
  if (exitWhenDone && idle && process.getActiveResourcesInfo().every((handle) => STDIO_HANDLES.has(handle))) process.exit(code);
  return code;
}

/** The same command line in a detached process of its own (node's own flags kept), its output nowhere. */
async function respawn(env: Readonly<Record<string, string>>): Promise<void> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  child.on('error', () => undefined);
  child.unref();
}
