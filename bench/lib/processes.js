/** Spawning and timing the processes under test, and the sandbox server they talk to. */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PEAK_RSS_PRELOAD = fileURLToPath(new URL('../peak-rss.cjs', import.meta.url));

/**
 * Runs `node ...args` to completion. The time runs from spawn() to the child's exit, so it
 * includes node's own start-up: what a shell loop pays per call.
 *
 * stdout: 'ignore' (discarded), 'capture' (returned as text) or a file path (written there).
 * peakRssFile: when given, the child is preloaded with bench/peak-rss.cjs writing its peak RSS
 * and CPU time there (result.peakRssKb, result.cpuMs).
 * node: the node binary to run (default: the one running the bench).
 * The result has the exit time (endedAt, Date.now()) and stderr line by line with arrival times.
 */
export async function timeNode(args, { env = process.env, stdout = 'ignore', peakRssFile, okCodes = [0], node = process.execPath } = {}) {
  const fd = stdout !== 'ignore' && stdout !== 'capture' ? openSync(stdout, 'w') : undefined;
  const nodeArgs = peakRssFile ? ['--require', PEAK_RSS_PRELOAD, ...args] : args;
  const childEnv = peakRssFile ? { ...env, BENCH_PEAK_RSS_FILE: peakRssFile } : env;
  const started = performance.now();
  const child = spawn(node, nodeArgs, {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', fd ?? (stdout === 'capture' ? 'pipe' : 'ignore'), 'pipe'],
  });
  if (fd !== undefined) closeSync(fd);
  const out = [];
  /** Each stderr line with the moment it arrived (Date.now()), for carectl's --verbose trace. */
  const stderrLines = [];
  child.stdout?.on('data', (chunk) => out.push(chunk));
  createInterface({ input: child.stderr }).on('line', (line) => stderrLines.push({ at: Date.now(), line }));
  let ms = 0;
  let endedAt = 0;
  child.once('exit', () => {
    endedAt = Date.now();
    ms = performance.now() - started;
  });
  const [code] = await once(child, 'close');
  const stderr = stderrLines.map(({ line }) => `${line}\n`).join('');
  const result = { ms, endedAt, code, stdout: Buffer.concat(out).toString('utf8'), stderr, stderrLines };
  if (!okCodes.includes(code)) throw new Error(`${node} ${args.join(' ')} exited with ${code}:\n${result.stderr}`);
  if (peakRssFile) {
    const [peakRssKb, cpuUs] = readFileSync(peakRssFile, 'utf8').split(' ').map(Number);
    Object.assign(result, { peakRssKb, cpuMs: cpuUs / 1000 });
    rmSync(peakRssFile);
  }
  return result;
}

const servers = new Set();
process.on('exit', () => {
  for (const child of servers) child.kill('SIGTERM');
});

/** The options `carectl sandbox` of the entry under test takes (`--latency`, `--rate-limit`, …). */
export async function sandboxOptions(entry) {
  const help = await timeNode([entry, 'sandbox', '--help'], { stdout: 'capture' });
  return new Set(help.stdout.match(/--[a-z-]+/g));
}

/**
 * Starts `carectl sandbox` (the entry under test) in its own process, so its CPU time is not
 * charged to the client measured. Returns the connection as the CARECTL_* variables its banner
 * exports, and stop().
 */
export async function startSandboxServer(entry, { conversations, reportDelayMs = 3000, latencyMs, rateLimit, args = [] }) {
  const extra = [
    ...(latencyMs === undefined ? [] : ['--latency', `${latencyMs}ms`]),
    ...(rateLimit === undefined ? [] : ['--rate-limit', String(rateLimit)]),
    ...args,
  ];
  const child = spawn(
    process.execPath,
    [entry, 'sandbox', '--port', '0', '--conversations', String(conversations), '--report-delay', `${reportDelayMs}ms`, ...extra],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  servers.add(child);
  // Kept for a failure to start; stopping it prints "carectl: sandbox stopped", which is no news.
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const closed = once(child, 'close');
  let env;
  let listening;
  for await (const line of createInterface({ input: child.stdout })) {
    listening ??= /listening on (\S+)/.exec(line)?.[1];
    const exported = /export (CARECTL_BASE_URL=\S+) (CARECTL_USER=\S+) (CARECTL_PASSWORD=\S+)/.exec(line);
    if (exported) {
      env = Object.fromEntries(exported.slice(1).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
      break;
    }
  }
  if (env === undefined) {
    const [code] = await closed;
    throw new Error(`carectl sandbox exited with ${code} before it was ready:\n${stderr}`);
  }
  return {
    env,
    /** Its own address (CARECTL_BASE_URL is the front's with --public-url). */
    listening,
    async stop() {
      servers.delete(child);
      child.kill('SIGINT');
      await once(child, 'close');
    },
  };
}

/** A port free on loopback now. */
export async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** A process's CPU time so far (user and system, ms) from /proc. */
export async function cpuMsOf(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  // utime and stime, in clock ticks of 1/100 s (Linux's USER_HZ).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Starts bench/lib/scan-server.py with `records` conversations and its options (`args`: DELAY_MS, --bunched, …),
 * on `port` or a free one. Returns its address, the connection as CARECTL_* variables, its CPU time so far
 * and the conversation lists it served so far.
 */
export async function startScanServer(records, { args = [], port } = {}) {
  port ??= await freePort();
  const python = spawn('python3', [fileURLToPath(new URL('scan-server.py', import.meta.url)), String(port), String(records), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  servers.add(python);
  for await (const line of createInterface({ input: python.stdout })) if (line === 'listening') break;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    env: { CARECTL_BASE_URL: url, CARECTL_USER: 'bench', CARECTL_PASSWORD: 'bench' },
    cpuMs: () => cpuMsOf(python.pid),
    requests: async () => (await (await fetch(`${url}/bench/requests`)).json()).requests,
    async stop() {
      servers.delete(python);
      python.kill('SIGTERM');
      await once(python, 'close');
    },
  };
}
