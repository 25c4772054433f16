/**
 * The parts of a list run, fetched through the scheduler and handed to the single writer in
 * order. A part is a chain of pages (each next address comes from the page before it): a phase
 * of the plan, or a date slice of one. Parts ahead of the writer run concurrently when the plan
 * allows it (the two priority queries of a union, slices of the sort date), each holding at
 * most a few pages, all of them together a bounded number, and never more records than --limit
 * still needs. A slice is split while the window has room: a part not started yet at any day, a
 * part under way only where the service's links say how far it got (the keyset date bound).
 */
import type { ListPlan, NextStep, PageSource } from './paging.js';
import { PageGuard } from './page-guard.js';
import type { ResumePoint } from './resume-token.js';
import type { Scheduler } from './scheduler.js';
import { initialParts, phaseKey, sliceCuts, splitPart, type Part, type TakenPage } from './part.js';
import { dayOf, daysOf, farEndOf, farEndProbe, positionOf, remainingDays, type SliceRule } from './slices.js';

export interface PartsOptions {
  plan: ListPlan;
  source: PageSource;
  scheduler: Scheduler;
  start: ResumePoint;
  pageSize: number;
  limit: number;
}

export class ListParts {
  readonly parts: Part[] = [];
  /** Records written so far, and those of the page being written; set by the writer. */
  written = 0;
  pageLeft = 0;
  private writerAt = 0;
  private stopped = false;
  private readonly guard = new PageGuard();
  private readonly rule: SliceRule | undefined;
  private readonly lookAhead: boolean;
  private readonly bufferCap: number;
  private readonly maxHeld: number;
  /** Each phase's far end found by a probe (null: the probe found none; undefined: asked). */
  private readonly far = new Map<number, number | null | undefined>();
  private wake: () => void = () => undefined;
  private changed: Promise<void> = this.renewChanged();

  constructor(private readonly options: PartsOptions) {
    const { plan, start, scheduler } = options;
    this.rule = plan.slicing;
    this.lookAhead = (plan.union === true || plan.slicing !== undefined) && scheduler.parallel > 1;
    this.bufferCap = this.lookAhead ? 4 : 1;
    this.maxHeld = 4 * scheduler.parallel;
    this.parts.push(...initialParts(plan, start));
    this.sliceRanges();
  }

  /** Waits for the writer's part `index` to have a page; null when the part is done. */
  async take(index: number): Promise<TakenPage | null> {
    const part = this.parts[index] as Part;
    this.writerAt = index;
    for (;;) {
      const page = part.buffer.shift();
      if (page) {
        this.pageLeft = page.records.length - page.skip;
        this.pump();
        return page;
      }
      if (part.error !== undefined) throw part.error;
      if (part.next === null && !part.inFlight) return null;
      this.pageLeft = 0;
      this.pump();
      await this.changed;
    }
  }

  /** The run is over (done, --limit, a failure): nothing more is asked for. */
  stop(): void {
    this.stopped = true;
  }

  /** Whether tokens name the part's last day: only a part cut by slicing has one of its own. */
  endOf(part: Part): number | undefined {
    return this.rule?.descending ? part.lo : part.hi;
  }

