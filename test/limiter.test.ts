/**
 * The adaptive limiter: its decision as a pure function of its state and a round's sample (a table of cases), runs of
 * rounds against model services, and the scheduler that uses it on an injected clock against a service that serves one
 * request at a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALM_ROUNDS, decide, Rounds, startState, waiting, type LimiterState, type Sample } from '../src/api/limiter.js';
import { GROWTH, Scheduler } from '../src/api/scheduler.js';
import { fakeClock } from './helpers.js';

/** A round at `limit`: its mean latency and the run's lowest, ms. */
const sample = (limit: number, latencyMs: number, lowestLatencyMs: number, inFlight = limit): Sample => ({ limit, latencyMs, inFlight, lowestLatencyMs });
const at = (limit: number, more: Partial<LimiterState> = {}): LimiterState => ({ ...startState(8), limit, ...more });

describe('limiter: one decision', () => {
  type Case = { name: string; state: LimiterState; round: Sample; limit: number; why?: string; calm?: number };
  const table: Case[] = [
    { name: 'at the ceiling, nothing waiting: kept', state: at(8), round: sample(8, 50, 50), limit: 8, calm: 1 },
    { name: 'a service 50 ms away, a little jitter (0.9 of 8 waiting): kept', state: at(8), round: sample(8, 56, 50), limit: 8, calm: 1 },
    { name: 'a round not full, calm, does not grow the limit', state: at(4, { calm: 1, queuedAt: { 5: 1 } }), round: sample(4, 50, 50, 2), limit: 4, calm: 1 },
    {
      name: 'a round not full is judged at what was in flight: 5 of 8, 4.4 of them waiting, down to 2',
      state: at(8),
      round: sample(8, 400, 50, 5),
      limit: 2,
      why: '4.4 of 5 waiting: latency 400 ms, lowest 50 ms',
    },
    { name: 'a round at another window (a 429 bound below the limit) says nothing of the limit', state: at(4), round: sample(8, 400, 50), limit: 4, calm: 0 },
    {
      name: 'a service that serves one at a time (7 of 8 waiting): down to those served and one more',
      state: at(8),
      round: sample(8, 40, 5),
      limit: 2,
      why: '7.0 of 8 waiting: latency 40 ms, lowest 5.0 ms',
    },
    {
      name: 'a saturated service (7.1 of 8 waiting): down to 2',
      state: at(8),
      round: sample(8, 69, 7.5),
      limit: 2,
      why: '7.1 of 8 waiting: latency 69 ms, lowest 7.5 ms',
    },
    { name: 'half the window waiting is not past BETA: kept, and not calm', state: at(8, { calm: 1 }), round: sample(8, 100, 50), limit: 8, calm: 0 },
    {
      name: 'five of eight waiting: down to the three served and one more',
      state: at(8),
      round: sample(8, 80, 30),
      limit: 4,
      why: '5.0 of 8 waiting: latency 80 ms, lowest 30 ms',
    },
    { name: 'at 2, one waiting (a service serving one, exactly): kept', state: at(2), round: sample(2, 10, 5), limit: 2, calm: 0 },
    { name: 'at 2, more than one waiting: down to 1', state: at(2), round: sample(2, 15, 5), limit: 1, why: '1.3 of 2 waiting: latency 15 ms, lowest 5.0 ms' },
    {
      name: 'one slow round after a steady one is smoothed: half of it, not a queue',
      state: at(8, { smoothedMs: 50 }),
      round: sample(8, 150, 50),
      limit: 8,
      calm: 0,
    },
    {
      name: 'the same round as the first at its limit decides alone',
      state: at(8),
      round: sample(8, 150, 50),
      limit: 4,
      why: '5.3 of 8 waiting: latency 150 ms, lowest 50 ms',
    },
    {
      name: 'a second slow round: the smoothed latency past BETA, down',
      state: at(8, { smoothedMs: 100 }),
      round: sample(8, 120, 50),
      limit: 5,
      why: '4.4 of 8 waiting: latency 110 ms, lowest 50 ms',
    },
    { name: 'at 1, one calm round: kept, the first of CALM_ROUNDS', state: at(1), round: sample(1, 5, 5), limit: 1, calm: 1 },
    {
      name: `at 1, the ${CALM_ROUNDS}nd calm round in a row: one more`,
      state: at(1, { calm: CALM_ROUNDS - 1 }),
      round: sample(1, 5.5, 5),
      limit: 2,
      why: `0.1 of 1 waiting, ${CALM_ROUNDS} rounds in a row: latency 5.5 ms, lowest 5.0 ms`,
    },
    { name: 'at 1, a quarter or more of the latency over the lowest is not calm', state: at(1, { calm: 1 }), round: sample(1, 7, 5), limit: 1, calm: 0 },
    {
      name: 'at 1, after 2 had queued once: twice the calm rounds before 2 again',
      state: at(1, { calm: CALM_ROUNDS, queuedAt: { 2: 1 } }),
      round: sample(1, 5, 5),
      limit: 1,
      calm: CALM_ROUNDS + 1,
    },
    {
      name: 'at 1, after 2 had queued once, the 4th calm round: one more',
      state: at(1, { calm: 2 * CALM_ROUNDS - 1, queuedAt: { 2: 1 } }),
      round: sample(1, 5, 5),
      limit: 2,
      why: `0.0 of 1 waiting, ${2 * CALM_ROUNDS} rounds in a row: latency 5.0 ms, lowest 5.0 ms`,
    },
    { name: 'one waiting of 5, under BETA, over ALPHA: kept, not calm', state: at(5, { calm: 1 }), round: sample(5, 70, 50), limit: 5, calm: 0 },
    { name: 'at the ceiling nothing goes past it', state: { ...startState(3), calm: 5 }, round: sample(3, 50, 50), limit: 3, calm: 6 },
    {
      name: "a lowest latency above the round's (a first slow answer) counts as nothing waiting",
      state: at(4, { calm: 1 }),
      round: sample(4, 40, 60),
      limit: 5,
      why: '0.0 of 4 waiting, 2 rounds in a row: latency 40 ms, lowest 60 ms',
    },
  ];
  for (const { name, state, round, limit, why, calm } of table) {
    it(name, () => {
      const decision = decide(state, round);
      const shown = JSON.stringify({ state, round, decision });
      assert.equal(decision.state.limit, limit, shown);
      assert.equal(decision.why, why, shown);
      if (calm !== undefined) assert.equal(decision.state.calm, calm, shown);
      // A change of the limit starts its measures over.
      if (limit !== state.limit) assert.deepEqual([decision.state.calm, decision.state.smoothedMs], [0, undefined], shown);
    });
  }

  it('a limit that came down for queueing marks the one above it: growing back there waits twice as long each time', () => {
    const once = decide(at(2), sample(2, 15, 5)).state;
    assert.deepEqual(once.queuedAt, { 2: 1 });
    const twice = decide({ ...once, limit: 2 }, sample(2, 15, 5)).state;
    assert.deepEqual(twice.queuedAt, { 2: 2 });
    assert.deepEqual(decide(at(8), sample(8, 40, 5)).state.queuedAt, { 3: 1 });
  });

  it('the queue estimate is limit × (1 − lowest ÷ latency)', () => {
    assert.equal(waiting(8, 40, 10), 6);
    assert.equal(waiting(8, 10, 10), 0);
    assert.equal(waiting(8, 10, 20), 0);
  });
});

