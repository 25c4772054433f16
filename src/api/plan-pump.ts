/**
 * The pump of the plain planner (plan.ts): the only async code of that engine. It feeds plan() each event (an answer, the
 * consumer's take, the scheduler's window), sends the requests plan() returns through the scheduler, and holds the page guard.
 */
import type { ListPlan, PageSource, TakenPage } from './paging.js';
import { PageGuard, type ChainState } from './page-guard.js';
import type { ResumePoint } from './resume-token.js';
import type { Scheduler } from './scheduler.js';
import { initialState, plan, type PlanEvent, type PlanRequest, type PlanSlice, type PlanState } from './plan.js';

/** A slice as a token names it (see place()). */
type SlicePlace = { readonly phase: number; readonly first: string; readonly sliceLastDay: number | undefined };

type PumpOptions = { plan: ListPlan; source: PageSource; scheduler: Scheduler; start: ResumePoint; pageSize: number; limit: number };

export class PlanPump {
  private state: PlanState;
  private readonly guard = new PageGuard();
  /** Per slice: what the guard keeps of its chain, and the address of it entered already. */
  private readonly chains = new Map<number, { guard?: ChainState; entered?: string }>();
  /** A fault of the planner itself: the consumer's next take throws it. */
  private fault: { error: unknown } | undefined;
  /** Requests sent and not answered, as the pump counts them: the planner's own count must agree. */
  private pending = 0;
  private wakeConsumer = (): void => undefined;
  private placed: { state: PlanState; id: number; place: SlicePlace } | undefined;
  /** The consumer's time with the pages it took (from a take's return to its next take), and their records. */
  private readonly consumed = { ms: 0, records: 0 };
  private takenAt: number | undefined;

  constructor(private readonly options: PumpOptions) {
    this.state = initialState(options.plan, options.start, { ...options, window: this.window() });
  }

  /** The planner's whole state, as a failing test prints it. */
  get snapshot(): PlanState {
    return this.state;
  }

  /** The slices whose chains of pages the guard still follows: those reading (an export ends thousands, each keeping a page's ids). */
  get chainsGuarded(): number {
    return this.chains.size;
  }

  /** The first slice's id (no argument), or the one after `slice` in the order written. */
  next(slice?: number): number | undefined {
    const { slices } = this.state;
    if (slice === undefined) return slices[0]?.id;
    // The writer's slice never leaves the order: one missing is a planner fault, not a list that starts again.
    return slices[slices.indexOf(this.slice(slice)) + 1]?.id;
  }

  /**
   * What a token needs of a slice: its phase, first page, and last calendar day once the service was seen to keep the bound.
   * The consumer asks for each record it passes: the answer is kept until the state or the slice asked for changes.
   */
  place(id: number): SlicePlace {
    if (this.placed?.state !== this.state || this.placed.id !== id) {
      const slice = this.slice(id);
      const kept = this.state.phases[slice.phase]?.verdict === 'kept';
      const sliceLastDay = kept ? this.state.config.days?.toCalendar(slice.hi) : undefined;
      this.placed = { state: this.state, id, place: { phase: slice.phase, first: slice.first, sliceLastDay } };
    }
    return this.placed.place;
  }

  /** Waits for the consumer's next page of `slice`, `written` its count of records written; null when the slice has no more. */
  async take(id: number, written: number): Promise<TakenPage | null> {
    const { scheduler } = this.options;
    if (this.takenAt !== undefined) this.consumed.ms += scheduler.now() - this.takenAt;
    this.takenAt = undefined;
    for (;;) {
      if (this.fault) throw this.fault.error;
      const slice = this.slice(id);
      const page = slice.pages[0];
      this.dispatch({ kind: 'take', slice: id, written });
      if (page) {
        this.takenAt = scheduler.now();
        this.consumed.records += page.records.length - page.writtenBefore;
        return page;
      }
      if (slice.status.kind === 'failed') throw slice.status.error;
      if (slice.status.kind === 'done') return null;
      // Nothing in flight could bring this slice a page: a planner fault, never an early end of the list.
      if (this.pending === 0) throw new Error(`the list planner stalled on slice ${id}: ${summary(this.state)}`);
      await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
    }
  }

  /** The consumer met a record twice within one query: no more cuts. */
  distrust(): void {
    this.dispatch({ kind: 'repeat' });
  }

