/**
 * Lists against servers the spec equally allows (test/model-server.ts), checked by properties:
 * a list prints exactly the records the model holds for the query, in its order, each once,
 * whatever --parallel, --page-size, --limit and --resume chain. The oracle is the model's own
 * filter and sort, never carectl's sequential path. `npm test` runs a fixed seed and a few runs;
 * `npm run fuzz` (FUZZ_RUNS, FUZZ_SEED) runs many more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fakeClock, runCli } from './helpers.js';
import { DAY, ModelServer, NOW, modelData, type ModelQuery, type ModelVariant, type Shape } from './model-server.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
// A fixed seed in `npm test`; `npm run fuzz` draws one (fast-check prints it with a failure).
const SEED = Number(process.env.FUZZ_SEED ?? (process.env.FUZZ_RUNS ? Date.now() % 2 ** 31 : 20261126));

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

interface Case {
  count: number;
  shapes: Shape[];
  dataSeed: number;
  hidden: number;
  variant: ModelVariant;
  filter: { status?: string; priority?: boolean };
  range?: { field: 'oldest' | 'newest'; kind: 'both' | 'from' | 'to' | 'explicit'; from: number; to: number; ops: [string, string] };
  sort?: string;
  /** undefined: no --parallel, the limiter's window (up to 8) */
  parallel: number | undefined;
  /** Ms the injected clock moves at each reading (0: only sleeps move it): latencies that grow with the requests in flight, so the limiter's window moves. */
  tick: number;
  pageSize: number;
  limit?: number;
  /** Between the runs of a --limit chain, the records printed leave the list (closed, as `… | carectl conversations update - --status closing` does). */
  closePrinted?: boolean;
}

/** The flags of a case, and the bounds they send as the contract says (the oracle's query). */
function flagsOf(c: Case): { argv: string[]; query: ModelQuery } {
  // The default's --verbose says each move of the limiter's window.
  const parallel = c.parallel === undefined ? ['--verbose'] : ['--parallel', String(c.parallel)];
  const argv = ['conversations', 'list', '-o', 'tsv', '--columns', 'id', ...parallel, '--page-size', String(c.pageSize)];
  const query: ModelQuery = {};
  if (c.filter.status) {
    argv.push('--status', c.filter.status);
    query.status = c.filter.status;
  }
  if (c.filter.priority !== undefined) {
    argv.push(c.filter.priority ? '--priority' : '--no-priority');
    query.is_priority = c.filter.priority;
  }
  if (c.sort) {
    argv.push('--sort', c.sort);
    query.sort = c.sort;
  }
  if (c.range) {
    const { field, kind, ops } = c.range;
    const from = day(Math.min(c.range.from, c.range.to));
    // Explicit bounds two days apart at least, so that `gt:D,lt:D+1` (no date) is not generated.
    const to = day(Math.max(c.range.from, c.range.to) + (kind === 'explicit' ? 2 * DAY : 0));
    const param = `${field}_sort_date`;
    const next = day(Date.parse(to) + DAY);
    const [text, bounds]: [string, Array<[string, string]>] =
      kind === 'both'
        ? [
            `${from}..${to}`,
            [
              [`${param}_gte`, from],
              [`${param}_lt`, next],
            ],
          ]
        : kind === 'from'
          ? [`${from}..`, [[`${param}_gte`, from]]]
          : kind === 'to'
            ? [`..${to}`, [[`${param}_lt`, next]]]
            : [
                `${ops[0]}:${from},${ops[1]}:${to}`,
                [
                  [`${param}_${ops[0]}`, from],
                  [`${param}_${ops[1]}`, to],
                ],
              ];
    argv.push(`--${field}`, text);
    query.bounds = bounds;
  }
  return { argv, query };
}

/** What the model lists for the case: the union of the two priority queries when neither filter is given. */
function oracle(model: ModelServer, c: Case, query: ModelQuery, withHidden = false): string[] {
  if (c.filter.status || c.filter.priority !== undefined) return model.expected(query, withHidden);
  const seen = new Set<string>();
  return [...model.expected({ ...query, is_priority: true }, withHidden), ...model.expected({ ...query, is_priority: false }, withHidden)].filter(
    (id) => !seen.has(id) && (seen.add(id), true),
  );
}