describe('limiter: rounds against model services', () => {
  /** A deterministic jitter for round `i`: 0 to `most` of the latency, in tenths (the same every run). */
  const jitter = (i: number, most: number): number => (((i * 7) % 10) / 10) * most;
  /**
   * Runs `rounds` rounds against a service whose mean latency at each limit in round i is `latency(limit, i)` and whose
   * lowest is `lowest`; a full window all along. Its limits after each round, and its --verbose lines.
   */
  function run(latency: (limit: number, i: number) => number, lowest: number, rounds: number): { limits: number[]; lines: string[] } {
    let state = startState(8);
    const limits: number[] = [];
    const lines: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const decision = decide(state, sample(state.limit, latency(state.limit, i), lowest));
      if (decision.why) lines.push(`in flight ${state.limit} → ${decision.state.limit}: ${decision.why}`);
      state = decision.state;
      limits.push(state.limit);
    }
    return { limits, lines };
  }
  /** The rounds at which the limit changed. */
  const changes = (limits: number[]): number[] => limits.flatMap((limit, i) => (i > 0 && limit !== limits[i - 1] ? [i] : []));

  it('a service 50 ms away, its latency up to 30 % over the lowest from round to round: 8 stay in flight, and nothing is said', () => {
    const { limits, lines } = run((_, i) => 50 * (1 + jitter(i, 0.3)), 50, 200);
    assert.deepEqual(new Set(limits), new Set([8]));
    assert.deepEqual(lines, []);
  });

  it('a service 50 ms away that serves 4 at once (10 ms more each past 4): 8 stay', () => {
    const { limits } = run((limit) => 50 + 10 * Math.max(0, limit - 4), 50, 50);
    assert.deepEqual(new Set(limits), new Set([8]));
  });

  it('a service that serves 2 at once (5 ms each): down to 3 in one round, where it stays', () => {
    const { limits, lines } = run((limit) => 5 * Math.max(1, limit / 2), 5, 100);
    assert.deepEqual(lines, ['in flight 8 → 3: 6.0 of 8 waiting: latency 20 ms, lowest 5.0 ms']);
    assert.deepEqual(new Set(limits), new Set([3]));
  });

  it('a service that serves one at a time (5 ms each): down to 2 in one round, where it stays', () => {
    const { limits, lines } = run((limit) => 5 * limit, 5, 100);
    assert.deepEqual(lines, ['in flight 8 → 2: 7.0 of 8 waiting: latency 40 ms, lowest 5.0 ms']);
    assert.deepEqual(new Set(limits), new Set([2]));
  });

  it('one at a time, each round up to 60 % over (the scan server): down to 1, and the probes of 2 ever rarer, so it settles', () => {
    const { limits } = run((limit, i) => 2 * limit * (1 + jitter(i, 0.6)), 2, 400);
    const probes = changes(limits).filter((i) => limits[i] === 2);
    assert.ok(
      limits.slice(3).every((limit) => limit <= 2),
      JSON.stringify(limits),
    );
    // Each probe of 2 waits twice the calm rounds of the one before: about log2(rounds) of them.
    assert.ok(probes.length <= 7, JSON.stringify(probes));
    const gaps = probes.slice(1).map((p, i) => p - (probes[i] as number));
    assert.ok(
      gaps.every((gap, i) => i === 0 || gap > (gaps[i - 1] as number)),
      JSON.stringify(gaps),
    );
    assert.equal(limits.slice(200).filter((limit) => limit === 2).length <= 1, true, JSON.stringify(limits.slice(200)));
  });
});

