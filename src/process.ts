/**
 * The real process as carectl's Io: stdio with TTY flags, the environment, the clock, and an
 * abort signal raised by Ctrl-C (SIGINT), SIGTERM or SIGHUP.
 */
import { realSleep, type Io } from './io.js';
import { ExitCode, isBrokenPipe } from './errors.js';
import { removePartialFiles } from './http/download.js';
import { run } from './main.js';

/** The usual 128 + signal number, which shells and supervisors read as "stopped by a signal". */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

export async function main(): Promise<number> {
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const stop = (signal: StopSignal): void => {
    // A second signal ends at once, as users expect when a clean stop hangs; a download in
    // progress still leaves no temporary file behind.
    if (stoppedBy !== undefined) {
      removePartialFiles();
      process.exit(SIGNAL_EXIT_CODES[signal]);
    }
    stoppedBy = signal;
    controller.abort();
  };
  for (const signal of Object.keys(SIGNAL_EXIT_CODES) as StopSignal[]) process.on(signal, () => stop(signal));
  // A reader that goes away (| head -1) must not crash the process with an unhandled error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err) => {
      if (!isBrokenPipe(err)) throw err;
    });
  }
  const io: Io = {
    stdout: { stream: process.stdout, isTTY: process.stdout.isTTY === true, columns: process.stdout.columns },
    stderr: { stream: process.stderr, isTTY: process.stderr.isTTY === true, columns: process.stderr.columns },
    // process.stdin sets up a stream on first use: only the commands that read it pay for that.
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
  };
  const code = await run(process.argv.slice(2), io);
  // The command stopped cleanly (exit 130, "interrupted"); the code says which signal asked.
  return code === ExitCode.interrupted && stoppedBy !== undefined ? SIGNAL_EXIT_CODES[stoppedBy] : code;
}
