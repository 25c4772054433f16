/**
 * The adaptive limiter: its decision as a pure function of (latency, throughput) samples, a run of rounds against model
 * services, and the scheduler that uses it on an injected clock against a service that serves one request at a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, PROBE_EVERY, Rounds, startState, type LimiterState, type Sample } from '../src/api/limiter.js';
import { GROWTH, Scheduler } from '../src/api/scheduler.js';
import { fakeClock } from './helpers.js';

/** A round; `lowestLatencyMs` 1 unless given: requests queue, as at a busy service. */
const sample = (limit: number, latencyMs: number, throughput: number, full = true, lowestLatencyMs = 1): Sample => ({
  limit,
  latencyMs,
  throughput,
  full,
  lowestLatencyMs,
});
const at = (limit: number, base: Sample | undefined, extra: Partial<LimiterState> = {}): LimiterState => ({
  ...startState(8),
  limit,
  ...(base && { base }),
  ...extra,
});

describe('limiter: one decision', () => {
  const table: Array<[string, LimiterState, Sample, number, string | undefined]> = [
    ['the first round fills an idle service: it only sets the base', at(8, undefined), sample(8, 60, 130), 8, undefined],
    ['from the start, the second full round at the ceiling halves the limit', at(8, sample(8, 60, 130)), sample(8, 120, 66), 4, 'starting'],
    [
      'from the start, a second round at the ceiling as fast as the fastest answer keeps it: nothing queues, fewer would only cost',
      at(8, sample(8, 50, 160, true, 48)),
      sample(8, 52, 154, true, 48),
      8,
      undefined,
    ],
    ['a round not full says nothing', at(8, undefined), sample(8, 120, 16, false), 8, undefined],
    ['a halving that costs nothing halves again', at(4, sample(8, 80, 100)), sample(4, 40, 100), 2, 'at 4 latency down 50 %, throughput flat'],
    [
      'a halving that costs more than 30 % of the throughput it could: back to where it was',
      at(4, sample(8, 50, 160)),
      sample(4, 50, 80),
      8,
      'at 4 latency flat, throughput down 50 %',
    ],
    ['halving down to one settles there', at(1, sample(2, 20, 100)), sample(1, 10, 100), 1, undefined],
    [
      'latency up 60 %, throughput flat: back to where it was',
      at(4, sample(3, 10, 300), { starting: false }),
      sample(4, 16, 250),
      3,
      'at 4 latency up 60 %, throughput down 17 %',
    ],
    [
      'a raise that brings less than 30 % of its gain is not kept',
      at(4, sample(2, 10, 200), { starting: false }),
      sample(4, 13, 250),
      2,
      'at 4 latency up 30 %, throughput up 25 %',
    ],
    ['a raise that pays: one more again', at(4, sample(3, 50, 60), { starting: false }), sample(4, 50, 80), 5, 'at 4 latency flat, throughput up 33 %'],
    ['at the ceiling a raise that paid settles', at(8, sample(7, 50, 140), { starting: false }), sample(8, 50, 160), 8, undefined],
    [
      'one fewer that costs little: one fewer again',
      at(3, sample(4, 40, 100), { starting: false }),
      sample(3, 31, 97),
      2,
      'at 3 latency down 22 %, throughput flat',
    ],
    [
      'one fewer that costs its share: back up',
      at(7, sample(8, 50, 160), { starting: false }),
      sample(7, 50, 140),
      8,
      'at 7 latency flat, throughput down 12 %',
    ],
    ['steady rounds keep the limit', at(3, sample(3, 10, 300), { starting: false }), sample(3, 10, 300), 3, undefined],
    [
      `after ${PROBE_EVERY} steady rounds where nothing queues, one more even after one more: one fewer would only cost`,
      at(3, sample(3, 10, 300, true, 9), { starting: false, steady: PROBE_EVERY - 1, probed: 'up' }),
      sample(3, 10, 300, true, 9),
      4,
      `probing after ${PROBE_EVERY} rounds`,
    ],
    [
      `after ${PROBE_EVERY} steady rounds, one more or one fewer, in turn`,
      at(3, sample(3, 10, 300), { starting: false, steady: PROBE_EVERY - 1, probed: 'up' }),
      sample(3, 10, 300),
      2,
      `probing after ${PROBE_EVERY} rounds`,
    ],
  ];
  for (const [name, state, round, limit, why] of table) {
    it(name, () => {
      const decision = decide(state, round);
      assert.equal(decision.state.limit, limit);
      assert.equal(decision.why, why);
    });
  }
});