describe('limiter: a round of answers', () => {
  it('measures the mean latency of the answers to requests granted in the round and its mean in flight; the opening makes none', () => {
    const rounds = new Rounds(0);
    rounds.inFlightNow(0, 2);
    // The first answer ends the opening (round 0): its requests are not measured, their latency counts as the lowest.
    assert.equal(rounds.answered(20, 0, 20, 2), undefined);
    assert.equal(rounds.id, 1);
    assert.equal(rounds.answered(30, 0, 30, 2), undefined, 'an answer of the opening');
    assert.equal(rounds.answered(40, rounds.id, 40, 2), undefined, 'fewer answers than in flight');
    assert.equal(rounds.answered(50, rounds.id, 30, 2), undefined, 'under ROUND_MS');
    assert.deepEqual(rounds.answered(60, rounds.id, 30, 2), { limit: 2, latencyMs: 100 / 3, inFlight: 2, lowestLatencyMs: 20 });
  });
});

describe('Scheduler: adaptive, on the injected clock', () => {
  /** `count` tasks against a service that serves one request at a time, the i-th answer `serviceMs(i)` after the one before, on a fake clock. */
  async function serial(
    adaptive: boolean,
    count = 200,
    serviceMs = (_: number): number => 10,
    gateway = Infinity,
  ): Promise<{ trace: string[]; window: number; mostInFlight: number; windows: number[] }> {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel: 8, adaptive, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    const queue: Array<() => void> = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const windows: number[] = [];
    const tasks = Array.from({ length: count }, (_, i) =>
      scheduler.run(i, async (slot) => {
        // A gateway in front (nginx's limit_conn) refuses past `gateway` in flight with a 503, no Retry-After.
        while (inFlight >= gateway && (await slot.throttle?.(0, 503)) === true);
        windows.push(scheduler.window);
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise<void>((resolve) => queue.push(resolve));
        inFlight--;
      }),
    );
    let done = false;
    const all = Promise.all(tasks).then(() => (done = true));
    for (let answered = 0; !done;) {
      await new Promise((resolve) => setImmediate(resolve));
      const next = queue.shift();
      if (next === undefined) continue;
      clock.advance(serviceMs(answered++));
      next();
    }
    await all;
    return { trace, window: scheduler.window, mostInFlight, windows };
  }

  it('the default comes down from more in flight than the service serves, and says why under --verbose', async () => {
    const { trace, window } = await serial(true);
    // The opening's 8 are not measured; the first round's waited behind them and one another: 80 ms each.
    assert.deepEqual(trace, ['in flight 8 → 2: 7.0 of 8 waiting: latency 80 ms, lowest 10 ms']);
    assert.equal(window, 2);
  });

  it('one at a time, 10 to 19 ms an answer: down to 1, where a window of one, its latency a third over the lowest, stays', async () => {
    const { trace, windows } = await serial(true, 3000, (i) => 10 + ((i * 7) % 10));
    assert.deepEqual(trace, [
      'in flight 8 → 2: 7.3 of 8 waiting: latency 117 ms, lowest 10 ms',
      'in flight 2 → 1: 1.3 of 2 waiting: latency 29 ms, lowest 10 ms',
    ]);
    assert.deepEqual(new Set(windows.slice(100)), new Set([1]));
  });

  it('one at a time, 10 to 12 ms an answer: at 1 calm, so 2 is tried, and queues; each try waits twice as long (the window settles)', async () => {
    const { trace, windows } = await serial(true, 3000, (i) => 10 + (i % 3));
    const tries = trace.filter((line) => line.startsWith('in flight 1 → 2')).map((line) => Number(/(\d+) rounds in a row/.exec(line)?.[1]));
    assert.deepEqual(tries, [4, 8, 16, 32, 64, 128, 256], trace.join('\n'));
    assert.ok(
      trace.slice(2).every((line, i) => line.startsWith(i % 2 === 0 ? 'in flight 1 → 2' : 'in flight 2 → 1: 1.0 of 2 waiting')),
      trace.join('\n'),
    );
    // Of the last 1,000 requests, those sent at 2: the last try's round.
    assert.ok(windows.slice(-1000).filter((window) => window > 1).length <= 10);
  });

  it("behind a gateway's 503 bound of 2, the service queuing what it is sent: the limiter judges the bound's rounds, down to 1", async () => {
    // Before, no round below the limiter's limit was judged: the window went 2, 3, 2, 3 … with the bound (nginx limit_conn 2:
    // 2.4x --parallel 1 on a saturated service).
    const { trace, windows } = await serial(true, 3000, (i) => 10 + ((i * 7) % 10), 2);
    assert.deepEqual(trace.slice(0, 3), [
      'in flight 8 → 4: 503 service unavailable',
      'in flight 4 → 3: 503 service unavailable, 5 of 8 in flight refused',
      'in flight 3 → 2: 503 service unavailable, 6 of 8 in flight refused',
    ]);
    assert.match(trace[3] ?? '', /^in flight 2 → 1: \d\.\d of 2 waiting: latency \d+ ms, lowest 10 ms$/, trace.join('\n'));
    assert.ok(windows.slice(-1000).filter((window) => window > 1).length <= 20, trace.join('\n'));
  });

  it('a --parallel the user chose is kept', async () => {
    const { trace, window, mostInFlight } = await serial(false);
    assert.deepEqual(trace, []);
    assert.equal(window, 8);
    assert.equal(mostInFlight, 8);
  });
});

