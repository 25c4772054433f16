/**
 * The scheduler's window on its own: how it grows back after a 429. The whole runs against a
 * service that refuses are tested end to end in parallel.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GROWTH, Scheduler } from '../src/api/scheduler.js';
import { fakeClock } from './helpers.js';

describe('Scheduler: growing back after a 429', () => {
  /** Two tasks at once, the first refused (429, Retry-After 1 s) once: the window halves. */
  async function refuseOnce(scheduler: Scheduler): Promise<void> {
    let refused = false;
    const refusing = (slot: { throttle?: ((waitMs: number) => Promise<boolean>) | undefined }) => async () => {
      if (!refused && slot.throttle) {
        refused = true;
        assert.equal(await slot.throttle(1000), true);
      }
    };
    let release: () => void = () => undefined;
    const other = scheduler.run(1, () => new Promise<void>((resolve) => (release = resolve)));
    await scheduler.run(0, (slot) => refusing(slot)());
    release();
    await other;
  }

  async function answers(scheduler: Scheduler, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await scheduler.run(0, async () => undefined);
  }

  it('takes GROWTH times the window of answers to grow by one, twice that towards a window a 429 met, four times after two', async () => {
    const clock = fakeClock();
    const trace: string[] = [];
    const scheduler = new Scheduler({ parallel: 4, now: clock.now, sleep: clock.sleep, trace: (line) => trace.push(line.trim()) });
    // A 429 at 4 halves the window to 2; it grows to 3 as usual, and to 4 after `toFour` answers.
    for (const toFour of [GROWTH * 3 * 2, GROWTH * 3 * 4]) {
      trace.length = 0;
      await refuseOnce(scheduler);
      assert.equal(scheduler.window, 2);
      await answers(scheduler, GROWTH * 2 + toFour);
      assert.equal(scheduler.window, 4);
      assert.deepEqual(trace.filter((line) => /answered/.test(line)), [
        `parallel: 2 → 3 requests in flight (${GROWTH * 2} answered in a row)`,
        `parallel: 3 → 4 requests in flight (${toFour} answered in a row)`,
      ]);
    }
  });
});
