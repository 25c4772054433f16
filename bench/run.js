/**
 * carectl's performance against the least a plain Node script needs for the same work
 * (issue 7). Everything runs as separate processes; the API is `carectl sandbox` in a process of its own.
 *
 *   npm run bench                                       # build, then measure package.json's bin
 *   node bench/run.js --only startup,lookup --runs 41   # some measures, more runs
 *   node bench/run.js --only startup,lookup --nodes /path/to/node22,/path/to/node24 # start-up on those nodes
 *   node bench/run.js --only parallel --parallel-runs 5 # lists and batches in parallel (bench/parallel.js)
 *   node bench/run.js --only concurrency                # a saturated service, a thin link (bench/concurrency.js)
 *   node bench/run.js --only wire                       # bytes on the wire, a thin link, connections (bench/wire.js)
 *   node bench/run.js --only servers --vs-entry ../other/bin/carectl.js # servers (a)–(e) of issue 46, two builds (bench/servers.js)
 *   node bench/run.js --only million                    # peak RSS of a 1M export against a 10k one (minutes; not by default)
 *   node bench/run.js --without-extra-ca-certs          # node's start-up without NODE_EXTRA_CA_CERTS
 *   node bench/simulate.js --records 100000 --latency 200 # a long export on a virtual clock
 *
 * Timings are medians of runs interleaved with their baseline, so a busy moment on the machine
 * hits both sides. Nothing here belongs in `npm test`: timings are not assertions.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, startSandboxServer, timeNode } from './lib/processes.js';
import { parallelMeasures } from './parallel.js';
import { concurrencyMeasures } from './concurrency.js';
import { wireMeasures } from './wire.js';
import { serverMeasures } from './servers.js';
import { limitRow, median, mib, ms, printTable, ratioRow } from './lib/table.js';
import { benchNodes } from './lib/nodes.js';

const MEASURES = ['startup', 'lookup', 'size', 'streaming', 'memory', 'million', 'cpu', 'polling', 'parallel', 'concurrency', 'wire', 'servers'];
const { values: flags } = parseArgs({
  options: {
    entry: { type: 'string', default: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).bin.carectl },
    runs: { type: 'string', default: '31' },
    'stream-runs': { type: 'string', default: '5' },
    'parallel-runs': { type: 'string', default: '3' },
    // The 1M export takes minutes, and the servers of issue 46 half an hour: asked for by name.
    only: { type: 'string', default: MEASURES.filter((measure) => measure !== 'million' && measure !== 'servers').join(',') },
    'vs-entry': { type: 'string' },
    'vs-env': { type: 'string', multiple: true, default: [] },
    'servers-runs': { type: 'string', default: '5' },
    servers: { type: 'string', default: 'a,b,c,d,e' },
    'without-extra-ca-certs': { type: 'boolean', default: false },
    nodes: { type: 'string' },
  },
});
const entry = resolve(ROOT, flags.entry);
if (!existsSync(entry)) throw new Error(`no entry point at ${entry}`);
warnIfBundleIsStale();
const runs = Number(flags.runs);
const streamRuns = Number(flags['stream-runs']);
const only = new Set(flags.only.split(','));
/** The start-up and lookup rows run on each (bench/lib/nodes.js); the rest on the node running the bench. */
const nodes = benchNodes(flags.nodes);
const onNode = (node) => ` (node ${node.major})`;

const STREAM_RECORDS = 20_000;
const SMALL_RECORDS = 1_000;
/** The first pages carectl requests for `conversations list` (both priorities), per format. */
const EXPORT_FIELDS = {
  ndjson: 'status,is_priority,contains_private,tags,author,channels,assigned_to,handling_times,close_reason',
  csv: 'status,is_priority,author,channels,tags,assigned_to',
};
const firstPages = (format) =>
  ['true', 'false'].map((priority) => `v1.3/conversations?${new URLSearchParams({ is_priority: priority, fields: EXPORT_FIELDS[format], page_size: '50' })}`);