describe('Scheduler: adaptive, and a 429', () => {
  /** The default (up to 8) with five tasks in flight, one of them refused once (429, Retry-After 1 s); its --verbose lines. */
  async function refusedOnce(): Promise<{ scheduler: Scheduler; trace: string[] }> {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel: 8, adaptive: true, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    assert.equal(scheduler.window, 8);
    const releases: Array<() => void> = [];
    const others = Array.from({ length: IN_FLIGHT - 1 }, () => scheduler.run(0, () => new Promise<void>((resolve) => releases.push(resolve))));
    await scheduler.run(1, async (slot) => {
      const refused = slot.throttle?.(1000, 429);
      for (const release of releases) release();
      assert.equal(await refused, true);
    });
    await Promise.all(others);
    return { scheduler, trace };
  }
  /** Tasks in flight at the 429: the service held 4 of them, as many as half the window. */
  const IN_FLIGHT = 5;

  it('a 429 halves what is in flight from the ceiling the limiter starts at', async () => {
    const { scheduler, trace } = await refusedOnce();
    assert.equal(scheduler.window, 4);
    assert.deepEqual(trace, ['in flight 8 → 4: 429 too many requests; every request waits 1000 ms']);
  });

  it('answers in a row with nothing waiting: the window grows back past the cut as the 429 bound allows, no faster', async () => {
    const { scheduler, trace } = await refusedOnce();
    // The tasks above answered too: GROWTH × 4 in a row in all.
    for (let i = IN_FLIGHT; i < GROWTH * 4 - 1; i++) await scheduler.run(0, async () => undefined);
    assert.equal(scheduler.window, 4);
    await scheduler.run(0, async () => undefined);
    assert.equal(scheduler.window, 5);
    assert.deepEqual(trace, ['in flight 8 → 4: 429 too many requests; every request waits 1000 ms', `in flight 4 → 5: ${GROWTH * 4} answered in a row`]);
  });
});