describe('limiter: rounds against model services', () => {
  /**
   * Runs `rounds` rounds against a service whose latency at each limit is `latency(limit)`, and `latency(1)` for a request
   * alone (the run's first answer); a full window all along.
   */
  function run(latency: (limit: number) => number, rounds: number): { limits: number[]; lines: string[] } {
    let state = startState(8);
    const limits: number[] = [];
    const lines: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const ms = latency(state.limit);
      const decision = decide(state, sample(state.limit, ms, (1000 * state.limit) / ms, true, latency(1)));
      if (decision.why) lines.push(`in flight ${state.limit} → ${decision.state.limit}: ${decision.why}`);
      state = decision.state;
      limits.push(state.limit);
    }
    return { limits, lines };
  }

  it('a service 50 ms away: nothing queues, so 8 stay in flight, with no halving and no probe of fewer', () => {
    const { limits, lines } = run(() => 50, 20);
    assert.deepEqual(new Set(limits), new Set([8]));
    assert.deepEqual(lines, []);
  });

  it('a service 50 ms away that queues past 4 in flight: comes down to 4, and probes one more from there', () => {
    const { limits, lines } = run((limit) => 50 + 10 * Math.max(0, limit - 4), 24);
    assert.deepEqual(lines.slice(0, 4), [
      'in flight 8 → 4: starting',
      'in flight 4 → 2: at 4 latency down 44 %, throughput down 10 %',
      'in flight 2 → 4: at 2 latency flat, throughput down 50 %',
      `in flight 4 → 5: probing after ${PROBE_EVERY} rounds`,
    ]);
    assert.ok(
      limits.slice(3).every((limit) => limit >= 4 && limit <= 6),
      limits.join(' '),
    );
  });

  it('a service that serves one at a time (5 ms each): halves down to 1, where it stays', () => {
    const { limits, lines } = run((limit) => 5 * limit, 40);
    assert.deepEqual(lines.slice(0, 5), [
      'in flight 8 → 4: starting',
      'in flight 4 → 2: at 4 latency down 50 %, throughput flat',
      'in flight 2 → 1: at 2 latency down 50 %, throughput flat',
      `in flight 1 → 2: probing after ${PROBE_EVERY} rounds`,
      'in flight 2 → 1: at 2 latency up 100 %, throughput flat',
    ]);
    assert.deepEqual(limits.slice(0, 4), [8, 4, 2, 1]);
    assert.ok(limits.slice(4).every((limit) => limit <= 2));
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
    assert.deepEqual(trace.slice(0, 4), [
      'in flight 8 → 4: starting',
      'in flight 4 → 2: at 4 latency down 50 %, throughput up 14 %',
      'in flight 2 → 1: at 2 latency down 50 %, throughput flat',
      `in flight 1 → 2: probing after ${PROBE_EVERY} rounds`,
    ]);
    assert.ok(window <= 2, trace.join('\n'));
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

  it("answers in a row raise the 429 bound past the limiter's 4: nothing in flight changes, so --verbose says nothing", async () => {
    const { scheduler, trace } = await refusedOnce();
    // The tasks above answered too: GROWTH × 4 in a row in all, which printed `4 → 5 requests in flight` at a window of 4.
    for (let i = IN_FLIGHT; i < GROWTH * 4; i++) await scheduler.run(0, async () => undefined);
    assert.equal(scheduler.window, 4);
    assert.deepEqual(trace, ['in flight 8 → 4: 429 too many requests; every request waits 1000 ms']);
  });
});
