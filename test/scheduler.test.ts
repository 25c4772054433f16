/**
 * The scheduler on its own: priorities, Ctrl-C, how its window halves on a 429 and grows back. The whole runs against a
 * service that refuses are tested end to end in parallel.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InterruptedError } from '../src/core/errors.js';
import { GROWTH, Scheduler } from '../src/api/scheduler.js';
import { fakeClock } from './helpers.js';

/** Resolves once `count` tasks have called it: every request of a burst is in flight before the first answer. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === count) open();
    return opened;
  };
}

describe('Scheduler: a burst of 429s', () => {
  /**
   * `tasks` at once (all `parallel` allow unless given), the last `refused` of them refused once (429, Retry-After 1 s), as a
   * service that takes the others refuses.
   */
  async function burst(
    parallel: number,
    refused: number,
    tasks = parallel,
  ): Promise<{ window: number; trace: string[]; slept: number[]; scheduler: Scheduler }> {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    const together = barrier(tasks);
    await Promise.all(
      Array.from({ length: tasks }, (_, i) =>
        scheduler.run(i, async (slot) => {
          await together();
          if (i >= tasks - refused) assert.equal(await slot.throttle?.(1000, 429), true);
        }),
      ),
    );
    return { window: scheduler.window, trace, slept: clock.slept, scheduler };
  }

  it('one 429 among 8 in flight halves the window, as TCP does for a loss', async () => {
    const { window, trace, slept } = await burst(8, 1);
    assert.equal(window, 4);
    assert.deepEqual(trace, ['in flight 8 → 4: 429 too many requests; every request waits 1000 ms']);
    assert.deepEqual(slept, [1000]);
  });

  it('the 429s of one burst halve it at the first, then take it down to what the service held: 6 of 8 refused, 2', async () => {
    const { window, trace } = await burst(8, 6);
    assert.equal(window, 2);
    assert.deepEqual(trace, [
      'in flight 8 → 4: 429 too many requests; every request waits 1000 ms',
      'in flight 4 → 3: 429 too many requests, 5 of 8 in flight refused',
      'in flight 3 → 2: 429 too many requests, 6 of 8 in flight refused',
    ]);
    assert.equal((await burst(8, 3)).window, 4, 'it held 5: half stays');
    assert.equal((await burst(8, 8)).window, 2, 'it held none: 2 on this count (a refusal may be counted in flight still), 1 at the next');
    assert.equal((await burst(3, 2)).window, 2, 'a probe of 3 with two refused: 2, not 1');
    assert.equal((await burst(2, 2)).window, 1);
  });

  it('a 429 to fewer in flight than the window: the window goes to what the service held, not to half of one never sent', async () => {
    // A first round of three (a union's two first pages and a cut slice) against a service that holds 2: 8 → 4 met a 429 again.
    const { window, trace } = await burst(8, 1, 3);
    assert.equal(window, 2);
    assert.deepEqual(trace, ['in flight 8 → 2: 429 too many requests, 1 of 3 in flight refused; every request waits 1000 ms']);
    assert.equal((await burst(8, 1, 6)).window, 4, 'it held 5: half');
    assert.equal((await burst(8, 2, 3)).window, 2, 'two of 3 refused: 2 on this count, as ever');
  });

  it('grows back past what the service held as slowly as past a cut: twice the answers in a row', async () => {
    const { scheduler, trace } = await burst(8, 6);
    while (scheduler.window < 3) await scheduler.run(0, async () => undefined);
    assert.equal(trace.at(-1), `in flight 2 → 3: ${GROWTH * 2 * 2} answered in a row`);
  });

  it('a refused request sent again and refused again halves it again', async () => {
    const clock = fakeClock();
    const scheduler = new Scheduler({ parallel: 8, now: clock.now, sleep: clock.sleep });
    let release = (): void => undefined;
    const other = scheduler.run(0, () => new Promise<void>((resolve) => (release = resolve)));
    await scheduler.run(1, async (slot) => {
      // 8 → 2 (two in flight: it held the other), then 2 → 1, once the other is done.
      assert.equal(await slot.throttle?.(1000, 429), true);
      assert.equal(scheduler.window, 2);
      const again = slot.throttle?.(1000, 429);
      release();
      assert.equal(await again, true);
    });
    await other;
    assert.equal(scheduler.window, 1);
  });
});

