/** Runs carectl in-process against a sandbox on loopback, capturing what a user would see. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, beforeEach } from 'node:test';
import { realSleep, type Io } from '../src/core/io.js';
import type { DownloadOptions, DownloadTarget } from '../src/http/download.js';
import { run } from '../src/main.js';
import type { WriterOptions } from '../src/output/index.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  sandbox?: Sandbox;
  /** Extra or overriding environment variables (undefined removes one). */
  env?: Record<string, string | undefined>;
  /** What stdin holds, or a stream of its own (a fake terminal, see stdinTTY). */
  stdin?: string | Readable;
  /** Whether stdin is a terminal (default: when no stdin is given). */
  stdinTTY?: boolean;
  stdoutTTY?: boolean;
  /** Whether stdout is a regular file (`> out.ndjson`): writers gather lines per page. */
  stdoutFile?: boolean;
  stderrTTY?: boolean;
  /** stdout's width as a terminal. */
  columns?: number;
  /** stderr's, when it is a terminal. */
  stderrColumns?: number;
  now?: () => number;
  sleep?: Io['sleep'];
  signal?: AbortSignal;
  cwd?: string;
  /** Called with each chunk written to stdout, as it is written (to act part-way through output). */
  onStdout?: (chunk: string) => void;
  /** The same for stderr (to answer a question when it is asked). */
  onStderr?: (chunk: string) => void;
  /** A stdout of its own (a reader that stops reading); the result's stdout is then ''. */
  stdout?: Writable;
  /** Where requests go instead of the network (a MockAgent): see test/request-mapping.test.ts. */
  dispatcher?: Io['dispatcher'];
  respawn?: Io['respawn'];
}

export class Collector extends Writable {
  chunks: string[] = [];
  constructor(private readonly onChunk?: (chunk: string) => void) {
    super();
  }
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    this.onChunk?.(chunk.toString());
    callback();
  }
  get text(): string {
    return this.chunks.join('');
  }
}

/** The environment a cron job would have: everything from CARECTL_* variables, no config file. */
export function sandboxEnv(sandbox: Sandbox): Record<string, string> {
  return {
    CARECTL_BASE_URL: sandbox.baseUrl,
    CARECTL_USER: sandbox.user,
    CARECTL_PASSWORD: sandbox.password,
    XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
  };
}

export async function runCli(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const stdout = options.stdout ?? new Collector(options.onStdout);
  const stderr = new Collector(options.onStderr);
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    ...(options.sandbox ? sandboxEnv(options.sandbox) : { XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' }),
    ...options.env,
  };
  const io: Io = {
    stdout: {
      stream: stdout,
      isTTY: options.stdoutTTY ?? false,
      ...(options.columns !== undefined && { columns: options.columns }),
      ...(options.stdoutFile && { file: true }),
    },
    stderr: { stream: stderr, isTTY: options.stderrTTY ?? false, ...(options.stderrColumns !== undefined && { columns: options.stderrColumns }) },
    stdin: {
      stream: options.stdin instanceof Readable ? options.stdin : Readable.from(options.stdin === undefined ? [] : [options.stdin]),
      isTTY: options.stdinTTY ?? options.stdin === undefined,
    },
    env,
    cwd: options.cwd ?? process.cwd(),
    now: options.now ?? (() => Date.now()),
    sleep: options.sleep ?? realSleep,
    signal: options.signal ?? new AbortController().signal,
    ...(options.dispatcher && { dispatcher: options.dispatcher }),
    ...(options.respawn && { respawn: options.respawn }),
  };
  const code = await run(argv, io);
  return { code, stdout: stdout instanceof Collector ? stdout.text : '', stderr: stderr.text };
}

/** The conversation ids that PATCH requests among `requests` went to, in order. */
export function patchedIds(requests: ReadonlyArray<{ method: string; url: string }>): string[] {
  return requests.filter((r) => r.method === 'PATCH').map((r) => /conversations\/([^/?]+)/.exec(r.url)?.[1] ?? '');
}

/** One sandbox per test file: `const box = useSandbox(); … box().baseUrl`. */
export async function openSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ anchor: '2026-06-30', ...options });
}

/** A sandbox and a scratch folder for a whole test file, removed after it; `opened` hands them to the file. */
export function sandboxAndScratch(opened: (sandbox: Sandbox, scratch: string) => void): void {
  let sandbox: Sandbox | undefined;
  let scratch: string | undefined;
  before(async () => {
    sandbox = await openSandbox();
    scratch = mkdtempSync(join(tmpdir(), 'carectl-scratch-'));
    opened(sandbox, scratch);
  });
  after(async () => {
    await sandbox?.close();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });
}

