/**
 * The one concurrency mechanism: up to a window of tasks in flight (--parallel), lower priority first, then by arrival.
 * As TCP's window: a 429 halves it once per window (not above what the service held) and pauses every request for the
 * Retry-After; more 429s to the requests in flight at that cut take it down to what the service held of them; GROWTH × window answers in a row grow it back by one.
 * A 429 with no other request of ours in flight is not our doing: usual retry rules apply.
 * A 503 (a gateway's connection limit answers so, without Retry-After) is read the same way.
 * With `adaptive` (no --parallel given), the limiter (./limiter.ts) keeps fewer in flight while requests queue at the service.
 * The window is the lower of the two; every change of it is one --verbose line, whichever moved it (see moved()).
 */
import { InterruptedError } from '../core/errors.js';
import { decide, Rounds, startState, type LimiterState } from './limiter.js';
import type { Throttle } from '../http/transport.js';

export interface SchedulerOptions {
  parallel: number;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Ctrl-C: tasks not started yet never start (they reject with InterruptedError). */
  signal?: AbortSignal;
  /** --verbose: one line per change of the window, `in flight 8 → 4: why`. */
  trace?: (line: string) => void;
  /** `parallel` is a ceiling: start there and keep only as many in flight as the service serves without a queue. */
  adaptive?: boolean;
}

/** What a running task passes to each of its requests. */
export type Slot = { readonly throttle: Throttle | undefined };

/** Answers in a row, per slot of the window, before it grows by one. */
export const GROWTH = 10;

/** A task's claim on a slot, from the moment it is granted. */
interface Holder {
  priority: number;
  /** The window's epoch at the grant: a 429 from before the last cut does not cut again. */
  epoch: number;
  /** Another slot was held meanwhile: a 429 may be pressure of ours. */
  crowded: boolean;
  /** The limiter's round at the grant, and when. */
  round: number;
  grantedAt: number;
}

type Waiter = { holder: Holder; resolve(): void; reject(err: unknown): void };

export class Scheduler {
  readonly parallel: number;
  private congestionWindow: number;
  private readonly waiting: Waiter[] = [];
  private readonly holders = new Set<Holder>();
  private epoch = 0;
  private answered = 0;
  private pausedUntil = 0;
  private pausing = false;
  /** 429s met at each window: growing back to one takes twice the answers each time, as TCP CUBIC slows near its last loss. */
  private readonly refusedAt = new Map<number, number>();
  private limiter: LimiterState | undefined;
  private readonly rounds: Rounds;
  /** The last cut: the epoch it ended, the tasks in flight then, and how many of them the service refused. */
  private lastCut = { epoch: -1, inFlight: 0, refused: 0 };

  constructor(private readonly options: SchedulerOptions) {
    this.parallel = options.parallel;
    this.congestionWindow = options.parallel;
    if (options.adaptive === true && options.parallel > 1) this.limiter = startState(options.parallel);
    this.rounds = new Rounds(options.now());
    options.signal?.addEventListener('abort', () => this.dispatch(), { once: true });
  }

  /** Most tasks in flight now: the 429 window (congestionWindow), within the limiter's. */
  get window(): number {
    return Math.min(this.congestionWindow, this.limiter?.limit ?? Infinity);
  }

  /** With the limiter: the lowest latency of an answer, what a request takes when nothing queues (Infinity: none yet). */
  get lowestLatencyMs(): number | undefined {
    return this.limiter && this.rounds.lowestLatencyMs;
  }

  /** The clock the latencies are measured on. */
  now(): number {
    return this.options.now();
  }

  /** Runs `task` once a slot is free, holding it until the task settles. */
  async run<T>(priority: number, task: (slot: Slot) => Promise<T>): Promise<T> {
    const holder: Holder = { priority, epoch: 0, crowded: false, round: 0, grantedAt: 0 };
    await this.acquire(holder);
    try {
      const value = await task({ throttle: this.parallel > 1 ? (waitMs, status) => this.throttled(holder, waitMs, status) : undefined });
      this.grow();
      this.measure(holder);
      return value;
    } finally {
      this.release(holder);
    }
  }

  private acquire(holder: Holder): Promise<void> {
    return new Promise((resolve, reject) => {
      let at = this.waiting.length;
      while (at > 0 && (this.waiting[at - 1] as Waiter).holder.priority > holder.priority) at--;
      this.waiting.splice(at, 0, { holder, resolve, reject });
      this.dispatch();
    });
  }

  private release(holder: Holder): void {
    if (!this.holders.delete(holder)) return;
    this.rounds.inFlightNow(this.options.now(), this.holders.size);
    this.dispatch();
  }

  private dispatch(): void {
    if (this.options.signal?.aborted) {
      for (const waiter of this.waiting.splice(0)) waiter.reject(new InterruptedError());
      return;
    }
    const wait = this.pausedUntil - this.options.now();
    if (wait > 0) return this.pause(wait);
    while (this.holders.size < this.window && this.waiting.length > 0) {
      const { holder, resolve } = this.waiting.shift() as Waiter;
      holder.epoch = this.epoch;
      holder.crowded = false;
      holder.round = this.rounds.id;
      holder.grantedAt = this.options.now();
      this.holders.add(holder);
      this.rounds.inFlightNow(holder.grantedAt, this.holders.size);
      if (this.holders.size > 1) for (const other of this.holders) other.crowded = true;
      resolve();
    }
  }

