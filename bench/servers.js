/**
 * The list engine on five servers written from the spec, not from the sandbox (issue 46, (a)–(e)): each is
 * bench/lib/scan-server.py (a threaded Python service that filters its own records on the machine's CPUs, and whose
 * date-bounded last pages scan on past the bound) with one thing changed:
 * (a) as it is; (b) 50 ms a request, against the sequential fetch loop; (c) nginx `limit_conn 2` (per client address)
 * in front, its 503s counted from its log; (d) 90 % of the records in the last 3 days of two years; (e) an 8 Mbit/s link
 * all replies share, 20 ms a request.
 *
 *   node bench/run.js --only servers [--servers a,c] [--servers-runs 5] [--vs-entry /other/bin/carectl.js] [--vs-env NAME=VALUE]
 *
 * --vs-env sets a variable for the other entry's runs only (a build whose behaviour an environment variable selects).
 *
 * Every command of a server runs in turn (A B A B), after a round not counted: the default and `--parallel 1` of each
 * entry, and the fetch loop on (b). On (b) `--parallel 1` runs in that first round only, for its output. A run's wall
 * time, its CPU (bench/peak-rss.cjs), the server's CPU (/proc), the requests the server served (and nginx refused), and
 * whether its output is byte for byte `--parallel 1`'s (sha-256); the rows give medians.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { freePort, startScanServer, timeNode } from './lib/processes.js';
import { FIELDS, firstPages } from './parallel.js';
import { median, ms, ratioRow, skippedRow, speedupRow } from './lib/table.js';

/** All of the scan server's records (dated in 2025 unless --until moves them), asked for as a range. */
const RANGE = { flag: '2024-12-01..2026-01-01', gte: '2024-12-01', lte: '2026-01-01' };
const DISTANT = ['50'];
const BUNCHED = ['--span-days', '730', '--bunched', '0.9:3', '--until', 'now'];
/** The contract's exit codes: a run that ends in an error is a row's finding, not the bench's failure. */
const EXIT_CODES = [0, 1, 2, 3, 4, 5, 6, 130, 143, 129];

/**
 * One row of measures a server: the scan server's options, and the goals (issue 46): `one`, default ≤ × `--parallel 1`
 * in time; `serverCpu`, its CPU ≤ × `--parallel 1`'s; `loop`, default ≥ × faster than the fetch loop (`loopAtMost`: ≤ ×
 * its time).
 */
const SERVERS = [
  { key: 'a', label: '(a) scan server, 20k', records: 20_000, args: [], one: 1.05, serverCpu: 1.1 },
  { key: 'b', label: '(b) 50 ms, 5k', records: 5_000, args: DISTANT, loop: 5 },
  { key: 'b', label: '(b) 50 ms, 20k', records: 20_000, args: DISTANT, loop: 6 },
  { key: 'b', label: `(b) 50 ms, 5k --oldest ${RANGE.flag}`, records: 5_000, args: DISTANT, range: RANGE, loopAtMost: 0.25 },
  { key: 'c', label: '(c) nginx limit_conn 2, 50 ms, 5k', records: 5_000, args: DISTANT, nginx: true, one: 1.0 },
  { key: 'c', label: '(c) nginx limit_conn 2, 20k', records: 20_000, args: [], nginx: true, one: 1.0 },
  { key: 'd', label: '(d) 90 % in the last 3 of 730 days, 20k', records: 20_000, args: BUNCHED, one: 1.0 },
  { key: 'd', label: '(d) 90 % in the last 3 of 730 days, 50 ms, 5k', records: 5_000, args: [...DISTANT, ...BUNCHED], one: 1.0 },
  { key: 'e', label: '(e) 8 Mbit/s, 20 ms, 5k', records: 5_000, args: ['20', '--bandwidth', String(8e6 / 8)], one: 1.0 },
];

/**
 * nginx in front of `upstream`, at most `limit` requests in flight per client address (`limit_conn`; past it nginx
 * answers 503 as it does), each answer's status in its log. Undefined when there is no nginx.
 */
