/**
 * How many requests to keep in flight when the user named no number: a hill-climbing limiter in the spirit of Netflix's
 * concurrency-limits (Vegas, Gradient2). It measures a round at each limit, the answers to about a window of requests,
 * and keeps a higher limit only while it raises the throughput, a lower one while it costs none. It starts at the
 * ceiling and, while requests queue (latency past QUEUEING times the run's lowest), halves while that costs nothing:
 * starting low and doubling lost the whole climb on every short batch, and a halving where nothing queues lost a round at
 * half the throughput. More in flight than a service can work on at once only queues there: latency climbs and throughput
 * stays flat, so the limit comes down.
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
  /** The last round kept: a round at a probed limit is compared with it. */
  base?: Sample;
  /** Halving from the start, until a step down costs its share. */
  starting: boolean;
  /** Rounds at the same limit since the last change. */
  steady: number;
  /** The direction of the last probe, so probes alternate. */
  probed: 'up' | 'down';
}

export interface Decision {
  state: LimiterState;
  /** Set when the limit changed: why, for the scheduler's --verbose line (`at 4 latency up 60 %, throughput flat`, than at the limit before). */
  why?: string;
}

/** A raise is kept when it brings at least this share of the gain a service that is not busy would give; a step down, when it costs at most this share. */
export const FOLLOW = 0.3;
/** Rounds at one limit before probing one more or one fewer. */
export const PROBE_EVERY = 6;
/** A round is the answers to at least a window of requests, and at least this many. */
export const MIN_ANSWERS = 4;
/** A round lasts at least this long, so that the clock's millisecond steps do not decide. */
export const ROUND_MS = 40;
/** A round's mean in flight at or above this share of the limit counts as a full window. */
const FULL = 0.75;
/**
 * A round's latency past this many times the run's lowest: requests queue (at the service or on the way). Only then can fewer
 * in flight cost nothing; where none queue (a service 50 ms away), a step down only loses its share of the throughput.
 */
export const QUEUEING = 1.5;

export function startState(ceiling: number): LimiterState {
  return { limit: ceiling, ceiling, starting: true, steady: 0, probed: 'up' };
}

/** The limit after a round at `state.limit`, and why it changed. */
export function decide(state: LimiterState, sample: Sample): Decision {
  const { base } = state;
  if (!sample.full) return { state };
  // The first round of a run measures the burst that fills an idle service, not the limit: it sets the base only.
  if (base === undefined) return { state: { ...state, base: sample } };
  if (base.limit === sample.limit) return steadyRound(state, sample);
  const why = `at ${sample.limit} ${effect(sample, base)}`;
  if (!paid(sample, base)) return change({ ...state, starting: false }, base.limit, why, base);
  // It paid: one more step the same way (halving from the start), until the ceiling or one.
  const up = sample.limit > base.limit;
  const next = up ? Math.min(state.ceiling, sample.limit + 1) : state.starting ? Math.ceil(sample.limit / 2) : Math.max(1, sample.limit - 1);
  if (next === sample.limit) return { state: { ...state, base: sample, starting: false, steady: 0 } };
  return change(state, next, why, sample);
}

/** The throughput at the new limit brought at least FOLLOW of what the change would bring a service not busy (a lower one: cost at most that). */
export function paid(sample: Sample, base: Sample): boolean {
  return sample.throughput / base.throughput >= 1 + FOLLOW * (sample.limit / base.limit - 1);
}

/**
 * Another round at the kept limit: from the start, halve; every PROBE_EVERY rounds, try one more or one fewer. A step down
 * only where requests queue.
 */
function steadyRound(state: LimiterState, sample: Sample): Decision {
  const queueing = sample.latencyMs > QUEUEING * sample.lowestLatencyMs;
  if (state.starting && sample.limit > 1 && queueing) return change(state, Math.ceil(sample.limit / 2), 'starting', sample);
  const steady = state.steady + 1;
  // Where requests queue, one more and one fewer in turn; where none queue, only one more.
  const up = sample.limit < state.ceiling && (state.probed === 'down' || sample.limit === 1 || !queueing);
  const down = !up && sample.limit > 1 && queueing;
  if (steady < PROBE_EVERY || (!up && !down)) return { state: { ...state, base: sample, starting: false, steady } };
  return change({ ...state, starting: false, probed: up ? 'up' : 'down' }, sample.limit + (up ? 1 : -1), `probing after ${steady} rounds`, sample);
}

function change(state: LimiterState, limit: number, why: string, base: Sample): Decision {
  return { state: { ...state, limit, base, steady: 0 }, why };
}

/** `latency up 60 %, throughput flat` */
function effect(sample: Sample, base: Sample): string {
  return `latency ${trend(sample.latencyMs / base.latencyMs)}, throughput ${trend(sample.throughput / base.throughput)}`;
}

function trend(ratio: number): string {
  const percent = Math.round(100 * (ratio - 1));
  if (Math.abs(percent) < 10) return 'flat';
  return percent > 0 ? `up ${percent} %` : `down ${-percent} %`;
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
