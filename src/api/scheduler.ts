/**
 * The one concurrency mechanism of a command: up to a window of tasks in flight (--parallel),
 * the most urgent first (the lower priority: a number, or numbers compared one by one), each
 * holding its slot until it settles.
 *
 * The window adapts to the service as TCP's congestion window and the AWS SDK's adaptive retry
 * mode do: a 429 halves it, and more 429s of the same burst bring it down to what the service
 * took: the fewest of our requests ahead of a refused one (8 sent at once, the 3rd to 8th
 * refused: 2); every request waits out the Retry-After, and the refused request is sent
 * again without counting against --retries; the window grows back by one after GROWTH times its
 * size of answers in a row, twice that for each 429 the window it grows to has met before. So a
 * run never fails for pressure it caused itself. A 429 with one request in flight is not ours:
 * the transport's own retry rules apply, as they do with --parallel 1 (which hands requests no
 * throttle at all).
 */
import { InterruptedError } from '../core/errors.js';
import type { Throttle } from '../http/transport.js';

export interface SchedulerOptions {
  /** Most tasks in flight (--parallel). */
  parallel: number;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Ctrl-C: tasks not started yet are never started (they reject with InterruptedError). */
  signal?: AbortSignal;
  /** --verbose: one line per change of the window. */
  trace?: (line: string) => void;
}

/** What a running task passes to each of its requests. */
export interface Slot {
  readonly throttle: Throttle | undefined;
}

/** Answers in a row, per slot of the window, before it grows by one. */
export const GROWTH = 10;

/** Lower goes first; a list of numbers is compared item by item, a number is a list of one. */
export type Priority = number | readonly number[];

/** Whether `a` goes after `b`. */
export function goesAfter(a: Priority, b: Priority): boolean {
  const [x, y] = [typeof a === 'number' ? [a] : a, typeof b === 'number' ? [b] : b];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return false;
}

interface Waiter {
  priority: Priority;
  order: number;
  resolve(): void;
  reject(err: unknown): void;
}

interface Held {
  priority: Priority;
  /** The window's epoch when the slot was taken: a 429 from an older epoch does not halve it again. */
  epoch: number;
  held: boolean;
  /** Another slot was held at some moment while this one was: its requests may have crowded the service. */
  crowded: boolean;
  /** Our other requests in flight when this one was sent: all the service had of ours ahead of it, at most. */
  ahead: number;
}

export class Scheduler {
  readonly parallel: number;
  private current: number;
  private inFlight = 0;
  private readonly waiting: Waiter[] = [];
  private readonly holders = new Set<Held>();
  private order = 0;
  private pausedUntil = 0;
  private pausing = false;
  private epoch = 0;
  /**
   * The burst the window was last cut for: the fewest of our requests ahead of one of its refused
   * ones (what the service took, at most), and the lowest window marked refused for it so far.
   */
  private burst = { took: 0, lowestRefused: 0 };
  private answered = 0;
  /**
   * Windows a 429 met, and how often: growing back to one takes twice as many answers each time,
   * as TCP CUBIC slows down near the window where it last lost a packet.
   */
  private readonly refusedAt = new Map<number, number>();

  constructor(private readonly options: SchedulerOptions) {
    this.parallel = options.parallel;
    this.current = options.parallel;
    options.signal?.addEventListener('abort', () => this.dispatch(), { once: true });
  }

  /** The current window: most tasks in flight now. */
  get window(): number {
    return this.current;
  }

  /** Slots that a task submitted now would take at once (none while paused). */
  get spare(): number {
    if (this.pausing || this.pausedUntil > this.options.now()) return 0;
    return Math.max(0, this.current - this.inFlight - this.waiting.length);
  }

  /** Runs `task` once a slot is free, holding it until the task settles. */
  async run<T>(priority: Priority, task: (slot: Slot) => Promise<T>): Promise<T> {
    await this.acquire(priority);
    const held: Held = { priority, epoch: this.epoch, held: true, crowded: false, ahead: 0 };
    this.hold(held);
    const slot: Slot = { throttle: this.parallel > 1 ? (waitMs) => this.throttled(held, waitMs) : undefined };
    let ok = false;
    try {
      const value = await task(slot);
      ok = true;
      return value;
    } finally {
      if (held.held) this.release(held);
      if (ok) this.answer();
    }
  }

  private hold(held: Held): void {
    held.held = true;
    held.ahead = this.holders.size;
    this.holders.add(held);
    if (this.holders.size > 1) for (const other of this.holders) other.crowded = true;
  }

  private acquire(priority: Priority): Promise<void> {
    if (this.options.signal?.aborted) return Promise.reject(new InterruptedError());
    return new Promise((resolve, reject) => {
      const waiter = { priority, order: this.order++, resolve, reject };
      // Sorted by priority, then first come first served.
      let at = this.waiting.length;
      while (at > 0 && goesAfter((this.waiting[at - 1] as Waiter).priority, priority)) at--;
      this.waiting.splice(at, 0, waiter);
      this.dispatch();
    });
  }

