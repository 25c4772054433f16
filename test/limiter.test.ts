/**
 * The adaptive limiter: its decision as a pure function of a round's samples (a table of cases), runs of rounds against
 * model services, and the scheduler that uses it on an injected clock against a service that serves one request at a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, Rounds, startState, waiting, type LimiterState, type Sample } from '../src/api/limiter.js';
import { GROWTH, Scheduler } from '../src/api/scheduler.js';
import { fakeClock } from './helpers.js';

/** A round at `limit`: its mean latency and the run's lowest, ms; throughput by Little's law. */
const sample = (limit: number, latencyMs: number, lowestLatencyMs: number, full = true): Sample => ({
  limit,
  latencyMs,
  throughput: (1000 * limit) / latencyMs,
  full,
  lowestLatencyMs,
});
const at = (limit: number, ceiling = 8): LimiterState => ({ ...startState(ceiling), limit });

describe('limiter: one decision', () => {
  const table: Array<[string, LimiterState, Sample, number, string | undefined]> = [
    ['at the ceiling, nothing waiting: kept', at(8), sample(8, 50, 50), 8, undefined],
    ['a service 50 ms away, a little jitter (0.9 of 8 waiting): kept', at(8), sample(8, 56, 50), 8, undefined],
    ['a round not full says nothing, however much waited', at(8), sample(8, 400, 50, false), 8, undefined],
    ['a round measured at another limit than the state now has says nothing', at(4), sample(8, 400, 50), 4, undefined],
    [
      'a service that serves one at a time (7 of 8 waiting): down to those served and one more',
      at(8),
      sample(8, 40, 5),
      2,
      '7.0 of 8 waiting: latency 40 ms, lowest 5 ms',
    ],
    ['a saturated service (7.1 of 8 waiting): down to 2', at(8), sample(8, 69, 7.5), 2, '7.1 of 8 waiting: latency 69 ms, lowest 8 ms'],
    ['half the window waiting is not more than half: kept', at(8), sample(8, 100, 50), 8, undefined],
    ['five of eight waiting: down to the three served and one more', at(8), sample(8, 80, 30), 4, '5.0 of 8 waiting: latency 80 ms, lowest 30 ms'],
    ['just past half waiting: down to the four served and one more', at(8), sample(8, 101, 50), 5, '4.0 of 8 waiting: latency 101 ms, lowest 50 ms'],
    ['at 2, one waiting (a service serving one): kept, no swing to 1 and back', at(2), sample(2, 10, 5), 2, undefined],
    ['at 1 nothing can wait: one more', at(1), sample(1, 5, 5), 2, '0.0 of 1 waiting: latency 5 ms, lowest 5 ms'],
    ['below the ceiling, under one waiting: one more', at(5), sample(5, 54, 50), 6, '0.4 of 5 waiting: latency 54 ms, lowest 50 ms'],
    ['one waiting or more, not half: kept', at(5), sample(5, 65, 50), 5, undefined],
    ['at the ceiling nothing goes past it', at(3, 3), sample(3, 50, 50), 3, undefined],
    [
      "a lowest latency above the round's (a first slow answer) counts as nothing waiting",
      at(4),
      sample(4, 40, 60),
      5,
      '0.0 of 4 waiting: latency 40 ms, lowest 60 ms',
    ],
  ];
  for (const [name, state, round, limit, why] of table) {
    it(name, () => {
      const decision = decide(state, round);
      assert.equal(decision.state.limit, limit, JSON.stringify({ state, round, decision }));
      assert.equal(decision.why, why);
    });
  }

  it('the queue estimate is limit × (1 − lowest ÷ latency)', () => {
    assert.equal(waiting(sample(8, 40, 10)), 6);
    assert.equal(waiting(sample(8, 10, 10)), 0);
  });
});

