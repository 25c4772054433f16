/**
 * A conversation export on a virtual clock: carectl's own list machinery (runList, its parts and
 * the scheduler, from dist/src after `npm run build`) reads the sandbox's real pages in process,
 * and each reply is handed back a round trip after its request on a virtual clock. So a 100k
 * export over a 200 ms link (issue 15's example, ~7 minutes one request at a time) is measured in
 * a minute, and the same run gives the same figures. Client and service CPU time is not counted:
 * it shows what the parts and the window make of the round trips, not what a machine adds.
 *
 *   node bench/simulate.js                                  # 100k conversations, 200 ms, --parallel 8
 *   node bench/simulate.js --records 20000 --latency 50 --range
 *
 * Prints, for --parallel N and for --parallel 1: requests and the virtual time from the first
 * request to the last record written; the ratio, and what it would be with the window full; and
 * where --parallel N's window stood idle: before it first filled, while it was full, after it was
 * last full (the tail). `--trace` lists --parallel N's requests and answers with the requests in
 * flight; `--seed` draws other jitter. The jitter does not depend on a reply's size: a probe of two
 * records comes back before a page of 50 sent with it against the sandbox, but not always here.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ROOT } from './lib/processes.js';

const { values: flags } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    latency: { type: 'string', default: '200' },
    jitter: { type: 'string', default: '8' },
    parallel: { type: 'string', default: '8' },
    range: { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    trace: { type: 'boolean', default: false },
  },
});
const load = (path) => import(pathToFileURL(join(ROOT, 'dist/src', path)).href);
const { startSandbox } = await load('sandbox/index.js');
const { listPlan, nextStep } = await load('api/paging.js');
const { resourceByName } = await load('catalogue/index.js');
const { Scheduler } = await load('api/scheduler.js');
const { runList, startPoint } = await load('api/list-run.js');

const LATENCY = Number(flags.latency);
const JITTER = Number(flags.jitter);
const FIELDS = 'status,is_priority,contains_private,tags,author,channels,assigned_to,handling_times,close_reason';
const sandbox = await startSandbox({ conversations: Number(flags.records) });
const conversations = resourceByName('conversations');
/** As the API client reads a reply's link: relative to the base, with the query it kept. */
const rules = { style: conversations.paging, sort: conversations.sortDates };
const relative = (link) => (link === null ? null : new URL(link).pathname.slice(1) + new URL(link).search);
const authorization = `Basic ${Buffer.from(`${sandbox.user}:${sandbox.password}`).toString('base64')}`;

/** One export with `parallel` requests in flight: its requests and virtual time. */
async function simulate(parallel) {
  let now = 0;
  let fetching = 0;
  let requests = 0;
  let seed = Number(flags.seed);
  /** Each request sent (+1) and answered (-1), at its virtual time, with what it asked or got. */
  const events = [];
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  /** Replies read from the sandbox, each due a round trip after its request. */
  const due = [];
  const source = {
    fetch: (url, base) =>
      new Promise((resolve, reject) => {
        const sent = now;
        const number = ++requests;
        events.push({ at: sent, step: 1, text: `#${number} ${decodeURIComponent(url).replace(/fields=[^&]*&/, '')}` });
        fetching++;
        fetch(new URL(url, `${sandbox.baseUrl}/`), { headers: { authorization } })
          .then((reply) => reply.json())
          .then(
            (body) =>
              due.push({
                at: sent + LATENCY + random() * JITTER,
                hand: () => {
                  const records = body.conversations;
                  events.push({ at: now, step: -1, text: `#${number}: ${records.length} records` });
                  resolve({ records, ...nextStep(rules, base, url, relative(body.paging?.next_page ?? null), records.length) });
                },
              }),
            reject,
          )
          .finally(() => fetching--);
      }),
  };
  const asOf = Date.now();
  const day = (offset) => new Date(asOf - offset * 86_400_000).toISOString().slice(0, 10);
  const query = [
    ['fields', FIELDS],
    ...(flags.range
      ? [
          ['oldest_sort_date_gte', day(400)],
          ['oldest_sort_date_lte', day(0)],
        ]
      : []),
  ];
  const plan = listPlan(conversations, 'v1.3', query, { pageSize: 50, asOf });
  let written = 0;
  const writer = { write: async () => void written++, endPage: async () => undefined, end: async () => undefined };
  const scheduler = new Scheduler({ parallel, now: () => now, sleep: async () => undefined });
  let finished = false;
  const run = runList({ plan, source, writer, start: startPoint(plan, undefined), scheduler, notice: () => undefined }).finally(() => (finished = true));
  // Let every reaction run and every real read finish before the clock moves on.
  const settle = async () => {
    for (let turns = 0; turns < 20 || fetching > 0; turns++) await new Promise((resolve) => setImmediate(resolve));
  };
  for (;;) {
    await settle();
    if (finished) break;
    if (due.length === 0) throw new Error('the run waits for nothing: it is stuck');
    due.sort((a, b) => a.at - b.at);
    const next = due.shift();
    now = Math.max(now, next.at);
    next.hand();
  }
  await run;
  return { requests, ms: now, written, events };
}

/**
 * Where the window stood idle, in round trips of the whole window: before it first filled, between, and after it was last
 * full. With --trace, each event with the requests in flight after it.
 */
function idleWindow(events, parallel, roundTrip) {
  const full = [];
  let inFlight = 0;
  for (const event of events) {
    inFlight += event.step;
    if (inFlight >= parallel) full.push(event.at);
    if (flags.trace)
      console.log(`${event.at.toFixed(1).padStart(9)} ms  ${String(inFlight).padStart(2)} in flight  ${event.step > 0 ? '>' : '<'} ${event.text}`);
  }
  const [first, last] = [full[0] ?? Infinity, full.at(-1) ?? Infinity];
  const idle = [0, 0, 0];
  inFlight = 0;
  for (let i = 1; i < events.length; i++) {
    inFlight += events[i - 1].step;
    const at = events[i].at;
    idle[at <= first ? 0 : at <= last ? 1 : 2] += ((parallel - inFlight) * (at - events[i - 1].at)) / parallel / roundTrip;
  }
  return idle;
}

try {
  const parallel = Number(flags.parallel);
  const many = await simulate(parallel);
  const one = await simulate(1);
  if (many.written !== one.written) throw new Error(`the runs wrote ${many.written} and ${one.written} records`);
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
  console.log(`${one.written} conversations${flags.range ? ' (--oldest 400d..today)' : ''}, ${LATENCY} ms a round trip (+0–${JITTER} ms), virtual time:`);
  console.log(`  --parallel ${parallel}: ${many.requests} requests, ${seconds(many.ms)}`);
  console.log(`  --parallel 1: ${one.requests} requests, ${seconds(one.ms)}`);
  // The least its requests could take: every round trip with the window full.
  const best = Math.ceil(many.requests / parallel) * (one.ms / one.requests);
  console.log(
    `  ratio: ${(one.ms / many.ms).toFixed(2)}×; with the window full all along, its requests would take ${seconds(best)} (${(one.ms / best).toFixed(2)}×)`,
  );
  const [start, middle, tail] = idleWindow(many.events, parallel, one.ms / one.requests).map((rounds) => rounds.toFixed(1));
  console.log(`  --parallel ${parallel}, window idle (round trips): ${start} before it first filled, ${middle} while full, ${tail} after it was last full`);
} finally {
  await sandbox.close();
}