describe('Scheduler: a 429 that is not ours', () => {
  it("alone in flight, or with --parallel 1, the transport's own retry rules apply", async () => {
    const clock = fakeClock();
    const scheduler = new Scheduler({ parallel: 4, now: clock.now, sleep: clock.sleep });
    assert.equal(await scheduler.run(0, (slot) => slot.throttle?.(1000, 429) ?? Promise.resolve(undefined)), false);
    assert.equal(scheduler.window, 4);
    assert.deepEqual(clock.slept, []);
    const one = new Scheduler({ parallel: 1, now: clock.now, sleep: clock.sleep });
    assert.equal(await one.run(0, async (slot) => slot.throttle), undefined);
  });
});

describe('Scheduler: 429s that come late', () => {
  it('a 429 of an older burst only lengthens the pause: it neither lowers the window nor counts against the burst after it', async () => {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel: 8, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    let refuse: Array<() => void> = [];
    const gate = (): Promise<void> => new Promise((resolve) => refuse.push(resolve));
    // Burst A: 8 in flight; the first is refused at once (8 → 4), two others are refused late.
    const late: Array<Promise<unknown>> = [];
    const together = barrier(8);
    const first = Array.from({ length: 8 }, (_, i) =>
      scheduler.run(i, async (slot) => {
        await together();
        if (i === 0) return slot.throttle?.(1000, 429);
        if (i === 1 || i === 2) {
          await gate();
          return slot.throttle?.(1000, 429);
        }
        return undefined;
      }),
    );
    await first[0];
    assert.equal(scheduler.window, 4);
    // Burst B, at 4: one of its requests is refused (4 → 2).
    const second = Array.from({ length: 4 }, (_, i) => scheduler.run(10 + i, async (slot) => (i === 0 ? slot.throttle?.(1000, 429) : undefined)));
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(scheduler.window, 2);
    // Burst A's late 429s: the window stays 2, and grows back to 3 after the usual answers.
    for (const release of refuse) release();
    refuse = [];
    late.push(...first, ...second);
    await Promise.all(late);
    assert.equal(scheduler.window, 2, trace.join('\n'));
    for (let i = 0; i < GROWTH * 2; i++) await scheduler.run(0, async () => undefined);
    assert.equal(scheduler.window, 3, trace.join('\n'));
  });
});

describe('Scheduler: a request sent after a refused one', () => {
  it('its 429 (sent before the cut, the refused one still held by the service) does not cut again', async () => {
    // A service that takes 3: of 4 sent at once the 4th is refused; the 1st ends, a 5th is sent
    // while the service still holds the refused 4th, and is refused too.
    const clock = fakeClock();
    const scheduler = new Scheduler({ parallel: 4, now: clock.now, sleep: clock.sleep });
    const together = barrier(4);
    let answerFourth: () => void = () => undefined;
    const fourthAnswered = new Promise<void>((resolve) => (answerFourth = resolve));
    let firstDone: () => void = () => undefined;
    const firstEnded = new Promise<void>((resolve) => (firstDone = resolve));
    const tasks = Array.from({ length: 4 }, (_, i) =>
      scheduler.run(i, async (slot) => {
        await together();
        if (i === 0) return firstDone();
        if (i === 3) {
          await fourthAnswered;
          return slot.throttle?.(1000, 429);
        }
        return firstEnded;
      }),
    );
    await firstEnded;
    const fifth = scheduler.run(4, async (slot) => {
      answerFourth();
      await new Promise((resolve) => setImmediate(resolve));
      return slot.throttle?.(1000, 429);
    });
    await Promise.all([...tasks, fifth]);
    assert.equal(scheduler.window, 2);
    for (let i = 0; i < GROWTH * 2; i++) await scheduler.run(0, async () => undefined);
    assert.equal(scheduler.window, 3);
  });
});