async function startNginx(upstream, scratch, limit = 2) {
  const prefix = join(scratch, 'nginx');
  mkdirSync(prefix, { recursive: true });
  const port = await freePort();
  const log = join(prefix, 'access.log');
  writeFileSync(log, '');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${join(prefix, kind)};`).join(' ');
  writeFileSync(
    join(prefix, 'nginx.conf'),
    `daemon off; master_process off; worker_processes 1; pid ${join(prefix, 'nginx.pid')}; error_log ${join(prefix, 'error.log')} warn;
events { worker_connections 512; }
http {
  ${temp}
  log_format statuses '$status';
  access_log ${log} statuses;
  limit_conn_zone $binary_remote_addr zone=client:1m;
  upstream scan { server ${new URL(upstream).host}; keepalive 16; }
  server {
    listen 127.0.0.1:${port};
    limit_conn client ${limit};
    location / { proxy_pass http://scan; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const nginx = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log')], { stdio: 'ignore' });
  const failed = once(nginx, 'error').then(() => false);
  const url = `http://127.0.0.1:${port}`;
  // Up once it answers at all: the scan server behind it starts after it.
  const ready = (async () => {
    for (let tries = 0; tries < 100; tries++) {
      if (
        await fetch(url).then(
          () => true,
          () => false,
        )
      )
        return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  })();
  if (!(await Promise.race([ready, failed]))) {
    nginx.kill('SIGKILL');
    return undefined;
  }
  return {
    url,
    /** The statuses nginx logged so far: every answer, and its 503s. */
    answers() {
      const statuses = readFileSync(log, 'utf8').split('\n').filter(Boolean);
      return { all: statuses.length, refused: statuses.filter((status) => status === '503').length };
    },
    async stop() {
      nginx.kill('SIGQUIT');
      await once(nginx, 'close');
    },
  };
}

/** The server of `spec`, with nginx in front where it asks; undefined (and why) when it cannot run here. */
async function startService(spec, scratch) {
  if (!spec.nginx) {
    const scan = await startScanServer(spec.records, { args: spec.args });
    return { ...scan, refused: async () => 0 };
  }
  const port = await freePort();
  const front = await startNginx(`http://127.0.0.1:${port}`, scratch).catch(() => undefined);
  if (front === undefined) return { missing: 'no nginx here (apt-get install -y nginx)' };
  const scan = await startScanServer(spec.records, { args: [...spec.args, '--public-url', front.url], port });
  return {
    ...scan,
    env: { ...scan.env, CARECTL_BASE_URL: front.url },
    refused: async () => front.answers().refused,
    async stop() {
      await front.stop();
      await scan.stop();
    },
  };
}

const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const lineCount = (file) => readFileSync(file, 'utf8').split('\n').length - 1;

/** The commands run on `spec`'s server: each entry's default and `--parallel 1` (timed or only for its output), the fetch loop. */
function commandsFor(spec, entries) {
  const exportArgs = ['conversations', 'list', '-o', 'ndjson', '--fields', FIELDS, ...(spec.range ? ['--oldest', spec.range.flag] : [])];
  const distant = spec.loop !== undefined || spec.loopAtMost !== undefined;
  return [
    ...entries.flatMap(({ name, entry, env }) => [
      { name: `${name} default`, args: [entry, ...exportArgs], env, timed: true },
      { name: `${name} --parallel 1`, args: [entry, ...exportArgs, '--parallel', '1'], env, timed: !distant },
    ]),
    ...(distant ? [{ name: 'fetch loop', args: ['bench/baselines/fetch-loop.js', ...firstPages(spec.range)], timed: true }] : []),
  ];
}

/** Each command's runs on `spec`'s server, in turn, the first round not counted except for a command run only then. */
async function measure(spec, service, { entries, env, scratch, runs }) {
  const commands = commandsFor(spec, entries);
  const results = Object.fromEntries(commands.map(({ name }) => [name, []]));
  for (let round = -1; round < runs; round++) {
    for (const { name, args, env: own = {}, timed } of commands) {
      if (round >= 0 && !timed) continue;
      const out = join(scratch, 'servers.out');
      const [cpuMs, requests, refused] = [await service.cpuMs(), await service.requests(), await service.refused()];
      const run = await timeNode(args, {
        env: { ...env, ...service.env, ...own },
        stdout: out,
        peakRssFile: join(scratch, 'servers.rss'),
        okCodes: EXIT_CODES,
      });
      if (round >= 0 || !timed)
        results[name].push({
          ms: run.ms,
          clientMs: run.cpuMs,
          serverMs: (await service.cpuMs()) - cpuMs,
          requests: (await service.requests()) - requests,
          refused: (await service.refused()) - refused,
          code: run.code,
          stderr: run.stderr,
          sha: sha(out),
          lines: lineCount(out),
        });
    }
  }
  for (const { name } of entries) {
    const [one] = results[`${name} --parallel 1`];
    if (one.code !== 0 || one.lines !== spec.records)
      throw new Error(`${spec.label}: ${name} --parallel 1 wrote ${one.lines} of ${spec.records} records, exit ${one.code}:\n${one.stderr}`);
  }
  return results;
}

const m = (runs, key) => median(runs.map((run) => run[key]));
const times = (a, b, key) => `${ms(m(a, key))} / ${ms(m(b, key))} (${(m(a, key) / m(b, key)).toFixed(2)}×)`;

/** What a row's two sides cost beside their wall time, and how the first side's runs ended. */
function detail(a, b, reference) {
  const same = a.filter((run) => run.sha === reference.sha).length;
  const failed = a.filter((run) => run.code !== 0).map((run) => run.code);
  const refused = m(a, 'refused') > 0 || m(b, 'refused') > 0 ? `, nginx 503s ${m(a, 'refused')} / ${m(b, 'refused')}` : '';
  return (
    `client CPU ${times(a, b, 'clientMs')}, server CPU ${times(a, b, 'serverMs')}, requests served ${m(a, 'requests')} / ${m(b, 'requests')}${refused}; ` +
    `output = --parallel 1's in ${same} of ${a.length} runs${failed.length ? `; exits ${failed.join(',')}` : ''}`
  );
}

/** The rows of one server: each entry against its goals, then each other entry's default against the first's. */
function rowsFor(spec, results, entries, load) {
  const rows = [];
  const row = (built, a, b, reference) => ({ ...built, note: detail(a, b, reference) });
  for (const { name } of entries) {
    const [mine, one] = [results[`${name} default`], results[`${name} --parallel 1`]];
    const reference = one[0];
    if (spec.one !== undefined)
      rows.push(row(ratioRow(`${spec.label}: ${name} default vs --parallel 1`, m(mine, 'ms'), m(one, 'ms'), spec.one, ms), mine, one, reference));
    if (spec.serverCpu !== undefined)
      rows.push(ratioRow(`${spec.label}: ${name} server CPU, default vs --parallel 1`, m(mine, 'serverMs'), m(one, 'serverMs'), spec.serverCpu, ms));
    const loop = results['fetch loop'];
    if (spec.loop !== undefined)
      rows.push(row(speedupRow(`${spec.label}: ${name} default vs fetch loop`, m(mine, 'ms'), m(loop, 'ms'), spec.loop, ms), mine, loop, reference));
    if (spec.loopAtMost !== undefined)
      rows.push(row(ratioRow(`${spec.label}: ${name} default vs fetch loop`, m(mine, 'ms'), m(loop, 'ms'), spec.loopAtMost, ms), mine, loop, reference));
  }
  const [first, ...others] = entries;
  for (const { name } of others) {
    const [mine, theirs] = [results[`${name} default`], results[`${first.name} default`]];
    rows.push(
      row(
        ratioRow(`${spec.label}: default, ${name} vs ${first.name}`, m(mine, 'ms'), m(theirs, 'ms'), undefined, ms),
        mine,
        theirs,
        results[`${name} --parallel 1`][0],
      ),
    );
  }
  rows[0].note = `${rows[0].note ?? ''} [load ${load.map((x) => x.toFixed(2)).join(' → ')}]`;
  return rows;
}

/** An entry's name in the rows: the folder of its checkout (main, plain46, …). */
const entryName = (entry) => basename(dirname(dirname(entry)));

export async function serverMeasures({ entry, vsEntry, vsEnv = {}, only = 'a,b,c,d,e', env, scratch, runs }) {
  const entries = [entry, ...(vsEntry ? [vsEntry] : [])].map((path, i) => ({
    env: i > 0 ? vsEnv : {},
    name: `${entryName(path)}${i > 0 && entryName(path) === entryName(entry) ? ' B' : ''}`,
    entry: path,
  }));
  const keys = new Set(only.split(','));
  const rows = [];
  for (const spec of SERVERS.filter(({ key }) => keys.has(key))) {
    const service = await startService(spec, scratch);
    if (service.missing) {
      rows.push(skippedRow(spec.label, '≤ 1×', service.missing));
      continue;
    }
    try {
      const loadBefore = loadavg()[0];
      const results = await measure(spec, service, { entries, env, scratch, runs });
      rows.push(...rowsFor(spec, results, entries, [loadBefore, loadavg()[0]]));
    } finally {
      await service.stop();
    }
  }
  return rows;
}
