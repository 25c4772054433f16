/**
 * Requests in parallel (issue 15 item 9), against `carectl sandbox --latency 50ms`, a service as
 * far away as a real one: an export of 5,000 conversations with the default --parallel against
 * the sequential fetch loop and against 8 chains cut by a client that knows the data (the most
 * 8 requests in flight allow here), the same with a date range, an export of 20,000 (far more
 * pages than are held ahead of the writer) against the loop, an update of 100 ids against
 * --parallel 1, the peak RSS and the time of a parallel 20k export on loopback against
 * --parallel 1, the requests a two-page list costs, and an export against a service that
 * answers 429 past 2 requests in flight. The sandbox options appeared
 * after --parallel did: with an entry whose sandbox lacks them, those rows say so.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxOptions, startSandboxServer, timeNode } from './lib/processes.js';
import { limitRow, median, mib, ms, ratioRow, skippedRow, speedupRow } from './lib/table.js';

const LATENCY_MS = 50;
const RECORDS = 5_000;
const LARGE = 20_000;
const UPDATES = 100;
/** Runs of the export and the chains, side by side, for the row that compares them. */
const CHAIN_PAIRS = 11;
export const FIELDS = 'status,is_priority,contains_private,tags,author,channels,assigned_to,handling_times,close_reason';
const day = (offset) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
/**
 * The range of the ranged export, as carectl's `--oldest 400d..today` resolves it: the same 5,000
 * conversations (the sandbox dates them within the last year), asked for with a date range.
 */
const RANGE = { flag: '400d..today', gte: day(400), lte: day(0) };

/** The first pages carectl asks for (both priorities), for the fetch loop; with the range, bounded. */
export const firstPages = (range) =>
  ['true', 'false'].map(
    (priority) =>
      `v1.3/conversations?${new URLSearchParams({
        is_priority: priority,
        fields: FIELDS,
        page_size: '50',
        ...(range && { oldest_sort_date_gte: range.gte, oldest_sort_date_lte: range.lte }),
      })}`,
  );

