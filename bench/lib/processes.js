/** Spawning and timing the processes under test, and the sandbox server they talk to. */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SANDBOX_SERVER = fileURLToPath(new URL('../sandbox-server.js', import.meta.url));
const PEAK_RSS_PRELOAD = fileURLToPath(new URL('../peak-rss.cjs', import.meta.url));

/**
 * Runs `node ...args` to completion. The time runs from spawn() to the child's exit, so it
 * includes node's own start-up: what a shell loop pays per call.
 *
 * stdout: 'ignore' (discarded), 'capture' (returned as text) or a file path (written there).
 * peakRssFile: when given, the child is preloaded with bench/peak-rss.cjs writing its peak RSS there.
 */
export async function timeNode(args, { env = process.env, stdout = 'ignore', peakRssFile } = {}) {
  const fd = stdout !== 'ignore' && stdout !== 'capture' ? openSync(stdout, 'w') : undefined;
  const nodeArgs = peakRssFile ? ['--require', PEAK_RSS_PRELOAD, ...args] : args;
  const childEnv = peakRssFile ? { ...env, BENCH_PEAK_RSS_FILE: peakRssFile } : env;
  const started = performance.now();
  const child = spawn(process.execPath, nodeArgs, {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', fd ?? (stdout === 'capture' ? 'pipe' : 'ignore'), 'pipe'],
  });
  if (fd !== undefined) closeSync(fd);
  const out = [];
  const err = [];
  child.stdout?.on('data', (chunk) => out.push(chunk));
  child.stderr.on('data', (chunk) => err.push(chunk));
  let ms = 0;
  let endedAt = 0;
  child.once('exit', () => {
    endedAt = Date.now();
    ms = performance.now() - started;
  });
  const [code] = await once(child, 'close');
  const result = { ms, endedAt, code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}:\n${result.stderr}`);
  if (peakRssFile) {
    result.peakRssKb = Number(readFileSync(peakRssFile, 'utf8'));
    rmSync(peakRssFile);
  }
  return result;
}

const servers = new Set();
process.on('exit', () => {
  for (const child of servers) child.kill('SIGTERM');
});

/**
 * Starts bench/sandbox-server.js in its own process. Returns the connection as CARECTL_*
 * variables, stats() (requests received, when the newest created report is ready) and stop().
 */
export async function startSandboxServer({ conversations, reportDelayMs = 3000 }) {
  const child = spawn(process.execPath, [SANDBOX_SERVER, '--conversations', String(conversations), '--report-delay-ms', String(reportDelayMs)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  servers.add(child);
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const { baseUrl, user, password } = JSON.parse(line);
  return {
    env: { CARECTL_BASE_URL: baseUrl, CARECTL_USER: user, CARECTL_PASSWORD: password },
    stats() {
      const reply = once(child, 'message').then(([message]) => message);
      child.send('stats');
      return reply;
    },
    async stop() {
      servers.delete(child);
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