/**
 * A sandbox for a whole test file on one fake clock with the CLI (so HTTP-date Retry-After values
 * agree with the client), its faults and the sleeps recorded reset before each test; `opened`
 * hands the file its sandbox.
 */
export function sandboxOnClock(
  options: SandboxOptions,
  opened: (sandbox: Sandbox) => void,
): { clock: ReturnType<typeof fakeClock>; cli: (argv: string[]) => Promise<RunResult> } {
  const clock = fakeClock();
  let sandbox: Sandbox | undefined;
  before(async () => {
    sandbox = await openSandbox({ ...options, now: clock.now });
    opened(sandbox);
  });
  after(() => sandbox?.close());
  beforeEach(() => {
    sandbox?.setFaults(undefined);
    clock.slept.length = 0;
  });
  return { clock, cli: (argv) => runCli(argv, { ...(sandbox && { sandbox }), now: clock.now, sleep: clock.sleep }) };
}

/** API requests the sandbox received since `from` (index into sandbox.requests). */
export function apiRequests(sandbox: Sandbox, from = 0): Sandbox['requests'] {
  return sandbox.requests.slice(from).filter((r) => r.listener === 'api');
}

/** A fake clock whose sleep advances time instantly: tests never wait for real. */
export function fakeClock(start = Date.UTC(2026, 5, 30, 12, 0, 0)): { now: () => number; sleep: Io['sleep']; advance(ms: number): void; slept: number[] } {
  let time = start;
  const slept: number[] = [];
  return {
    now: () => time,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      slept.push(ms);
      time += ms;
      await new Promise((resolve) => setImmediate(resolve));
    },
    advance: (ms) => {
      time += ms;
    },
    slept,
  };
}

/** Where a test's own config file lives: a fresh XDG_CONFIG_HOME for each test. */
export interface ConfigHome {
  sandbox: Sandbox;
  home: string;
  folder: string;
  configFile: string;
}

/**
 * One sandbox for the test file and a fresh, empty XDG_CONFIG_HOME for each test, all removed
 * afterwards; `use` receives them before each test.
 */
export function useConfigHome(prefix: string, use: (fixture: ConfigHome) => void): void {
  let sandbox: Sandbox;
  const homes: string[] = [];
  before(async () => {
    sandbox = await openSandbox();
  });
  after(async () => {
    await sandbox.close();
    for (const dir of homes) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    const home = mkdtempSync(join(tmpdir(), prefix));
    homes.push(home);
    use({ sandbox, home, folder: join(home, 'carectl'), configFile: join(home, 'carectl', 'config.json') });
  });
}

/** Options of a list writer to `stream` (id and name, a header, no colour); a terminal of that many columns when given. */
export function writerOptions(stream: Writable, overrides: Partial<WriterOptions> = {}, terminalColumns?: number): WriterOptions {
  return {
    out: { stream, isTTY: terminalColumns !== undefined, columns: terminalColumns },
    shape: 'list',
    columns: ['id', 'name'],
    header: true,
    escapeFormulas: true,
    color: false,
    ...overrides,
  };
}

/** download() options for tests: the fake clock's time, retry waits of at most a second; `overrides` set the rest. */
export function downloadOptions(
  url: string,
  target: DownloadTarget,
  clock: ReturnType<typeof fakeClock>,
  overrides: Partial<DownloadOptions> = {},
): DownloadOptions {
  return {
    url,
    target,
    userAgent: 'carectl-test',
    idleTimeoutMs: 5000,
    retries: 3,
    maxRetryWaitMs: 1000,
    now: clock.now,
    sleep: clock.sleep,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** A port nothing listens on just now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const scratchFolders: string[] = [];
/** A new empty folder under the system's temporary one, removed when the test file's process exits. */
export function scratchFolder(prefix: string): string {
  if (scratchFolders.length === 0) process.once('exit', () => scratchFolders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratchFolders.push(dir);
  return dir;
}

/** The user `nobody`, for what root is never refused: spawn options, or why it cannot be (not root; this node out of nobody's reach). */
export function asNobody(): { uid: number; gid: number } | string {
  if (process.getuid?.() !== 0) return 'needs root to run as nobody';
  const nobody = { uid: 65534, gid: 65534 };
  // A node installed under root's home (.ci/run's 22 and 24 in ~/.cache) is not nobody's to run.
  const probe = spawnSync(process.execPath, ['-e', '0'], { ...nobody, stdio: 'ignore' });
  return probe.status === 0 ? nobody : `nobody cannot run ${process.execPath}`;
}