  private release(held: Held): void {
    held.held = false;
    this.holders.delete(held);
    this.inFlight--;
    this.dispatch();
  }

  private dispatch(): void {
    if (this.options.signal?.aborted) {
      for (const waiter of this.waiting.splice(0)) waiter.reject(new InterruptedError());
      return;
    }
    const wait = this.pausedUntil - this.options.now();
    if (wait > 0) {
      if (this.pausing) return;
      this.pausing = true;
      this.options.sleep(wait, this.options.signal).then(
        () => {
          this.pausing = false;
          this.dispatch();
        },
        () => {
          this.pausing = false;
          for (const waiter of this.waiting.splice(0)) waiter.reject(new InterruptedError());
        },
      );
      return;
    }
    while (this.inFlight < this.current && this.waiting.length > 0) {
      this.inFlight++;
      (this.waiting.shift() as Waiter).resolve();
    }
  }

  /**
   * A 429 on a request of `held`'s task: taken back when the pressure may be ours, that is when
   * another of our requests was in flight at some moment since this task took its slot. Alone,
   * the transport's own retry rules apply (a service that refuses even one request at a time).
   */
  private async throttled(held: Held, waitMs: number): Promise<boolean> {
    if (!held.crowded) return false;
    const before = this.current;
    // The service refused this request holding at most `ahead` of ours: no more than it takes.
    const took = Math.max(1, held.ahead);
    if (held.epoch === this.epoch) {
      this.refused(before);
      this.burst = { took, lowestRefused: before };
      this.current = Math.max(1, Math.ceil(before / 2));
      this.epoch++;
      this.options.trace?.(`  parallel: ${before} → ${this.current} requests in flight (429: too many requests; every request waits ${waitMs} ms)`);
    } else if (held.epoch === this.epoch - 1) {
      // Another 429 of the burst the window was last cut for: more than one refused, the window
      // goes to what the service took. (One of an older burst only lengthens the pause.)
      const burst = this.burst;
      burst.took = Math.min(burst.took, took);
      this.current = Math.max(1, Math.min(before, burst.took));
      // Every window above that was more than it takes: as if each had met a 429.
      for (; burst.lowestRefused > burst.took + 1; burst.lowestRefused--) this.refused(burst.lowestRefused - 1);
      if (this.current < before)
        this.options.trace?.(`  parallel: ${before} → ${this.current} requests in flight (a 429 with ${burst.took} of ours ahead of it)`);
    }
    this.answered = 0;
    this.pausedUntil = Math.max(this.pausedUntil, this.options.now() + waitMs);
    this.release(held);
    await this.acquire(held.priority);
    held.crowded = false;
    this.hold(held);
    held.epoch = this.epoch;
    return true;
  }

  /** A 429 met at `window` (or evidence that it would have been). */
  private refused(window: number): void {
    this.refusedAt.set(window, (this.refusedAt.get(window) ?? 0) + 1);
  }

  private answer(): void {
    if (this.current >= this.parallel) return;
    this.answered++;
    const needed = GROWTH * this.current * 2 ** (this.refusedAt.get(this.current + 1) ?? 0);
    if (this.answered < needed) return;
    this.answered = 0;
    this.current++;
    this.options.trace?.(`  parallel: ${this.current - 1} → ${this.current} requests in flight (${needed} answered in a row)`);
    this.dispatch();
  }
}

/**
 * Runs `task` for each item, up to the scheduler's window at once, started in input order, and
 * hands each result to `deliver` in input order (a single writer). At most `ahead` results wait
 * for their turn. When `stop` aborts, no further item is started; those already started finish
 * and are delivered, those still waiting for a slot are dropped. Answers how many were delivered.
 */
export async function inOrder<I, R>(
  scheduler: Scheduler,
  items: readonly I[],
  task: (item: I, slot: Slot) => Promise<R>,
  deliver: (result: R, item: I, index: number) => Promise<void>,
  options: { stop?: AbortSignal; ahead?: number } = {},
): Promise<number> {
  type Outcome = { ok: true; value: R } | { ok: false; error: unknown };
  const ahead = options.ahead ?? 2 * scheduler.parallel;
  const started: Array<Promise<Outcome>> = [];
  const start = (index: number): void => {
    const item = items[index] as I;
    started[index] = scheduler
      .run(index, (slot) => task(item, slot))
      .then(
        (value): Outcome => ({ ok: true, value }),
        (error: unknown): Outcome => ({ ok: false, error }),
      );
  };
  let delivered = 0;
  for (let index = 0; index < items.length; index++) {
    while (started.length < items.length && started.length < index + ahead && !options.stop?.aborted) start(started.length);
    if (index >= started.length) break;
    const outcome = await (started[index] as Promise<Outcome>);
    // Stopped while it waited for a slot: it never ran.
    if (!outcome.ok && outcome.error instanceof InterruptedError && options.stop?.aborted) continue;
    if (!outcome.ok) throw outcome.error;
    await deliver(outcome.value, items[index] as I, index);
    delivered++;
  }
  return delivered;
}
