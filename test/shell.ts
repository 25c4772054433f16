/**
 * Runs documented shell lines as a user would type them: in bash, with `carectl` on the PATH
 * (bin/carectl.js of this checkout), the CARECTL_* variables of a sandbox, a scratch folder as
 * the current folder and a scratch config folder. Pipes, redirects and `-` for stdin all work.
 * The child process talks to the test's in-process sandbox over loopback, so the test's event
 * loop must stay free: everything here is asynchronous.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { openSandbox, sandboxEnv } from './helpers.js';

/** bin/carectl.js, from dist/test/ */
const CARECTL_JS = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

export interface ShellResult {
  /** The exit code, or 128 + signal number when a signal ended bash. */
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ShellRunOptions {
  timeoutMs?: number;
  /** Send Ctrl-C (SIGINT to the process group) once the command has written its first output. */
  interruptAfterOutput?: boolean;
}

export interface ShellSession {
  run(script: string, options?: ShellRunOptions): Promise<ShellResult>;
  close(): Promise<void>;
}

export async function openShellSession(sandbox: Sandbox): Promise<ShellSession> {
  const root = await mkdtemp(join(tmpdir(), 'carectl-shell-'));
  const bin = join(root, 'bin');
  const cwd = join(root, 'work');
  const home = join(root, 'home');
  await Promise.all([mkdir(bin), mkdir(cwd), mkdir(home)]);
  const wrapper = join(bin, 'carectl');
  await writeFile(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${CARECTL_JS}" "$@"\n`);
  await chmod(wrapper, 0o755);
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    LANG: 'C.UTF-8',
    ...sandboxEnv(sandbox),
    XDG_CONFIG_HOME: join(home, '.config'),
  };
  return {
    run: (script, options = {}) => runBash(script, { cwd, env, ...options }),
    close: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * A sandbox (reports ready in 0.3 s) and a shell session on it for the tests of the enclosing
 * suite: `const shell = useSandboxShell(); … shell().run(line)`.
 */
export function useSandboxShell(): () => ShellSession {
  let sandbox: Sandbox;
  let session: ShellSession;
  before(async () => {
    sandbox = await openSandbox({ reportDelayMs: 300 });
    session = await openShellSession(sandbox);
  });
  after(async () => {
    await session.close();
    await sandbox.close();
  });
  return () => session;
}

function runBash(script: string, options: ShellRunOptions & { cwd: string; env: NodeJS.ProcessEnv }): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    // its own process group, so that Ctrl-C and the timeout reach every process of a pipeline
    const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        // already gone
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      const first = stdout === '';
      stdout += chunk.toString();
      if (first && options.interruptAfterOutput) signalGroup('SIGINT');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup('SIGKILL');
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? 128 + (signal ? constants.signals[signal] : 0), stdout, stderr, timedOut });
    });
  });
}

/** What a failed line printed, for assertion messages. */
export function describeRun(line: string, result: ShellResult): string {
  const tail = (text: string): string => text.trim().split('\n').slice(-8).join('\n');
  return [
    `$ ${line}`,
    result.timedOut ? '(did not finish in time)' : `exit ${result.code}`,
    result.stdout.trim() && `stdout:\n${tail(result.stdout)}`,
    result.stderr.trim() && `stderr:\n${tail(result.stderr)}`,
  ]
    .filter(Boolean)
    .join('\n');
}