/** A tag the sandbox always has, and the GET `carectl tags get` sends for it with -o json. */
const LOOKUP = { id: '7001', path: 'v1.3/tags/7001?fields=name%2Cis_active' };
/** The one GET `carectl conversations list --limit 1 -o json` sends. */
const FIRST_CONVERSATION = `v1.3/conversations?${new URLSearchParams({ is_priority: 'true', fields: EXPORT_FIELDS.ndjson, page_size: '1' })}`;
/**
 * Bytes each file of dist/bundle/ may take: a file past its budget, or one without a budget,
 * is printed OVER, so growth shows in the run that brings it (issue 34). What only some commands
 * need belongs in a file of its own (scripts/bundle.mjs); raise a budget only knowingly.
 */
const BUNDLE_BUDGET = {
  'carectl.js': 320_000,
  'undici.cjs': 340_000,
  'undici.cjs.LEGAL.txt': 1_000,
  'conf.cjs': 210_000,
  'sandbox.cjs': 60_000,
  'cli-table3.cjs': 36_000,
  'read.cjs': 4_000,
  'yauzl.cjs': 26_000,
  'hashes.json': 1_000,
};
/** A report generation time at which polling has settled into its steady cadence. */
const REPORT_DELAY_MS = 2500;

const scratch = mkdtempSync(join(tmpdir(), 'carectl-bench-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
/** No profile file: settings come from the environment only, as in cron. */
const cleanEnv = { ...process.env, XDG_CONFIG_HOME: scratch, NO_COLOR: '1' };
/**
 * NODE_EXTRA_CA_CERTS makes every node process parse those certificates before running any
 * JavaScript (~35 ms for a system bundle): the same for carectl and the baselines, so it shrinks
 * every ratio. Kept by default (it is how node runs on this machine); the flag measures without.
 */
const extraCaCerts = cleanEnv.NODE_EXTRA_CA_CERTS;
if (flags['without-extra-ca-certs']) delete cleanEnv.NODE_EXTRA_CA_CERTS;
const carectl = (...args) => [entry, ...args];

/** Runs each named command `count` times, interleaved, after one unmeasured warm-up round. */
async function interleaved(count, commands, options = {}) {
  const results = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let round = -1; round < count; round++) {
    for (const [name, args] of Object.entries(commands)) {
      const result = await timeNode(args, options[name] ?? options.all);
      if (round >= 0) results[name].push(result);
    }
  }
  return results;
}

const medianMs = (results) => median(results.map((r) => r.ms));

/**
 * Start-up of each kind of command against the least node does for the same, on each node: a
 * command that prints without the service against `node -e 0`, one that asks the service against
 * a node:http GET.
 */
async function startup() {
  const rows = [];
  for (const node of nodes) {
    const r = await interleaved(
      runs,
      { node: ['-e', '0'], version: carectl('--version'), help: carectl('--help') },
      { all: { env: cleanEnv, node: node.path } },
    );
    rows.push(
      ratioRow(`start-up: --version vs node -e 0${onNode(node)}`, medianMs(r.version), medianMs(r.node), 1.3, ms),
      ratioRow(`start-up: --help vs node -e 0${onNode(node)}`, medianMs(r.help), medianMs(r.node), 1.3, ms),
    );
  }
  return rows;
}

/**
 * A lookup and a first page, with the credentials from the environment (cron) and from a stored
 * profile (a user who ran `carectl login`), against a node:http GET of the same, on each node (in
 * CommonJS, as carectl runs: bench/baselines/http-get.cjs says why).
 */
async function lookup() {
  const sandbox = await startSandboxServer(entry, { conversations: 600 });
  try {
    const rows = [];
    for (const node of nodes) rows.push(...(await lookupOn(node, sandbox)));
    return rows;
  } finally {
    await sandbox.stop();
  }
}

async function lookupOn(node, sandbox) {
  const env = { ...cleanEnv, ...sandbox.env };
  const profileEnv = { ...cleanEnv, XDG_CONFIG_HOME: storeProfile(sandbox.env) };
  const opts = { env, stdout: 'capture', node: node.path };
  const loggedIn = { env: profileEnv, stdout: 'capture', node: node.path };
  const lookupArgs = carectl('tags', 'get', LOOKUP.id, '-o', 'json');
  const listArgs = carectl('conversations', 'list', '--limit', '1', '-o', 'json');
  const r = await interleaved(
    runs,
    {
      carectl: lookupArgs,
      profile: lookupArgs,
      baseline: ['bench/baselines/http-get.cjs', LOOKUP.path],
      list: listArgs,
      profileList: listArgs,
      listBaseline: ['bench/baselines/http-get.cjs', FIRST_CONVERSATION],
    },
    { all: opts, profile: loggedIn, profileList: loggedIn },
  );
  for (const name of ['carectl', 'profile']) {
    if (JSON.parse(r[name][0].stdout).id !== LOOKUP.id) throw new Error(`carectl tags get printed an unexpected record: ${r[name][0].stdout}`);
  }
  for (const name of ['list', 'profileList']) {
    if (JSON.parse(r[name][0].stdout).length !== 1) throw new Error(`carectl conversations list --limit 1 printed: ${r[name][0].stdout}`);
  }
  const on = onNode(node);
  return [
    ratioRow(`one lookup: tags get vs node:http${on}`, medianMs(r.carectl), medianMs(r.baseline), 1.3, ms),
    ratioRow(`one lookup, logged in: tags get vs node:http${on}`, medianMs(r.profile), medianMs(r.baseline), 1.3, ms),
    ratioRow(`one lookup: logged in vs environment${on}`, medianMs(r.profile), medianMs(r.carectl), 1.05, ms),
    ratioRow(`one page: conversations list --limit 1 vs node:http${on}`, medianMs(r.list), medianMs(r.listBaseline), 1.3, ms),
    ratioRow(`one page, logged in: list --limit 1 vs node:http${on}`, medianMs(r.profileList), medianMs(r.listBaseline), 1.3, ms),
  ];
}

/** A config folder whose default profile holds the sandbox's address and credentials, as `carectl login` leaves it. */
function storeProfile(sandboxEnv) {
  const home = join(scratch, 'logged-in');
  mkdirSync(join(home, 'carectl'), { recursive: true, mode: 0o700 });
  const profile = { 'base-url': sandboxEnv.CARECTL_BASE_URL, user: sandboxEnv.CARECTL_USER, password: sandboxEnv.CARECTL_PASSWORD };
  writeFileSync(join(home, 'carectl', 'config.json'), JSON.stringify({ profiles: { default: profile } }), { mode: 0o600 });
  return home;
}

/** Lines printed under the table. */
const footer = [];

/** The size of each file of the entry's dist/bundle/ against BUNDLE_BUDGET, as one line under the table. */
function size() {
  const folder = join(dirname(entry), '../dist/bundle');
  if (!existsSync(folder)) return [];
  const kb = (bytes) => `${Math.round(bytes / 1000)} KB`;
  const files = readdirSync(folder).map((name) => ({ name, bytes: statSync(join(folder, name)).size, budget: BUNDLE_BUDGET[name] }));
  const over = files.filter((file) => !(file.bytes <= file.budget));
  const each = files.map((file) => `${file.name} ${kb(file.bytes)}${file.budget === undefined ? ' (no budget)' : ` / ${kb(file.budget)}`}`);
  footer.push(`bundle size: ${over.length === 0 ? 'OK' : `OVER (${over.map((file) => file.name).join(', ')})`}: ${each.join(', ')}`);
  return [];
}

/** Export runs write to a file, like `carectl … > export.ndjson`, with peak RSS recorded. */
function exportOptions(env, name) {
  return { env, stdout: join(scratch, `${name}.out`), peakRssFile: join(scratch, `${name}.rss`) };
}

function checkLineCount(name, expected) {
  const lines = readFileSync(join(scratch, `${name}.out`), 'utf8').split('\n').length - 1;
  if (lines !== expected) throw new Error(`${name} wrote ${lines} lines, expected ${expected}`);
}

async function exportRuns(records, count) {
  const sandbox = await startSandboxServer(entry, { conversations: records });
  try {
    const env = { ...cleanEnv, ...sandbox.env };
    const commands = {
      carectlNdjson: carectl('conversations', 'list', '-o', 'ndjson'),
      baselineNdjson: ['bench/baselines/fetch-loop.js', ...firstPages('ndjson')],
      carectlCsv: carectl('conversations', 'list', '-o', 'csv'),
      baselineCsv: ['bench/baselines/fetch-loop.js', ...firstPages('csv')],
    };
    const options = Object.fromEntries(Object.keys(commands).map((name) => [name, exportOptions(env, name)]));
    const results = await interleaved(count, commands, options);
    checkLineCount('carectlNdjson', records);
    checkLineCount('baselineNdjson', records);
    checkLineCount('carectlCsv', records + 1);
    return results;
  } finally {
    await sandbox.stop();
  }
}

let large;
const largeExport = async () => (large ??= await exportRuns(STREAM_RECORDS, streamRuns));

async function streaming() {
  const r = await largeExport();
  return [
    ratioRow(`streaming: ${STREAM_RECORDS / 1000}k ndjson vs fetch loop`, medianMs(r.carectlNdjson), medianMs(r.baselineNdjson), 1.05, ms),
    ratioRow(`streaming: ${STREAM_RECORDS / 1000}k csv vs fetch loop`, medianMs(r.carectlCsv), medianMs(r.baselineCsv), 1.05, ms),
  ];
}

/**
 * Peak RSS of the 20k export against the 1k export. The fetch loop's own growth goes in a note:
 * V8 enlarges its young generation and optimises hot code as a run goes on, whatever the program.
 */
async function memory() {
  const big = await largeExport();
  const small = await exportRuns(SMALL_RECORDS, streamRuns);
  const peak = (results) => median(results.map((r) => r.peakRssKb));
  const label = `${STREAM_RECORDS / 1000}k vs ${SMALL_RECORDS / 1000}k`;
  const loop = (format) => {
    const [large, little] = [peak(big[`baseline${format}`]), peak(small[`baseline${format}`])];
    return `fetch loop ${mib(large)} vs ${mib(little)} (${(large / little).toFixed(2)}×)`;
  };
  return [
    { ...ratioRow(`peak RSS: ndjson ${label}`, peak(big.carectlNdjson), peak(small.carectlNdjson), 1.1, mib), note: loop('Ndjson') },
    { ...ratioRow(`peak RSS: csv ${label}`, peak(big.carectlCsv), peak(small.carectlCsv), 1.1, mib), note: loop('Csv') },
  ];
}

const MILLION = 1_000_000;
const TEN_K = 10_000;

/**
 * Peak RSS of a 1M-record export against a 10k one (issue 46 item 5: within 1.2×): what a list keeps of the records it
 * wrote (the guard against repeats) must not grow with the export. One field, so the 1M file stays small; the sandbox
 * holds its records in its own process. The 1M export runs once, after the 10k runs.
 */
async function million() {
  const peaks = {};
  for (const records of [TEN_K, MILLION]) {
    const sandbox = await startSandboxServer(entry, { conversations: records });
    try {
      const name = `export${records}`;
      const args = carectl('conversations', 'list', '-o', 'ndjson', '--fields', 'status');
      const options = exportOptions({ ...cleanEnv, ...sandbox.env }, name);
      const results = records === MILLION ? [await timeNode(args, options)] : (await interleaved(streamRuns, { [name]: args }, { [name]: options }))[name];
      checkLineCount(name, records);
      peaks[records] = { kb: median(results.map((r) => r.peakRssKb)), ms: median(results.map((r) => r.ms)) };
    } finally {
      await sandbox.stop();
    }
  }
  return [
    {
      ...ratioRow(`peak RSS: ndjson ${MILLION / 1e6}M vs ${TEN_K / 1000}k`, peaks[MILLION].kb, peaks[TEN_K].kb, 1.2, mib),
      note: `the 1M export took ${(peaks[MILLION].ms / 1000).toFixed(1)} s`,
    },
  ];
}

/** The fields carectl asks for in each format: the table formats' default columns, or every field. */
const FIELDS_OF = { ndjson: 'ndjson', json: 'ndjson', csv: 'csv', tsv: 'csv' };

/**
 * The work carectl does per record: the CPU time (user and system) of a 20k export at --parallel 1
 * in each format, against the fetch loop's for the same fields. The sandbox runs in a process of
 * its own, so only the client is charged.
 */
async function cpu() {
  const sandbox = await startSandboxServer(entry, { conversations: STREAM_RECORDS });
  try {
    const env = { ...cleanEnv, ...sandbox.env };
    const commands = {
      loopNdjson: ['bench/baselines/fetch-loop.js', ...firstPages('ndjson')],
      loopCsv: ['bench/baselines/fetch-loop.js', ...firstPages('csv')],
      ...Object.fromEntries(Object.keys(FIELDS_OF).map((format) => [format, carectl('conversations', 'list', '-o', format, '--parallel', '1')])),
    };
    const options = Object.fromEntries(Object.keys(commands).map((name) => [name, exportOptions(env, name)]));
    const r = await interleaved(streamRuns, commands, options);
    checkLineCount('ndjson', STREAM_RECORDS);
    checkLineCount('tsv', STREAM_RECORDS + 1);
    const cpuMs = (name) => median(r[name].map((result) => result.cpuMs));
    return Object.entries(FIELDS_OF).map(([format, fields]) => {
      const [client, loop] = [cpuMs(format), cpuMs(fields === 'csv' ? 'loopCsv' : 'loopNdjson')];
      const perRecord = (total) => `${((total * 1000) / STREAM_RECORDS).toFixed(1)} µs`;
      return {
        ...ratioRow(`client CPU: ${STREAM_RECORDS / 1000}k ${format}, --parallel 1 vs fetch loop`, client, loop, 1.1, ms),
        note: `a record: ${perRecord(client)} vs ${perRecord(loop)}`,
      };
    });
  } finally {
    await sandbox.stop();
  }
}

/**
 * `reports create --wait` against a sandbox whose reports take reportDelayMs to generate, timed
 * from carectl's own --verbose trace: a report is ready reportDelayMs after the sandbox received
 * the POST, which is after carectl traced it, so the lateness measured is if anything too long.
 */
async function waitForReport(reportDelayMs) {
  const sandbox = await startSandboxServer(entry, { conversations: 600, reportDelayMs });
  try {
    const run = await timeNode(carectl('reports', 'create', '--account', '1001', '--from', '7d', '--to', 'yesterday', '--wait', '--verbose'), {
      env: { ...cleanEnv, ...sandbox.env },
      stdout: 'capture',
    });
    const sent = run.stderrLines.filter(({ line }) => /^> (GET|POST) /.test(line));
    if (!sent[0]?.line.startsWith('> POST ')) throw new Error(`carectl reports create traced no POST first:\n${run.stderr}`);
    const readyAt = sent[0].at + reportDelayMs;
    return { reportDelayMs, lateMs: run.endedAt - readyAt, requests: sent.length };
  } finally {
    await sandbox.stop();
  }
}

/**
 * From a report becoming ready to `reports create --wait` returning, and the requests sent. The
 * worst case is a report that becomes ready just after a poll: the first run shows when the poll
 * that noticed its report came, and the second report is made ready 20 ms after that moment.
 */
async function polling() {
  const first = await waitForReport(REPORT_DELAY_MS);
  const second = await waitForReport(REPORT_DELAY_MS + first.lateMs + 20);
  const detail = [first, second].map((s) => `ready after ${s.reportDelayMs} ms: +${s.lateMs} ms, ${s.requests} requests`).join('; ');
  const minute = await waitForReport(60_000);
  const count = (n) => `${n} requests`;
  return [
    { ...limitRow('polling: ready → --wait returns (worst)', Math.max(first.lateMs, second.lateMs), 1000, ms), note: detail },
    { ...limitRow('polling: requests during a 60 s wait', minute.requests, 60, count), note: `noticed +${minute.lateMs} ms after ready (≤ 10 % of the wait)` },
    ...(await longWaits()),
  ];
}

/**
 * Requests during long waits, on an injected clock: carectl's own wait loop (the built module,
 * with its sleep advancing a fake time) against a report that becomes ready after the wait.
 */
async function longWaits() {
  const { waitForReport: wait } = await import(join(ROOT, 'dist/src/commands/reports/polling.js'));
  const rows = [];
  for (const [label, readyMs, limit] of [
    ['10 min', 10 * 60_000, 80],
    ['45 min', 45 * 60_000, 230],
  ]) {
    let now = 0;
    let requests = 0;
    await wait({
      reportId: '1',
      fetch: async () => (requests++, now >= readyMs ? { id: '1', generated_date: 'x', download: 'x' } : { id: '1' }),
      now: () => now,
      sleep: async (delay) => void (now += delay),
      signal: new AbortController().signal,
      timeoutMs: readyMs * 2,
      resumeCommand: '',
      progress: { polled: () => undefined, finish: () => undefined },
    });
    rows.push({
      ...limitRow(`polling: requests during a ${label} wait (injected clock)`, requests, limit, (n) => `${n} requests`),
      note: `noticed ${Math.round((now - readyMs) / 1000)} s after ready`,
    });
  }
  return rows;
}

/** A bundled entry runs dist/bundle/: measuring it older than src/ would mislead. */
function warnIfBundleIsStale() {
  const project = join(dirname(entry), '..');
  const bundle = join(project, 'dist/bundle/carectl.js');
  if (!readFileSync(entry, 'utf8').includes('dist/bundle') || !existsSync(bundle)) return;
  const src = join(project, 'src');
  const newest = Math.max(...readdirSync(src, { recursive: true }).map((name) => statSync(join(src, name)).mtimeMs));
  if (newest > statSync(bundle).mtimeMs) {
    console.log('warning: dist/bundle/ is older than src/; run `node scripts/bundle.mjs` first');
  }
}

/** Requests in parallel: bench/parallel.js. */
const parallel = () => parallelMeasures({ entry, env: cleanEnv, scratch, runs: Number(flags['parallel-runs']), interleaved });

/** Concurrency where it does not pay: a saturated service, a thin link (bench/concurrency.js). */
const concurrency = () => concurrencyMeasures({ entry, env: cleanEnv, scratch, runs: Number(flags['parallel-runs']), interleaved });

/** Bytes on the wire, a thin link, connections that last: bench/wire.js. */
const wire = () => wireMeasures({ entry, env: cleanEnv, scratch, runs: Number(flags['parallel-runs']), interleaved });

/** The list engine on servers written from the spec (issue 46's (a)–(e)), beside --parallel 1 and another build: bench/servers.js. */
const servers = () =>
  serverMeasures({
    entry,
    vsEntry: flags['vs-entry'] && resolve(ROOT, flags['vs-entry']),
    vsEnv: Object.fromEntries(flags['vs-env'].map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])),
    only: flags.servers,
    env: cleanEnv,
    scratch,
    runs: Number(flags['servers-runs']),
  });

const sections = { startup, lookup, size, streaming, memory, million, cpu, polling, parallel, concurrency, wire, servers };
const caNote = extraCaCerts
  ? `NODE_EXTRA_CA_CERTS ${flags['without-extra-ca-certs'] ? 'unset for the runs' : 'set (node start-up includes it)'}`
  : 'no NODE_EXTRA_CA_CERTS';
console.log(
  `carectl bench: ${flags.entry}, node ${process.version} (start-up on ${nodes.map((node) => node.version).join(', ')}), ${cpus().length} CPUs, load ${loadavg()[0].toFixed(2)}, ${caNote}; ` +
    `medians of ${runs} runs (exports: ${streamRuns})`,
);
const rows = [];
for (const name of MEASURES.filter((m) => only.has(m))) rows.push(...(await sections[name]()));
printTable(rows);
for (const line of footer) console.log(line);