  private pause(wait: number): void {
    if (this.pausing) return;
    this.pausing = true;
    // Cut short only by Ctrl-C, which dispatch() then sees.
    const resume = (): void => {
      this.pausing = false;
      this.dispatch();
    };
    this.options.sleep(wait, this.options.signal).then(resume, resume);
  }

  /** A 429 (or a gateway's 503) on a request of `holder`'s task. True when the pressure may be ours: the task waits for a slot and resends, not counted against --retries. */
  private async throttled(holder: Holder, waitMs: number, status: number): Promise<boolean> {
    if (!holder.crowded) return false;
    const refusal = `${status} ${status === 429 ? 'too many requests' : 'service unavailable'}`;
    if (holder.epoch === this.epoch && this.window > 1) {
      const before = this.window;
      const inFlight = this.holders.size;
      this.refusedAt.set(before, (this.refusedAt.get(before) ?? 0) + 1);
      this.lastCut = { epoch: this.epoch, inFlight, refused: 1 };
      // Not above what the service held: half of a window never sent (a first round of 3 against 8) would meet the refusal again.
      const halved = Math.ceil(before / 2);
      const held = Math.max(2, inFlight - 1);
      if (held < halved) this.refusedAt.set(held + 1, (this.refusedAt.get(held + 1) ?? 0) + 1);
      this.congestionWindow = Math.min(halved, held);
      this.epoch++;
      const wait = waitMs > 0 ? `; every request waits ${waitMs} ms` : '';
      this.moved(before, `${refusal}${held < halved ? `, 1 of ${inFlight} in flight refused` : ''}${wait}`);
    } else if (holder.epoch === this.lastCut.epoch) {
      // More refused of those in flight at the cut: the service held only the others, fewer than half may be all it holds. Not
      // below 2 on this count: a service may still count a request it refused as in flight (one probe of 3 met 2 refusals).
      const cut = this.lastCut;
      const held = Math.max(2, cut.inFlight - ++cut.refused);
      if (held < this.congestionWindow) {
        const before = this.window;
        // One more than it held met a refusal: growing back there takes twice the answers, as after a cut there.
        this.refusedAt.set(held + 1, (this.refusedAt.get(held + 1) ?? 0) + 1);
        this.congestionWindow = held;
        this.moved(before, `${refusal}, ${cut.refused} of ${cut.inFlight} in flight refused`);
      }
    }
    this.rounds.restart(this.options.now());
    this.answered = 0;
    this.pausedUntil = Math.max(this.pausedUntil, this.options.now() + waitMs);
    this.release(holder);
    await this.acquire(holder);
    return true;
  }

  /** The answer to `holder`'s task: one more for the limiter's round, which may move the limit. */
  private measure(holder: Holder): void {
    if (!this.limiter) return;
    const now = this.options.now();
    // Measured at the window in force: below the limiter's limit (a 429 bound) the round says nothing of it (see decide()).
    const sample = this.rounds.answered(now, holder.round, now - holder.grantedAt, this.window);
    if (sample === undefined) return;
    const before = this.window;
    const { state, why } = decide(this.limiter, sample);
    this.limiter = state;
    if (why !== undefined) this.moved(before, why);
  }

  private grow(): void {
    const needed = GROWTH * this.congestionWindow * 2 ** (this.refusedAt.get(this.congestionWindow + 1) ?? 0);
    if (this.congestionWindow >= this.parallel || ++this.answered < needed) return;
    const before = this.window;
    this.answered = 0;
    this.congestionWindow++;
    this.moved(before, `${needed} answered in a row`);
  }

  /**
   * --verbose: the window was `before` until `why` (a 429, the answers in a row, the limiter's round). Said only when
   * the window itself changed: one of its two bounds moving above the other changes nothing in flight. A new window starts
   * the limiter's next round: what the last one measured was another window's.
   */
  private moved(before: number, why: string): void {
    if (this.window === before) return;
    this.options.trace?.(`  in flight ${before} → ${this.window}: ${why}`);
    this.rounds.restart(this.options.now());
  }
}

/** Items started ahead of the one delivered, per slot: enough that a slot freed finds one waiting. */
const STARTED_PER_SLOT = 2;

/**
 * Runs `task` for each item within the scheduler's window and hands the results to `deliver` in input order, started
 * at most STARTED_PER_SLOT × --parallel ahead of it. Once `stop` aborts nothing new starts; answers how many were delivered.
 */
export async function inOrder<I, R>(
  scheduler: Scheduler,
  items: readonly I[],
  task: (item: I, slot: Slot) => Promise<R>,
  deliver: (result: R) => Promise<void>,
  options: { stop?: AbortSignal } = {},
): Promise<number> {
  const started: Array<Promise<R>> = [];
  let delivered = 0;
  for (let index = 0; index < items.length; index++) {
    while (started.length < Math.min(items.length, index + STARTED_PER_SLOT * scheduler.parallel) && !options.stop?.aborted) {
      const item = items[started.length] as I;
      const result = scheduler.run(started.length, (slot) => task(item, slot));
      result.catch(() => undefined); // Awaited in its turn below.
      started.push(result);
    }
    if (index >= started.length) break;
    let result: R;
    try {
      result = await (started[index] as Promise<R>);
    } catch (error) {
      // Stopped while it waited for a slot: it never ran.
      if (error instanceof InterruptedError && options.stop?.aborted) continue;
      throw error;
    }
    await deliver(result);
    delivered++;
  }
  return delivered;
}