describe('limiter: rounds against model services', () => {
  /**
   * Runs `rounds` rounds against a service whose latency at each limit is `latency(limit)`, and `latency(1)` for a request
   * alone (the run's lowest); a full window all along.
   */
  function run(latency: (limit: number) => number, rounds: number): { limits: number[]; lines: string[] } {
    let state = startState(8);
    const limits: number[] = [];
    const lines: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const decision = decide(state, sample(state.limit, latency(state.limit), latency(1)));
      if (decision.why) lines.push(`in flight ${state.limit} → ${decision.state.limit}: ${decision.why}`);
      state = decision.state;
      limits.push(state.limit);
    }
    return { limits, lines };
  }

  it('a service 50 ms away: nothing queues, so 8 stay in flight, and nothing is said', () => {
    const { limits, lines } = run(() => 50, 20);
    assert.deepEqual(new Set(limits), new Set([8]));
    assert.deepEqual(lines, []);
  });

  it('a service 50 ms away that serves 4 at once (10 ms more each past 4): 8 stay, its throughput the highest', () => {
    const { limits } = run((limit) => 50 + 10 * Math.max(0, limit - 4), 20);
    assert.deepEqual(new Set(limits), new Set([8]));
  });

  it('a service that serves 2 at once (5 ms each): down to 3 in one round, where it stays', () => {
    const { limits, lines } = run((limit) => 5 * Math.max(1, limit / 2), 20);
    assert.deepEqual(lines, ['in flight 8 → 3: 6.0 of 8 waiting: latency 20 ms, lowest 5 ms']);
    assert.deepEqual(new Set(limits), new Set([3]));
  });

  it('a service that serves one at a time (5 ms each): down to 2 in one round, where it stays', () => {
    const { limits, lines } = run((limit) => 5 * limit, 40);
    assert.deepEqual(lines, ['in flight 8 → 2: 7.0 of 8 waiting: latency 40 ms, lowest 5 ms']);
    assert.deepEqual(new Set(limits), new Set([2]));
  });
});

describe('limiter: a round of answers', () => {
  it('measures the mean in flight over the mean latency, from the answers to requests granted in the round', () => {
    const rounds = new Rounds(0);
    rounds.inFlightNow(0, 2);
    assert.equal(rounds.answered(20, rounds.id, 20, 2), undefined);
    rounds.inFlightNow(20, 2);
    assert.equal(rounds.answered(40, rounds.id - 1, 20, 2), undefined, 'an answer of an earlier round');
    assert.equal(rounds.answered(40, rounds.id, 40, 2), undefined, 'fewer than 4 answers');
    assert.equal(rounds.answered(50, rounds.id, 30, 2), undefined);
    // The lowest latency is any answer's of the run, an earlier round's too: here 20 ms.
    assert.deepEqual(rounds.answered(60, rounds.id, 30, 2), { limit: 2, latencyMs: 30, throughput: (1000 * 2) / 30, full: true, lowestLatencyMs: 20 });
  });
});

describe('Scheduler: adaptive, on the injected clock', () => {
  /** 200 tasks against a service that serves one request at a time, 10 ms each, on a fake clock. */
  async function serial(adaptive: boolean): Promise<{ trace: string[]; window: number; mostInFlight: number }> {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel: 8, adaptive, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    const queue: Array<() => void> = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const tasks = Array.from({ length: 200 }, (_, i) =>
      scheduler.run(i, async () => {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise<void>((resolve) => queue.push(resolve));
        inFlight--;
      }),
    );
    let done = false;
    const all = Promise.all(tasks).then(() => (done = true));
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      const next = queue.shift();
      if (next === undefined) continue;
      clock.advance(10);
      next();
    }
    await all;
    return { trace, window: scheduler.window, mostInFlight };
  }

  it('the default comes down from more in flight than the service serves, and says why under --verbose', async () => {
    const { trace, window } = await serial(true);
    // The first round's requests queued behind one another from the start: 10 ms to 80 ms, 45 on average.
    assert.deepEqual(trace, [
      'in flight 8 → 3: 6.2 of 8 waiting: latency 45 ms, lowest 10 ms',
      'in flight 3 → 2: 2.0 of 3 waiting: latency 30 ms, lowest 10 ms',
    ]);
    assert.equal(window, 2);
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