const TOKEN = /--resume '?([A-Za-z0-9_-]+)'?/;

/** Runs the case (a --limit chain resumed to the end); answers the ids printed and the last exit code and stderr. */
async function listAll(model: ModelServer, c: Case, argv: string[]): Promise<{ ids: string[]; code: number; stderr: string; counted: boolean }> {
  const env = { CARECTL_BASE_URL: model.baseUrl, CARECTL_USER: 'bot', CARECTL_PASSWORD: 'model-secret', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' };
  const clock = fakeClock(NOW);
  const now = (): number => {
    clock.advance(c.tick);
    return clock.now();
  };
  const ids: string[] = [];
  let resume: string | undefined;
  // A token that keeps the service's skip, past the records it can name (it says so).
  let counted = false;
  for (let round = 0; round < 200; round++) {
    const args = [...argv, ...(c.limit !== undefined ? ['--limit', String(c.limit)] : []), ...(resume ? ['--resume', resume] : [])];
    const result = await runCli(args, { env, now, sleep: clock.sleep });
    const printed = result.stdout.split('\n').filter((line) => line !== '' && line !== 'id');
    ids.push(...printed);
    if (c.closePrinted) model.closeIds(printed);
    const token = TOKEN.exec(result.stderr)?.[1];
    counted ||= /the service's skip in it counts/.test(result.stderr);
    if (result.code !== 0 || c.limit === undefined || !token) return { ids, code: result.code, stderr: result.stderr, counted };
    resume = token;
  }
  throw new Error('the --limit chain did not end');
}

const shapesArb = fc.subarray(['year', 'future', '1970', 'burst', 'gaps', 'hours'] as Shape[], { minLength: 1 });
const dateArb = fc.integer({ min: Date.UTC(1969, 11, 20), max: NOW + 400 * DAY }).map((ms) => Math.floor(ms / DAY) * DAY);

function caseArb(
  variant: fc.Arbitrary<ModelVariant>,
  options: {
    shapes?: fc.Arbitrary<Shape[]>;
    sorts?: string[];
    ranges?: boolean;
    limits?: boolean;
    long?: boolean;
    parallel?: fc.Arbitrary<number | undefined>;
    pageSize?: fc.Arbitrary<number>;
  } = {},
): fc.Arbitrary<Case> {
  const filter: fc.Arbitrary<Case['filter']> = fc.oneof(
    fc.record({ status: fc.constantFrom('unread', 'assigned', 'closed') }),
    fc.record({ priority: fc.boolean() }),
    fc.constant({}),
  );
  const range = fc.option(
    fc.record({
      field: fc.constantFrom('oldest' as const, 'newest' as const),
      kind: fc.constantFrom('both' as const, 'from' as const, 'to' as const, 'explicit' as const),
      from: dateArb,
      to: dateArb,
      ops: fc.tuple(fc.constantFrom('gt', 'gte'), fc.constantFrom('lt', 'lte')),
    }),
    { nil: undefined },
  );
  return (
    fc
      .record({
        count: options.long ? fc.integer({ min: 600, max: 1500 }) : fc.integer({ min: 0, max: 260 }),
        shapes: options.shapes ?? shapesArb,
        dataSeed: fc.integer({ min: 1, max: 2 ** 30 }),
        hidden: fc.constantFrom(0, 0, 0.3),
        variant,
        // Long: the union of the two priority queries, unsorted, sliced by its sort date: the most requests at once.
        filter: options.long ? fc.constant<Case['filter']>({}) : filter,
        range: options.ranges === false ? fc.constant(undefined) : range,
        sort: fc.option(fc.constantFrom(...(options.sorts ?? ['-oldest_sort_date', 'newest_sort_date', '-newest_sort_date'])), { nil: undefined }),
        parallel: options.parallel ?? (options.long ? fc.constant(undefined) : fc.option(fc.integer({ min: 1, max: 16 }), { nil: undefined })),
        tick: options.long ? fc.constantFrom(1, 3) : fc.constantFrom(0, 1, 3),
        pageSize: options.pageSize ?? (options.long ? fc.integer({ min: 5, max: 10 }) : fc.integer({ min: 5, max: 50 })),
        limit: options.limits === false ? fc.constant(undefined) : fc.option(fc.integer({ min: 15, max: 120 }), { nil: undefined }),
      })
      // A union cannot be sorted (a usage error, tested elsewhere).
      .map((c) => (c.filter.status || c.filter.priority !== undefined ? c : { ...c, sort: undefined }))
  );
}

/** Runs whose --verbose said the limiter moved the window (see the property at the default --parallel). */
let limiterMoves = 0;

async function check(c: Case): Promise<void> {
  try {
    await checkCase(c);
  } catch (err) {
    // fast-check shows the case; the assertion's own message says what went wrong.
    if (process.env.FUZZ_VERBOSE) console.error(String(err).slice(0, 3000));
    throw err;
  }
}

async function checkCase(c: Case): Promise<void> {
  const model = new ModelServer(modelData(c.count, c.shapes, c.dataSeed, c.hidden), c.variant);
  await model.start();
  try {
    const { argv, query } = flagsOf(c);
    const before = oracle(model, c, query);
    // Hidden rows too: a skip counts them, so one that moves away makes the service skip the next.
    const rows = oracle(model, c, query, true);
    const { ids, code, stderr, counted } = await listAll(model, c, argv);
    assert.equal(code, 0, stderr);
    if (/in flight \d+ → \d+: .* waiting/.test(stderr)) limiterMoves++;
    // Records that leave once printed: the list as it was at the start, each once, in order.
    if (c.closePrinted) {
      // Unless a token said the service's skip counts (RELIABILITY.md): then those left may shift it.
      if (counted)
        assert.deepEqual(
          ids,
          before.filter((id) => ids.includes(id)),
        );
      else assert.deepEqual(ids, before);
      return;
    }
    if (!c.variant.moveEvery) {
      assert.deepEqual(ids, oracle(model, c, query));
      return;
    }
    // Records whose newest_sort_date moved: each at most once (ascending by it, exactly once, as
    // a reader going forward meets it again); every other record once, in the model's order.
    // A keyset link's skip counts the records at its second: when one of those moves away, the
    // service itself skips the record after it (one at a time too), so that one may be missing.
    const moved = model.movedIds;
    assert.equal(new Set(ids).size, ids.length, 'an id printed twice');
    const expected = oracle(model, c, query);
    const mayMiss = new Set(rows.filter((_, i) => i > 0 && moved.has(rows[i - 1] as string)));
    const printed = new Set(ids);
    assert.deepEqual(
      ids.filter((id) => !moved.has(id)),
      expected.filter((id) => !moved.has(id) && (printed.has(id) || !mayMiss.has(id))),
    );
    if (c.sort === 'newest_sort_date') assert.deepEqual(printed, new Set(expected.filter((id) => printed.has(id) || !mayMiss.has(id))));
  } finally {
    await model.close();
  }
}

const readings = fc.constantFrom('whole-day' as const, 'midnight' as const);
// ISO 8601 forms a service may write a keyset link's date-time in (Django, Rails: a zone, microseconds, a space).
const timeForms = fc.constantFrom('T' as const, 'Z' as const, 'micro' as const, 'space' as const);

describe('lists against model servers (properties)', () => {
  it("print exactly the model's records in its order, whole-day or midnight bounds, keyset or plain-skip links", async () => {
    const variant = fc.record({ reading: readings, links: fc.constantFrom('keyset' as const, 'skip' as const), timeForm: timeForms });
    await fc.assert(fc.asyncProperty(caseArb(variant), check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });

  it('print each record once when the service ignores the date bounds', async () => {
    const variant = fc.record({ reading: readings, links: fc.constant('skip' as const), ignoreBounds: fc.constant(true) });
    await fc.assert(fc.asyncProperty(caseArb(variant, { ranges: false }), check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });

  // Without --limit chains: a slice whose last page passes its far bound (no link shows it)
  // writes records of the next slice, which a run continuing from a token there writes again.
  it("print each record once when the service ignores a slice's far bound", async () => {
    const variant = fc.record({ reading: readings, links: fc.constant('keyset' as const), ignoreFar: fc.constant(true) });
    await fc.assert(fc.asyncProperty(caseArb(variant, { ranges: false, limits: false }), check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });

  // With --limit chains: a token must lead neither to records printed again nor to a run that
  // makes no progress (the resumed run of a slice read the query's start again, every time).
  it("print exactly the model's records in its order when the service ignores a slice's near bound", async () => {
    const variant = fc.record({ reading: readings, links: fc.constant('keyset' as const), ignoreNear: fc.constant(true) });
    await fc.assert(fc.asyncProperty(caseArb(variant, { ranges: false }), check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });

  // Keyset links: a plain skip counts from the list's start, which those records left (any client loses there).
  it('a --limit chain loses nothing when the records it printed leave the list between runs', async () => {
    const variant = fc.record({ reading: readings, links: fc.constant('keyset' as const), timeForm: timeForms });
    const closing = caseArb(variant, { ranges: false, sorts: ['-oldest_sort_date'] }).chain((c) =>
      fc.integer({ min: 5, max: 60 }).map((limit) => ({ ...c, filter: { status: 'unread' }, limit, closePrinted: true })),
    );
    await fc.assert(fc.asyncProperty(closing, check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });

  it('print each record once when sort dates move during the run', async () => {
    const variant = fc.record({ reading: readings, links: fc.constant('keyset' as const), moveEvery: fc.integer({ min: 1, max: 3 }) });
    const shapes = fc.subarray(['year', 'future', 'gaps'] as Shape[], { minLength: 1 });
    await fc.assert(fc.asyncProperty(caseArb(variant, { shapes, ranges: false, limits: false }), check), { seed: SEED, numRuns: RUNS, endOnFailure: true });
  });

  // Latencies on the injected clock grow with the requests in flight: the limiter's window moves during the run.
  it("print exactly the model's records in its order at the default --parallel, whose window the limiter moves", async () => {
    const variant = fc.record({ reading: readings, links: fc.constant('keyset' as const), timeForm: timeForms });
    const before = limiterMoves;
    const long = caseArb(variant, { long: true, limits: false, ranges: false });
    await fc.assert(fc.asyncProperty(long, check), { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true });
    assert.ok(limiterMoves > before, 'the limiter moved no window: the property did not cover it');
  });

  it('lose nothing to 429s from an in-flight limit or a quota', async () => {
    const variant = fc
      .record({
        reading: readings,
        links: fc.constantFrom('keyset' as const, 'skip' as const),
        delayMs: fc.constant(2),
        inFlightLimit: fc.integer({ min: 1, max: 4 }),
        quotaEvery: fc.option(fc.integer({ min: 5, max: 15 }), { nil: undefined }),
      })
      .map((v) => (v.quotaEvery === undefined ? { reading: v.reading, links: v.links, delayMs: v.delayMs, inFlightLimit: v.inFlightLimit } : v));
    await fc.assert(fc.asyncProperty(caseArb(variant, { limits: false }), check), { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true });
  });

  // Long lists, so that the window comes down at the refusals and grows back by the answers in a row (the plain engine lost
  // the requests of a window grown, and waited for them forever).
  it("lose nothing to a gateway's 503s without Retry-After past an in-flight limit (nginx's limit_conn)", async () => {
    const variant = fc.record({
      reading: readings,
      links: fc.constantFrom('keyset' as const, 'skip' as const),
      delayMs: fc.constant(1),
      inFlightLimit: fc.integer({ min: 1, max: 3 }),
      gateway503: fc.constant(true),
    });
    // --parallel 8 too: the 503 bound alone sets the window, so it grows back within the list (the default's limiter may hold it).
    const long = caseArb(variant, { long: true, limits: false, parallel: fc.constantFrom(8, undefined), pageSize: fc.constant(5) });
    // 6 runs at the fixed seed: the 6th grows a window while slices wait (4 caught nothing once the planner's cuts changed).
    await fc.assert(fc.asyncProperty(long, check), { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true });
  });
});
