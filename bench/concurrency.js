/**
 * Concurrency that pays for itself (issues 34, 46): the default --parallel, which the limiter keeps
 * under 8 while requests queue at the service, side by side with --parallel 1 and
 * the sequential fetch loop on services where parallel requests buy nothing:
 * - saturated: a 20k export from a threaded Python server (bench/lib/threaded-server.py) in front
 *   of the sandbox, both sharing the machine's CPUs with carectl;
 * - bandwidth-limited: the sandbox's --bandwidth, one thin link all replies share;
 * - a service written from the spec, not the sandbox (bench/lib/scan-server.py, issue 46's server (a)): a threaded Python
 *   server filtering its own records, whose date-bounded last pages scan on past the bound, so every slice cut costs it
 *   one such page; its CPU time per run beside each client's.
 * The 50 ms rows (where it does pay) are bench/parallel.js's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort, startSandboxServer, startScanServer, timeNode } from './lib/processes.js';
import { median, ms, ratioRow } from './lib/table.js';

const LARGE = 20_000;
const THIN = { records: 2_000, bandwidth: '8mbit' };
const FIELDS = 'status,is_priority,contains_private,tags,author,channels,assigned_to,handling_times,close_reason';
const firstPages = () =>
  ['true', 'false'].map((priority) => `v1.3/conversations?${new URLSearchParams({ is_priority: priority, fields: FIELDS, page_size: '50' })}`);

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

/**
 * The scan server: default, --parallel 1 and the fetch loop in turn (after a round not counted), each run's wall time and the
 * server's CPU time during it.
 */
async function scanMeasures({ entry, env, scratch, runs }) {
  const scan = await startScanServer(LARGE);
  try {
    const exportArgs = [entry, 'conversations', 'list', '-o', 'ndjson', '--fields', FIELDS];
    const commands = { default: exportArgs, one: [...exportArgs, '--parallel', '1'], loop: ['bench/baselines/fetch-loop.js', ...firstPages()] };
    const r = Object.fromEntries(Object.keys(commands).map((name) => [name, { ms: [], serverMs: [] }]));
    for (let round = -1; round < runs; round++) {
      for (const [name, args] of Object.entries(commands)) {
        const before = await scan.cpuMs();
        const run = await timeNode(args, { env: { ...env, ...scan.env }, stdout: join(scratch, `scan-${name}.out`) });
        const serverMs = (await scan.cpuMs()) - before;
        if (readFileSync(join(scratch, `scan-${name}.out`), 'utf8').split('\n').length - 1 !== LARGE)
          throw new Error(`the scan server's ${name} export missed records`);
        if (round < 0) continue;
        r[name].ms.push(run.ms);
        r[name].serverMs.push(serverMs);
      }
    }
    const m = (name, key) => median(r[name][key]);
    return [
      ratioRow(`scan server: ${LARGE / 1000}k export, default vs --parallel 1`, m('default', 'ms'), m('one', 'ms'), 1.05, ms),
      ratioRow(`scan server: ${LARGE / 1000}k export, default vs fetch loop`, m('default', 'ms'), m('loop', 'ms'), 1.25, ms),
      ratioRow(`scan server: its CPU, default vs --parallel 1`, m('default', 'serverMs'), m('one', 'serverMs'), 1.1, ms),
    ];
  } finally {
    await scan.stop();
  }
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
  rows.push(...(await scanMeasures({ entry, env, scratch, runs })));
  return rows;
}
