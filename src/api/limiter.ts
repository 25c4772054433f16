/**
 * How many requests to keep in flight when the user named no number: Vegas, as Netflix's concurrency-limits has it. The lowest
 * latency of the run is what a request takes when nothing queues; over the rounds at one limit the latency is smoothed; by
 * Little's law, limit × (1 − lowest ÷ smoothed latency) of the window waits rather than being served. Past BETA of the window
 * waiting, the limit comes down to those served and one more; under ALPHA for CALM_ROUNDS rounds in a row it goes up by one,
 * to the ceiling it starts at; in between it holds. A service 50 ms away queues nothing (8 stay in flight); one that serves
 * one request at a time, shared CPUs or a global lock, queues all but one (8 → 2 or 1). At 1 nothing of ours can wait, so
 * one more is a probe: each time the limit came down from a limit, growing back there waits twice the rounds (as the
 * scheduler's 429 bound does), so a service that queued a second request is asked less and less often and the limit settles.
 * The decision (`decide`) is a pure function of the state and a round's sample; `Rounds` gathers them from times it is given.
 */

/** What one round at a limit measured. */
export interface Sample {
  limit: number;
  /** Mean time from a request's grant to its answer, ms. */
  latencyMs: number;
  /** The mean of the requests in flight over the round (fewer than the limit where the list had no more to send). */
  inFlight: number;
  /** The lowest latency of any answer of the run so far: what a request takes when nothing queues (Vegas's base RTT). */
  lowestLatencyMs: number;
}

export interface LimiterState {
  limit: number;
  ceiling: number;
  /** The latency of the rounds at this limit, smoothed (undefined: none yet at it). */
  smoothedMs: number | undefined;
  /** Rounds in a row at this limit with fewer than ALPHA of the window waiting. */
  calm: number;
  /** How often the limit came down for queueing to one below each limit: growing back to it waits 2^that × CALM_ROUNDS. */
  queuedAt: Readonly<Record<number, number>>;
}

interface Decision {
  state: LimiterState;
  /** Set when the limit changed: why, for the scheduler's --verbose line (`7.1 of 8 waiting: latency 40 ms, lowest 5 ms`). */
  why?: string;
}

/** A round lasts at least this long, so that the clock's millisecond steps do not decide. */
export const ROUND_MS = 40;
/** A round's mean in flight at or above this share of the limit counts as a full window: only such rounds grow it. */
const FULL = 0.75;
/** What a round moves the smoothed latency by, of its difference from it: one slow round is not a queue. */
const SMOOTHING = 1 / 2;
/** Under this share of the window waiting the limit may grow (Vegas's alpha); past BETA it comes down; between, it holds. */
const ALPHA = 1 / 4;
const BETA = 1 / 2;
/** Calm rounds in a row before the limit grows by one, doubled for each time it came down from there. */
export const CALM_ROUNDS = 2;

export function startState(ceiling: number): LimiterState {
  return { limit: ceiling, ceiling, smoothedMs: undefined, calm: 0, queuedAt: {} };
}

/** The state at another limit: what was measured at the old one no longer holds. */
function atLimit(state: LimiterState, limit: number): LimiterState {
  return { ...state, limit, smoothedMs: undefined, calm: 0 };
}

/** The requests of `inFlight` that wait rather than being served (Vegas's queue size), at `latencyMs` against the lowest. */
export function waiting(inFlight: number, latencyMs: number, lowestLatencyMs: number): number {
  return inFlight * (1 - Math.min(1, lowestLatencyMs / latencyMs));
}

/**
 * The limit after a round at `state.limit`, and why it changed. The queue is judged at the requests that were in flight,
 * however few; the limit grows only from rounds whose window was mostly full (fewer to send says nothing of more).
 */
export function decide(state: LimiterState, sample: Sample): Decision {
  if (sample.limit !== state.limit) {
    // Below a 429 or 503 bound (a gateway's limit_conn): a queue there still brings the limit down; growing is the bound's.
    const judged = sample.limit < state.limit ? decide(atLimit(state, sample.limit), sample) : { state };
    return judged.state.limit < sample.limit ? judged : { state };
  }
  const { limit, ceiling, queuedAt } = state;
  const inFlight = Math.min(limit, sample.inFlight);
  const smoothedMs = state.smoothedMs === undefined ? sample.latencyMs : state.smoothedMs + SMOOTHING * (sample.latencyMs - state.smoothedMs);
  const queued = waiting(inFlight, smoothedMs, sample.lowestLatencyMs);
  const measured = `latency ${msText(smoothedMs)} ms, lowest ${msText(sample.lowestLatencyMs)} ms`;
  const of = `${queued.toFixed(1)} of ${Math.round(inFlight)} waiting`;
  if (queued > BETA * inFlight && limit > 1) {
    const next = Math.max(1, Math.min(limit - 1, Math.ceil(inFlight - queued) + 1));
    const queuedNow = { ...queuedAt, [next + 1]: (queuedAt[next + 1] ?? 0) + 1 };
    return { state: { ...atLimit(state, next), queuedAt: queuedNow }, why: `${of}: ${measured}` };
  }
  if (queued >= ALPHA * inFlight) return { state: { ...state, smoothedMs, calm: 0 } };
  if (inFlight < FULL * limit) return { state: { ...state, smoothedMs } };
  const calm = state.calm + 1;
  if (limit < ceiling && calm >= CALM_ROUNDS * 2 ** (queuedAt[limit + 1] ?? 0))
    return { state: atLimit(state, limit + 1), why: `${of}, ${calm} rounds in a row: ${measured}` };
  return { state: { ...state, smoothedMs, calm } };
}

/** A latency for --verbose: tenths below 10 ms, where the clock's millisecond steps would read 1.4 ms as 1. */
const msText = (ms: number): string => (ms < 10 ? ms.toFixed(1) : String(Math.round(ms)));

/**
 * A round's measures, from the times the scheduler hands in: the requests in flight over time (all of them: each
 * loads the service), and the latency of the requests granted in this round only, which saw its limit. The opening's
 * requests (round 0, granted before any answer) make no round: new connections and a cold client, not the service's queue.
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
  /** The lowest latency of any answer so far (Infinity: none yet). */
  lowestLatencyMs = Infinity;

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

  /** An answer to a request granted in round `round` came after `latencyMs`: the round's sample once it is complete (at least its mean in flight answered). */
  answered(now: number, round: number, latencyMs: number, limit: number): Sample | undefined {
    this.lowestLatencyMs = Math.min(this.lowestLatencyMs, Math.max(1, latencyMs));
    if (this.id === 0) this.restart(now);
    if (round !== this.id) return undefined;
    this.answers++;
    this.latencySum += latencyMs;
    const elapsed = now - this.startedAt;
    this.inFlightNow(now, this.inFlight);
    const inFlight = elapsed > 0 ? this.area / elapsed : 0;
    if (this.answers < Math.max(1, Math.round(inFlight)) || elapsed < ROUND_MS) return undefined;
    const sample = { limit, latencyMs: Math.max(1, this.latencySum / this.answers), inFlight, lowestLatencyMs: this.lowestLatencyMs };
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