  private renewChanged(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private notify(): void {
    const wake = this.wake;
    this.changed = this.renewChanged();
    wake();
  }

  /** A date range given on the sort date is sliced at once, one slice per slot. */
  private sliceRanges(): void {
    if (!this.lookAhead || !this.rule) return;
    for (const part of [...this.parts]) {
      if (part.pagesRead > 0) continue;
      const span = this.remaining(part, false);
      if (!span) continue;
      // Cut from the far end, so that `part` keeps the first slice.
      const cuts = sliceCuts(span, this.options.scheduler.parallel);
      for (const mid of this.rule.descending ? cuts : cuts.reverse()) this.splitAt(part, mid);
    }
  }

  private pump(): void {
    if (this.stopped) return;
    let waiting = this.ready();
    while (this.lookAhead && this.options.scheduler.spare > waiting.length && this.roomAhead(this.holding(), waiting.length) && this.splitWidest()) {
      waiting = this.ready();
    }
    for (const part of waiting) this.fetch(part);
  }

  /** The parts that may ask for their next page now, in order. */
  private ready(): Part[] {
    const ready: Part[] = [];
    const holding = this.holding();
    for (let i = this.writerAt; i < this.parts.length; i++) {
      const part = this.parts[i] as Part;
      if (part.inFlight || part.next === null || part.error !== undefined || part.buffer.length >= this.bufferCap) continue;
      if (i === this.writerAt) {
        const inHand = this.pageLeft + part.buffer.reduce((sum, page) => sum + page.records.length - page.skip, 0);
        if (this.written + inHand < this.options.limit) ready.push(part);
      } else if (this.lookAhead && this.roomAhead(holding, ready.length)) ready.push(part);
    }
    return ready;
  }

  /** Pages held or asked for, the records among them, and the requests in flight. */
  private holding(): { pages: number; records: number; inFlight: number } {
    const holding = { pages: 0, records: this.pageLeft, inFlight: 0 };
    for (const part of this.parts) {
      holding.pages += part.buffer.length + (part.inFlight ? 1 : 0);
      holding.inFlight += part.inFlight ? 1 : 0;
      for (const page of part.buffer) holding.records += page.records.length - page.skip;
    }
    return holding;
  }

  /** Room for another page ahead of the writer, `more` besides: under the page budget, and --limit still wants it. */
  private roomAhead(holding: { pages: number; records: number; inFlight: number }, more: number): boolean {
    if (holding.pages + more >= this.maxHeld) return false;
    return this.written + holding.records + (holding.inFlight + more + 1) * this.options.pageSize <= this.options.limit;
  }

  private fetch(part: Part): void {
    const url = part.next as string;
    if (part.entered !== url) {
      try {
        this.guard.enter(url);
      } catch (err) {
        this.fail(part, err);
        return;
      }
    }
    part.inFlight = true;
    const skip = part.skipFirst;
    part.skipFirst = 0;
    this.options.scheduler.run(part.key, (slot) => this.options.source.fetch(url, part.base, slot.throttle)).then(
      (page) => this.arrived(part, url, skip, page),
      (err: unknown) => {
        part.inFlight = false;
        this.fail(part, err);
      },
    );
  }

  private arrived(part: Part, url: string, skip: number, page: { records: Record<string, unknown>[] } & NextStep): void {
    part.inFlight = false;
    part.pagesRead++;
    part.recordsRead += page.records.length;
    try {
      part.lastIds = this.guard.follow(part.lastIds, page.records, url, page.next !== null || page.refusal !== undefined);
    } catch (err) {
      this.fail(part, err);
      return;
    }
    const taken: TakenPage = { url, records: page.records, next: page.next, skip };
    part.next = page.next;
    let refusal: unknown = page.refusal;
    if (refusal === undefined && page.next !== null) {
      try {
        this.guard.enter(page.next);
        part.entered = page.next;
      } catch (err) {
        refusal = err;
      }
    }
    if (refusal !== undefined) {
      taken.nextRefused = true;
      part.next = null;
      part.error = refusal;
    }
    part.buffer.push(taken);
    this.notify();
    this.pump();
  }

  private fail(part: Part, err: unknown): void {
    part.error = err;
    part.next = null;
    this.notify();
  }

  /**
   * The days a part has still to read, when both ends are known. An open far end is the run's
   * day ascending; descending, the oldest record's, asked for once (`probe`) when a part under
   * way needs it: a list that ends on its first page pays for no probe.
   */
  private remaining(part: Part, probe: boolean): { lo: number; hi: number } | undefined {
    const rule = this.rule;
    if (!rule || part.next === null || part.inFlight || part.error !== undefined) return undefined;
    const underWay = part.pagesRead > 0;
    const position = underWay ? positionOf(part.next, part.base, part.recordsRead, rule) : undefined;
    if (underWay && position === undefined) return undefined;
    const phaseDays = daysOf(this.options.plan.phases[part.phase] as string, rule.field);
    let far: number | undefined;
    if (!rule.descending) far = this.options.plan.asOf === undefined ? undefined : dayOf(this.options.plan.asOf);
    else if ((part.lo ?? phaseDays.lo) === undefined) {
      far = this.far.get(part.phase) ?? undefined;
      if (probe && !this.far.has(part.phase)) this.probe(part.phase);
    }
    return remainingDays({ lo: part.lo, hi: part.hi, position, underWay }, phaseDays, rule, far);
  }

  /** Asks for the far end of a phase's list: one record of it in the other order. */
  private probe(phase: number): void {
    const rule = this.rule as SliceRule;
    this.far.set(phase, undefined);
    const address = farEndProbe(this.options.plan.phases[phase] as string, rule);
    try {
      this.guard.enter(address);
    } catch {
      this.far.set(phase, null);
      return;
    }
    this.options.scheduler.run(phaseKey(phase), (slot) => this.options.source.fetch(address, address, slot.throttle)).then(
      (page) => this.far.set(phase, farEndOf(page.next, rule) ?? null),
      () => this.far.set(phase, null),
    ).then(() => this.pump());
  }

  /** Splits the part with the most days left in two; false when none has two days left. */
  private splitWidest(): boolean {
    let best: { part: Part; lo: number; hi: number } | undefined;
    for (const part of this.parts.slice(this.writerAt)) {
      const span = this.remaining(part, true);
      if (span && span.hi > span.lo && (!best || span.hi - span.lo > best.hi - best.lo)) best = { part, ...span };
    }
    if (!best) return false;
    this.splitAt(best.part, best.lo + Math.floor((best.hi - best.lo) / 2));
    return true;
  }

  /** Cuts `part` after day `mid` (see splitPart); the rest follows it. */
  private splitAt(part: Part, mid: number): void {
    const rest = splitPart(part, mid, this.options.plan.phases[part.phase] as string, this.rule as SliceRule);
    this.parts.splice(this.parts.indexOf(part) + 1, 0, rest);
  }
}
