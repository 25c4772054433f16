/**
 * Everything a command touches outside the process: streams with their TTY flags, the
 * environment, and time. Tests pass their own; bin/carectl.js passes the real ones.
 */
import type { Readable, Writable } from 'node:stream';
import type { Dispatcher } from 'undici';

export interface OutStream {
  readonly stream: Writable;
  readonly isTTY: boolean;
  /** Terminal width in columns, when known. */
  readonly columns?: number;
  /** A regular file (`> out.ndjson`): nobody reads it while it is written. */
  readonly file?: boolean;
  /** The file (-O, as named) that gets what is written only if the command succeeds: after a failure it holds none of it. */
  readonly onlyIfWhole?: string;
}

export interface Io {
  stdout: OutStream;
  stderr: OutStream;
  stdin: { stream: Readable; isTTY: boolean };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after ms, or rejects early when signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM. */
  signal: AbortSignal;
  /**
   * Where HTTP requests go instead of the network (a test's undici MockAgent), so a command's
   * request and reply mapping is tested without a server. Unset, each transport opens its own.
   */
  dispatcher?: Dispatcher;
  /**
   * Runs this command line again in a process of its own that outlives this one, with `env`
   * added (a TAB's read of the service goes on after the shell has had its answer). Unset, nothing runs.
   */
  respawn?(env: Readonly<Record<string, string>>): Promise<void>;
}

export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