export async function parallelMeasures({ entry, env, scratch, runs, interleaved }) {
  const carectl = (...args) => [entry, ...args];
  const options = await sandboxOptions(entry);
  const rows = [];
  const latency = options.has('--latency');
  const lines = (file) => readFileSync(file, 'utf8').split('\n').length - 1;
  const toFile = (name, extra = {}) => ({ stdout: join(scratch, `${name}.out`), ...extra });

  if (!latency) {
    const note = 'this `carectl sandbox` has no --latency yet (it comes with the sandbox work): run the bench on the merged tree';
    for (const measure of [
      'latency 50 ms: 5k export vs fetch loop',
      'latency 50 ms: 5k export, date range',
      `latency 50 ms: ${LARGE / 1000}k export vs fetch loop`,
      `latency 50 ms: update of ${UPDATES} ids`,
    ])
      rows.push(skippedRow(measure, '≥ 6×', note));
  } else {
    const sandbox = await startSandboxServer(entry, { conversations: RECORDS, latencyMs: LATENCY_MS });
    try {
      const all = { env: { ...env, ...sandbox.env } };
      const exportArgs = ['conversations', 'list', '-o', 'ndjson', '--fields', FIELDS];
      // The chains a client that knows the data would fetch: walked once here, not timed.
      const chains = (await timeNode(['bench/baselines/balanced-chains.js', 'plan', ...firstPages()], { ...all, stdout: 'capture' })).stdout;
      const r = await interleaved(
        runs,
        {
          carectl: carectl(...exportArgs),
          loop: ['bench/baselines/fetch-loop.js', ...firstPages()],
          carectlRange: carectl(...exportArgs, '--oldest', RANGE.flag),
          loopRange: ['bench/baselines/fetch-loop.js', ...firstPages(RANGE)],
        },
        Object.fromEntries(['carectl', 'loop', 'carectlRange', 'loopRange'].map((name) => [name, { ...all, ...toFile(name) }])),
      );
      if (lines(join(scratch, 'carectl.out')) !== RECORDS) throw new Error('the parallel export missed records');
      if (lines(join(scratch, 'carectlRange.out')) !== RECORDS || lines(join(scratch, 'loopRange.out')) !== RECORDS)
        throw new Error('the ranged export missed records');
      const t = (name) => median(r[name].map((x) => x.ms));
      rows.push(speedupRow(`latency ${LATENCY_MS} ms: ${RECORDS / 1000}k export vs fetch loop`, t('carectl'), t('loop'), 4.5, ms));
      rows.push(speedupRow(`latency ${LATENCY_MS} ms: ${RECORDS / 1000}k export, --oldest ${RANGE.flag}`, t('carectlRange'), t('loopRange'), 6, ms));
      // What 8 requests in flight allow here at best: 8 chains cut where the data says, by a client
      // that knows it. Its own pairs, more than the other rows take: it sits near its bar, and the
      // medians of 3 or 5 runs moved it by ±4 % from one bench run to the next.
      const pairs = await interleaved(
        Math.max(runs, CHAIN_PAIRS),
        { carectl: carectl(...exportArgs), chains: ['bench/baselines/balanced-chains.js', 'run', chains] },
        {
          carectl: { ...all, ...toFile('carectl') },
          chains: { ...all, ...toFile('chains') },
        },
      );
      if (lines(join(scratch, 'carectl.out')) !== RECORDS || lines(join(scratch, 'chains.out')) !== RECORDS)
        throw new Error('the parallel export missed records');
      const p = (name) => median(pairs[name].map((x) => x.ms));
      rows.push({
        ...ratioRow(`latency ${LATENCY_MS} ms: ${RECORDS / 1000}k export vs 8 chains cut knowing the data`, p('carectl'), p('chains'), 1.15, ms),
        note: `${pairs.carectl.length} pairs`,
      });

      // A list far longer than the pages held ahead of the writer (8 a slot): its parts must keep
      // the window full to the end. The loop takes ~22 s here, so at most 3 runs.
      const long = await startSandboxServer(entry, { conversations: LARGE, latencyMs: LATENCY_MS });
      try {
        const longAll = { env: { ...env, ...long.env } };
        const l = await interleaved(
          Math.min(runs, 3),
          { carectl: carectl(...exportArgs), loop: ['bench/baselines/fetch-loop.js', ...firstPages()] },
          {
            carectl: { ...longAll, ...toFile('long') },
            loop: { ...longAll, ...toFile('longLoop') },
          },
        );
        if (lines(join(scratch, 'long.out')) !== LARGE || lines(join(scratch, 'longLoop.out')) !== LARGE) throw new Error('the 20k export missed records');
        rows.push(
          speedupRow(
            `latency ${LATENCY_MS} ms: ${LARGE / 1000}k export vs fetch loop`,
            median(l.carectl.map((x) => x.ms)),
            median(l.loop.map((x) => x.ms)),
            6,
            ms,
          ),
        );
      } finally {
        await long.stop();
      }

      // Ids that update cleanly (the demo key may not manage every channel), found once.
      const listed = await timeNode(carectl('conversations', 'list', '--status', 'unread', '--columns', 'id', '--no-header', '--limit', String(3 * UPDATES)), {
        ...all,
        stdout: 'capture',
      });
      const tried = await timeNode(
        carectl('conversations', 'update', ...listed.stdout.trim().split('\n'), '--status', 'on_hold', '--columns', 'id,result', '--no-header'),
        { ...all, stdout: 'capture', okCodes: [0, 1, 3] },
      );
      const ids = tried.stdout
        .trim()
        .split('\n')
        .filter((line) => line.endsWith('\tok'))
        .map((line) => line.split('\t')[0])
        .slice(0, UPDATES);
      if (ids.length < UPDATES) throw new Error(`only ${ids.length} conversations update cleanly`);
      const update = ['conversations', 'update', ...ids, '--status', 'on_hold'];
      const u = await interleaved(runs, { parallel: carectl(...update), one: carectl(...update, '--parallel', '1') }, { all });
      rows.push(
        speedupRow(
          `latency ${LATENCY_MS} ms: update of ${UPDATES} ids vs --parallel 1`,
          median(u.parallel.map((x) => x.ms)),
          median(u.one.map((x) => x.ms)),
          6,
          ms,
        ),
      );
    } finally {
      await sandbox.stop();
    }
  }

  // Memory: what parts ahead of the writer hold stays bounded (no latency needed).
  const big = await startSandboxServer(entry, { conversations: LARGE });
  try {
    const rss = (name) => ({ env: { ...env, ...big.env }, ...toFile(name, { peakRssFile: join(scratch, `${name}.rss`) }) });
    // A date range, so that the export runs in slices whatever links the sandbox sends.
    const args = ['conversations', 'list', '-o', 'ndjson', '--oldest', '400d..today'];
    const m = await interleaved(runs, { parallel: carectl(...args), one: carectl(...args, '--parallel', '1') }, { parallel: rss('parallel'), one: rss('one') });
    if (readFileSync(join(scratch, 'parallel.out'), 'utf8') !== readFileSync(join(scratch, 'one.out'), 'utf8'))
      throw new Error('the parallel export differs from --parallel 1');
    const peak = (results) => median(results.map((x) => x.peakRssKb));
    rows.push(ratioRow(`peak RSS: ${LARGE / 1000}k export, default --parallel vs --parallel 1`, peak(m.parallel), peak(m.one), 1.5, mib));
    // On loopback a request costs next to nothing: parallel machinery must not cost more than it buys.
    rows.push(
      ratioRow(
        `loopback: ${LARGE / 1000}k export, default --parallel vs --parallel 1`,
        median(m.parallel.map((x) => x.ms)),
        median(m.one.map((x) => x.ms)),
        1.1,
        ms,
      ),
    );
  } finally {
    await big.stop();
  }

  // A short list stays cheap: requests for a list of two pages, default --parallel vs one at a time.
  const small = await startSandboxServer(entry, { conversations: 400 });
  try {
    const args = carectl('conversations', 'list', '--status', 'unread', '--columns', 'id', '--no-header', '--verbose');
    const count = async (extra) => {
      const run = await timeNode([...args, ...extra], { env: { ...env, ...small.env }, stdout: 'capture' });
      return { records: run.stdout.trim().split('\n').length, requests: run.stderrLines.filter(({ line }) => line.startsWith('> GET ')).length };
    };
    const [many, one] = [await count([]), await count(['--parallel', '1'])];
    if (many.records !== one.records || one.requests !== 2) throw new Error(`not a two-page list: ${one.records} records in ${one.requests} requests`);
    rows.push({
      ...limitRow(`requests for a 2-page list (${one.records} records), default --parallel`, many.requests, one.requests + 1, (v) => String(v)),
      note: `--parallel 1: ${one.requests}`,
    });
  } finally {
    await small.stop();
  }

  if (!options.has('--rate-limit') || !latency) {
    rows.push(
      skippedRow('429 past 2 in flight: share of 429 answers', '≤ 10 %', 'this `carectl sandbox` has no --rate-limit yet: run the bench on the merged tree'),
    );
  } else {
    const limited = await startSandboxServer(entry, { conversations: RECORDS, latencyMs: LATENCY_MS, rateLimit: 2 });
    try {
      // In date slices, so that more than two requests would be in flight whatever links the sandbox sends.
      const run = await timeNode(carectl('conversations', 'list', '-o', 'ndjson', '--verbose', '--oldest', '400d..today'), {
        env: { ...env, ...limited.env },
        ...toFile('limited'),
      });
      if (lines(join(scratch, 'limited.out')) !== RECORDS) throw new Error('the rate-limited export missed records');
      const answers = run.stderrLines.filter(({ line }) => /^< \d{3} /.test(line));
      const refused = answers.filter(({ line }) => line.startsWith('< 429 ')).length;
      const share = (100 * refused) / answers.length;
      rows.push({
        ...limitRow('429 past 2 in flight: share of 429 answers', share, 10, (v) => `${v.toFixed(1)} %`),
        note: `completed in ${ms(run.ms)}, ${refused} of ${answers.length} answers were 429`,
      });
    } finally {
      await limited.stop();
    }
  }
  return rows;
}
