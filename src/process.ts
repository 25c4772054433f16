/**
 * The real process as carectl's Io: stdio with TTY flags, the environment, the clock, and an
 * abort signal raised by Ctrl-C (SIGINT) or SIGTERM.
 */
import { realSleep, type Io } from './io.js';
import { isBrokenPipe } from './errors.js';
import { run } from './main.js';

export async function main(): Promise<number> {
  const controller = new AbortController();
  const interrupt = (): void => {
    // A second Ctrl-C ends at once, as users expect when a clean stop hangs.
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
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
  return run(process.argv.slice(2), io);
}
