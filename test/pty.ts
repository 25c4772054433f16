/**
 * Runs `node bin/carectl.js …` under a pseudo-terminal of a given size, and gives back what a
 * person would see there: stdout and stderr as the terminal received them (CR LF line ends turned
 * back into LF). Uses `script` from util-linux, else python3's pty module; `ptyRunner()` says why
 * neither can be used, for t.skip. Everything is asynchronous: the test's in-process sandbox must
 * keep answering the child.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** bin/carectl.js, from dist/test/ */
const CARECTL_JS = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

export interface PtyOptions {
  columns: number;
  rows?: number;
  /** Added to the child's environment (CARECTL_BASE_URL and the like). */
  env?: Record<string, string>;
  /** Shell redirections after the command (`> /dev/null` to watch stderr alone). */
  redirect?: string;
  timeoutMs?: number;
}

export interface PtyResult {
  code: number;
  /** What the terminal showed, with \r\n as \n (a bare \r, as a live line redraws, stays). */
  screen: string;
}

type Runner = { kind: 'script' | 'python3'; program: string };

function onPath(program: string): string | undefined {
  return (process.env.PATH ?? '')
    .split(':')
    .map((folder) => join(folder, program))
    .find((path) => existsSync(path));
}

/** How this machine makes a pseudo-terminal, or why it cannot. */
export function ptyRunner(): Runner | string {
  const script = onPath('script');
  if (script) return { kind: 'script', program: script };
  const python = onPath('python3');
  if (python) return { kind: 'python3', program: python };
  return 'neither script (util-linux) nor python3 is installed to make a pseudo-terminal';
}

/** A word the shell reads back unchanged. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** python3: fork on a pty of the given size, run the command, copy what it shows to stdout. */
const PYTHON_PTY = `
import os, pty, struct, fcntl, termios, sys
rows, cols, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    # the size is set on the child's own terminal before carectl starts and reads it
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    os.execvp('sh', ['sh', '-c', command])
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    os.write(1, data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

export function runInPty(args: readonly string[], options: PtyOptions): Promise<PtyResult> {
  const runner = ptyRunner();
  if (typeof runner === 'string') return Promise.reject(new Error(runner));
  const rows = options.rows ?? 40;
  const carectl = [process.execPath, CARECTL_JS, ...args].map(shellWord).join(' ') + (options.redirect ? ` ${options.redirect}` : '');
  // script starts the command on a terminal of its own size: stty sets the size asked for first
  const command = runner.kind === 'script' ? `stty cols ${options.columns} rows ${rows}; exec ${carectl}` : `exec ${carectl}`;
  const argv = runner.kind === 'script' ? ['-q', '-e', '-c', command, '/dev/null'] : ['-c', PYTHON_PTY, String(rows), String(options.columns), command];
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    COLUMNS: String(options.columns),
    LINES: String(rows),
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(runner.program, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let screen = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    // A hung child fails its test: a guard far above any run on a loaded machine, not a measure of speed.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === null) return reject(new Error(`${runner.kind} ended by ${signal}: ${errors}`));
      resolve({ code, screen: screen.replace(/\r\n/g, '\n') });
    });
  });
}
