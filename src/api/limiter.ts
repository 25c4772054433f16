/**
 * How many requests to keep in flight when the user named no number: a queue estimate in the spirit of Netflix's
 * concurrency-limits Vegas. A round's answers give its mean latency; the lowest latency of the run is what a request takes
 * when nothing queues; by Little's law, limit × (1 − lowest ÷ latency) of the round's requests were waiting rather than being
 * served. Where more than half the window waits, the limit comes down to those served and one more; where less than one
 * waits, it goes up by one, to the ceiling it starts at. A service 50 ms away queues nothing (8 stay in flight); one that
 * serves one request at a time, shared CPUs or a global lock, queues all but one (8 → 2). Comparing one round's throughput
 * with the next was the rule before: rounds vary by a third from noise alone, so it read noise as a change.
 * The decision (`decide`) is a pure function of the samples; `Rounds` gathers them from times it is given.
 */

/** What one round at a limit measured. */
export interface Sample {
  limit: number;
  /** Mean time from a request's grant to its answer, ms. */
  latencyMs: number;
  /** Answers a second, by Little's law: the mean requests in flight over the round over the mean latency. */
  throughput: number;
  /** The window was mostly full: fewer requests than the limit to send says nothing about the limit. */
  full: boolean;
  /** The lowest latency of any answer of the run so far: what a request takes when nothing queues (Vegas's base RTT). */
  lowestLatencyMs: number;
}

export interface LimiterState {
  limit: number;
  ceiling: number;
}

export interface Decision {
  state: LimiterState;
  /** Set when the limit changed: why, for the scheduler's --verbose line (`7.1 of 8 waiting: latency 40 ms, lowest 5 ms`). */
  why?: string;
}

/** A round is the answers to at least a window of requests, and at least this many. */
export const MIN_ANSWERS = 4;
/** A round lasts at least this long, so that the clock's millisecond steps do not decide. */
export const ROUND_MS = 40;
/** A round's mean in flight at or above this share of the limit counts as a full window. */
const FULL = 0.75;

export function startState(ceiling: number): LimiterState {
  return { limit: ceiling, ceiling };
}

/** The requests of a round at `sample.limit` that waited rather than being served (Vegas's queue size). */
export function waiting(sample: Sample): number {
  return sample.limit * (1 - Math.min(1, sample.lowestLatencyMs / sample.latencyMs));
}

/** The limit after a round at `state.limit`, and why it changed. */
export function decide(state: LimiterState, sample: Sample): Decision {
  if (!sample.full || sample.limit !== state.limit) return { state };
  const queued = waiting(sample);
  const { limit } = state;
  let next = limit;
  if (queued > limit / 2 && limit > 1) next = Math.min(limit - 1, Math.ceil(limit - queued) + 1);
  else if (queued < 1 && limit < state.ceiling) next = limit + 1;
  if (next === limit) return { state };
  const why = `${queued.toFixed(1)} of ${limit} waiting: latency ${Math.round(sample.latencyMs)} ms, lowest ${Math.round(sample.lowestLatencyMs)} ms`;
  return { state: { ...state, limit: next }, why };
}

/**
 * A round's measures, from the times the scheduler hands in: the requests in flight over time (all of them: each
 * loads the service), and the latency of the requests granted in this round only, which saw its limit.
 */
export class Rounds {
  /** Which round a request granted now belongs to. */
  id = 0;
  private startedAt: number;
  private changedAt: number;
  private inFlight = 0;
  /** The sum of requests in flight × ms since the round started. */
  private area = 0;
  private answers = 0;
  private latencySum = 0;
  private lowestLatencyMs = Infinity;

  constructor(now: number) {
    this.startedAt = now;
    this.changedAt = now;
  }

  /** The requests in flight changed to `count` at `now`. */
  inFlightNow(now: number, count: number): void {
    this.area += this.inFlight * (now - this.changedAt);
    this.changedAt = now;
    this.inFlight = count;
  }

  /** An answer to a request granted in round `round` came after `latencyMs`: the round's sample once it is complete. */
  answered(now: number, round: number, latencyMs: number, limit: number): Sample | undefined {
    this.lowestLatencyMs = Math.min(this.lowestLatencyMs, Math.max(1, latencyMs));
    if (round !== this.id) return undefined;
    this.answers++;
    this.latencySum += latencyMs;
    const elapsed = now - this.startedAt;
    if (this.answers < Math.max(MIN_ANSWERS, limit) || elapsed < ROUND_MS) return undefined;
    this.inFlightNow(now, this.inFlight);
    const meanInFlight = this.area / elapsed;
    const mean = Math.max(1, this.latencySum / this.answers);
    const throughput = (1000 * meanInFlight) / mean;
    const sample = { limit, latencyMs: mean, throughput, full: meanInFlight >= FULL * limit, lowestLatencyMs: this.lowestLatencyMs };
    this.restart(now);
    return sample;
  }

  /** Starts a new round: the limit changed, or a 429 pause spoilt this one. */
  restart(now: number): void {
    this.inFlightNow(now, this.inFlight);
    this.id++;
    this.startedAt = now;
    this.area = 0;
    this.answers = 0;
    this.latencySum = 0;
  }
}