  stop(): void {
    this.dispatch({ kind: 'stop' });
  }

  private slice(id: number): PlanSlice {
    const slice = this.state.slices.find((each) => each.id === id);
    if (!slice) throw new Error(`slice ${id} is not in the plan: ${JSON.stringify(this.state.slices.map((each) => each.id))}`);
    return slice;
  }

  private dispatch(event: PlanEvent): void {
    if (this.fault) return;
    try {
      const window = this.window();
      // A window grown since the last event has idle slots: the requests that fill them are sent too.
      if (window !== this.state.window) this.apply({ kind: 'window', window });
      this.apply(event);
      if (this.state.inFlight !== this.pending)
        throw new Error(`the list planner counts ${this.state.inFlight} requests in flight, ${this.pending} were sent: ${summary(this.state)}`);
    } catch (error) {
      this.fault = { error };
    }
    this.wakeConsumer();
  }

  /**
   * The window the planner cuts and reads for: the scheduler's, and with its limiter no more than the consumer can use. By
   * Little's law, past the lowest latency ÷ the consumer's time a page, pages wait for it and none comes sooner: a service
   * answering within two pages' writing gains nothing from a cut and pays its partly filled last page. Until an answer and a
   * page written, the scheduler's (the opening's answers are cold and slow: their latency lets the first cut go at once).
   */
  private window(): number {
    const { scheduler, pageSize } = this.options;
    const lowest = scheduler.lowestLatencyMs;
    const { ms, records } = this.consumed;
    if (lowest === undefined || lowest === Infinity || records === 0) return scheduler.window;
    return Math.min(scheduler.window, Math.max(1, Math.floor((lowest * records) / (ms * pageSize))));
  }

  private apply(event: PlanEvent): void {
    const { state, requests } = plan(this.state, event);
    this.state = state;
    for (const request of requests) this.send(request);
  }

  /** Sends `request`; its answer (or failure) comes back as one event. */
  private send(request: PlanRequest): void {
    this.pending++;
    const answered = (event: PlanEvent): void => {
      this.pending--;
      this.dispatch(event);
    };
    const { scheduler, source } = this.options;
    if (request.kind === 'far') {
      const days = this.state.config.days;
      const ask = scheduler.run(request.priority, (slot) => source.fetch(request.url, request.url, slot.throttle));
      void ask.then(
        (page) => {
          const day = days?.farEndOf(page.next);
          answered({ kind: 'far', phase: request.phase, answer: day === undefined ? { kind: 'failed' } : { kind: 'known', day } });
        },
        () => answered({ kind: 'far', phase: request.phase, answer: { kind: 'failed' } }),
      );
      return;
    }
    const chain = this.chains.get(request.slice) ?? {};
    this.chains.set(request.slice, chain);
    const refusal = chain.entered === request.url ? undefined : this.guard.tryEnter(request.url);
    // A chain that ends (no next link, one refused, a failure) is let go: its slice reads no more.
    const ended = (): boolean => this.chains.delete(request.slice);
    if (refusal) {
      ended();
      // Counted in flight by the planner: answered at once.
      queueMicrotask(() => answered({ kind: 'failed', slice: request.slice, error: refusal }));
      return;
    }
    void scheduler
      .run(request.priority, (slot) => source.fetch(request.url, request.base, slot.throttle))
      .then((page) => {
        chain.guard = this.guard.follow(chain.guard, page.records, request.url, page.next !== null || page.refusal !== undefined);
        const refused = page.refusal ?? (page.next === null ? undefined : this.guard.tryEnter(page.next));
        if (refused === undefined && page.next !== null) chain.entered = page.next;
        else ended();
        answered({ kind: 'page', slice: request.slice, page: { url: request.url, records: page.records, next: page.next, refusal: refused } });
      })
      .catch((error: unknown) => {
        ended();
        answered({ kind: 'failed', slice: request.slice, error });
      });
  }
}

/** The planner's state in a line: each slice's id, status and pages held, and the count in flight. */
const summary = (state: PlanState): string =>
  `${state.slices.map((slice) => `${slice.id}:${slice.status.kind}/${slice.pages.length}`).join(' ')}; in flight ${state.inFlight}, window ${state.window}`;
