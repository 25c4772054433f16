/**
 * Concurrency that pays for itself (issue 34): the default --parallel, which the limiter keeps
 * under 8 while more in flight would not raise the throughput, side by side with --parallel 1 and
 * the sequential fetch loop on services where parallel requests buy nothing:
 * - saturated: a 20k export from a threaded Python server (bench/lib/threaded-server.py) in front
 *   of the sandbox, both sharing the machine's CPUs with carectl;
 * - bandwidth-limited: the sandbox's --bandwidth, one thin link all replies share.
 * The 50 ms rows (where it does pay) are bench/parallel.js's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startSandboxServer } from './lib/processes.js';
import { median, ms, ratioRow } from './lib/table.js';

const LARGE = 20_000;
const THIN = { records: 2_000, bandwidth: '8mbit' };
const FIELDS = 'status,is_priority,contains_private,tags,author,channels,assigned_to,handling_times,close_reason';
const firstPages = () =>
  ['true', 'false'].map((priority) => `v1.3/conversations?${new URLSearchParams({ is_priority: priority, fields: FIELDS, page_size: '50' })}`);

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** The sandbox behind the threaded Python server, its links naming the Python server. */
async function saturatedService(entry, records) {
  const port = await freePort();
  const sandbox = await startSandboxServer(entry, { conversations: records, args: ['--public-url', `http://127.0.0.1:${port}`] });
  const python = spawn('python3', [join('bench', 'lib', 'threaded-server.py'), String(port), sandbox.listening], { stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: python.stdout })) if (line === 'listening') break;
  return {
    env: sandbox.env,
    async stop() {
      python.kill('SIGTERM');
      await once(python, 'close');
      await sandbox.stop();
    },
  };
}

export async function concurrencyMeasures({ entry, env, scratch, runs, interleaved }) {
  const rows = [];
  const exportArgs = [entry, 'conversations', 'list', '-o', 'ndjson', '--fields', FIELDS];
  const toFile = (name, service) => ({ env: { ...env, ...service.env }, stdout: join(scratch, `${name}.out`) });
  const lines = (name) => readFileSync(join(scratch, `${name}.out`), 'utf8').split('\n').length - 1;
  const t = (results, name) => median(results[name].map((x) => x.ms));

  const saturated = await saturatedService(entry, LARGE);
  try {
    const names = ['default', 'one', 'loop'];
    const r = await interleaved(
      runs,
      { default: exportArgs, one: [...exportArgs, '--parallel', '1'], loop: ['bench/baselines/fetch-loop.js', ...firstPages()] },
      Object.fromEntries(names.map((name) => [name, toFile(`saturated-${name}`, saturated)])),
    );
    for (const name of names) if (lines(`saturated-${name}`) !== LARGE) throw new Error(`the saturated ${name} export missed records`);
    rows.push(ratioRow(`saturated service: ${LARGE / 1000}k export, default vs --parallel 1`, t(r, 'default'), t(r, 'one'), 1.1, ms));
    rows.push(ratioRow(`saturated service: ${LARGE / 1000}k export, default vs fetch loop`, t(r, 'default'), t(r, 'loop'), 1.25, ms));
  } finally {
    await saturated.stop();
  }

  const thin = await startSandboxServer(entry, { conversations: THIN.records, args: ['--bandwidth', THIN.bandwidth] });
  try {
    const r = await interleaved(
      runs,
      { default: exportArgs, one: [...exportArgs, '--parallel', '1'] },
      { default: toFile('thin-default', thin), one: toFile('thin-one', thin) },
    );
    if (lines('thin-default') !== THIN.records || lines('thin-one') !== THIN.records) throw new Error('the bandwidth-limited export missed records');
    rows.push(ratioRow(`bandwidth ${THIN.bandwidth}: ${THIN.records / 1000}k export, default vs --parallel 1`, t(r, 'default'), t(r, 'one'), 1.0, ms));
  } finally {
    await thin.stop();
  }
  return rows;
}