describe('Scheduler: growing back after a 429', () => {
  /** `others` tasks (one unless given) and one more at once, the last refused (429, Retry-After 1 s) once: the window halves, not below what they held. */
  async function refuseOnce(scheduler: Scheduler, others = 1): Promise<void> {
    const releases: Array<() => void> = [];
    const held = Array.from({ length: others }, () => scheduler.run(1, () => new Promise<void>((resolve) => releases.push(resolve))));
    await scheduler.run(0, async (slot) => {
      const resent = slot.throttle?.(1000, 429);
      // The others answer during the pause: the window may now be below what they hold.
      for (const release of releases) release();
      assert.equal(await resent, true);
    });
    await Promise.all(held);
  }

  async function answers(scheduler: Scheduler, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await scheduler.run(0, async () => undefined);
  }

  it('takes GROWTH times the window of answers in a row to grow by one, twice that towards a window a 429 met, four times after two', async () => {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel: 4, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    // A 429 at 4 halves the window to 2; it grows to 3 as usual, and to 4 after `toFour` answers.
    // (refuseOnce's own two tasks answer after its 429.)
    for (const toFour of [GROWTH * 3 * 2, GROWTH * 3 * 4]) {
      trace.length = 0;
      await refuseOnce(scheduler);
      await answers(scheduler, GROWTH * 2 - 3);
      assert.equal(scheduler.window, 2);
      await answers(scheduler, 1 + toFour - 1);
      assert.equal(scheduler.window, 3);
      await answers(scheduler, 1);
      assert.equal(scheduler.window, 4);
      assert.deepEqual(
        trace.filter((line) => /answered/.test(line)),
        [`in flight 2 → 3: ${GROWTH * 2} answered in a row`, `in flight 3 → 4: ${toFour} answered in a row`],
      );
    }
  });

  it('a 429 starts the count again', async () => {
    const clock = fakeClock();
    const scheduler = new Scheduler({ parallel: 8, now: clock.now, sleep: clock.sleep });
    // 5 in flight: it held 4.
    await refuseOnce(scheduler, 4);
    await answers(scheduler, GROWTH * 4 - 6);
    assert.equal(scheduler.window, 4);
    // One answer short of 5, refused instead (4 → 2): the answers counted at 4 are gone.
    await refuseOnce(scheduler);
    await answers(scheduler, GROWTH * 2 - 3);
    assert.equal(scheduler.window, 2);
    await answers(scheduler, 1);
    assert.equal(scheduler.window, 3);
  });
});

describe('Scheduler: Ctrl-C', () => {
  it('tasks not started yet reject with InterruptedError; those under way finish', async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const scheduler = new Scheduler({ parallel: 1, now: clock.now, sleep: clock.sleep, signal: controller.signal });
    let release = (): void => undefined;
    const gate = new Promise<string>((resolve) => (release = () => resolve('done')));
    const running = scheduler.run(0, () => gate);
    const waiting = assert.rejects(
      scheduler.run(0, async () => 'never'),
      InterruptedError,
    );
    controller.abort();
    release();
    assert.equal(await running, 'done');
    await waiting;
    await assert.rejects(
      scheduler.run(0, async () => 'never'),
      InterruptedError,
    );
  });
});

describe('Scheduler: priorities', () => {
  it('lower first, then in order of arrival', async () => {
    const clock = fakeClock();
    const scheduler = new Scheduler({ parallel: 1, now: clock.now, sleep: clock.sleep });
    const order: string[] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = scheduler.run(0, () => gate);
    const runs = (
      [
        [1, 'b'],
        [-2, 'a'],
        [2, 'd'],
        [1, 'c'],
      ] as const
    ).map(([priority, name]) => scheduler.run(priority, async () => void order.push(name)));
    release();
    await Promise.all([first, ...runs]);
    assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  });
});
