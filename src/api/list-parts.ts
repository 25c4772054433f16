/**
 * The parts of a list run, fetched through the scheduler and handed to the single writer in
 * order. A part is a chain of pages (each next address comes from the page before it): a phase
 * of the plan, or a date slice of one. Parts ahead of the writer run concurrently when the plan
 * allows it (the two priority queries of a union, slices of the sort date), within a budget of
 * pages held (4 per slot of the window, the parts nearest the writer first, 5 in all), and never
 * more records than --limit still needs. A slice is cut in two while the window has room: a part
 * not started yet at any day, a part under way only where the service's links say how far it got
 * (the keyset date bound).
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
    // The page budget ahead of the writer: 4 per slot of the window, the parts nearest the writer
    // first. One at a time, a part reads one page ahead, as one request at a time would.
    this.maxHeld = 4 * scheduler.parallel;
    this.bufferCap = this.lookAhead ? 4 : 1;
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

  /** Starts what may start now; a fault in it fails the writer's part rather than going unseen. */
  private pump(): void {
    if (this.stopped) return;
    try {
      this.start();
    } catch (err) {
      this.fail(this.parts[this.writerAt] as Part, err);
    }
  }

  private start(): void {
    let waiting = this.ready();
    while (this.lookAhead && this.options.scheduler.spare > waiting.length && this.splitWidest()) {
      const more = this.ready();
      // A cut whose new part may not start now (the page budget) waits: no cutting ever finer.
      if (more.length <= waiting.length) break;
      waiting = more;
    }
    for (const part of waiting) this.fetch(part);
  }

  /**
   * The parts that may ask for their next page now, in order. The writer's part may read a few
   * pages ahead (unless --limit has what it needs in hand). A part ahead of it may while the pages
   * held or asked for by it and the parts before it stay within the budget, so parts far ahead
   * never hold back those the writer needs next; all of them together hold at most the budget
   * and one page per slot of the window more.
   */
  private ready(): Part[] {
    const ready: Part[] = [];
    const total = this.holding();
    let before = 0;
    for (let i = this.writerAt; i < this.parts.length; i++) {
      const part = this.parts[i] as Part;
      before += part.buffer.length + (part.inFlight ? 1 : 0);
      if (part.inFlight || part.next === null || part.error !== undefined) continue;
      if (i === this.writerAt) {
        if (part.buffer.length >= this.bufferCap) continue;
        const inHand = this.pageLeft + part.buffer.reduce((sum, page) => sum + page.records.length - page.skip, 0);
        if (this.written + inHand < this.options.limit) ready.push(part);
        continue;
      }
      const more = ready.length;
      const wanted = this.written + total.records + (total.inFlight + more + 1) * this.options.pageSize <= this.options.limit;
      if (this.lookAhead && wanted && before + more < this.maxHeld && total.pages + more < this.maxHeld + this.options.scheduler.parallel) ready.push(part);
    }
    return ready;
  }

  /** Pages held or asked for, the records among them, and the requests in flight (parts behind the writer hold none). */
  private holding(): { pages: number; records: number; inFlight: number } {
    const holding = { pages: 0, records: this.pageLeft, inFlight: 0 };
    for (const part of this.parts.slice(this.writerAt)) {
      holding.pages += part.buffer.length + (part.inFlight ? 1 : 0);
      holding.inFlight += part.inFlight ? 1 : 0;
      for (const page of part.buffer) holding.records += page.records.length - page.skip;
    }
    return holding;
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
   * The days a part has still to read, when both ends are known. An open far end is asked for
   * once (`probe`) when a part under way needs it, so a list that ends on its first page pays
   * for no probe: descending, the oldest record's day; ascending, the newest's (the run's day
   * until the answer comes, or when it says nothing).
   */
  private remaining(part: Part, probe: boolean): { lo: number; hi: number } | undefined {
    const rule = this.rule;
    if (!rule || part.next === null || part.inFlight || part.error !== undefined) return undefined;
    const underWay = part.pagesRead > 0;
    const position = underWay ? positionOf(part.next, part.base, part.recordsRead, rule) : undefined;
    if (underWay && position === undefined) return undefined;
    const phaseDays = daysOf(this.options.plan.phases[part.phase] as string, rule.field);
    const open = rule.descending ? (part.lo ?? phaseDays.lo) === undefined : (part.hi ?? phaseDays.hi) === undefined;
    if (open && probe && underWay && !this.far.has(part.phase)) this.probe(part.phase);
    let far = this.far.get(part.phase) ?? undefined;
    if (far === undefined && !rule.descending && this.options.plan.asOf !== undefined) far = dayOf(this.options.plan.asOf);
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
    // Each phase with pages left gets its share of the window: the first to answer does not
    // take every slot while another, as long, still waits for its first page.
    const active = new Map<number, number>();
    for (const part of this.parts.slice(this.writerAt)) if (part.next !== null) active.set(part.phase, (active.get(part.phase) ?? 0) + 1);
    const share = Math.ceil(this.options.scheduler.window / Math.max(1, active.size));
    let best: { part: Part; lo: number; hi: number } | undefined;
    for (const part of this.parts.slice(this.writerAt)) {
      if ((active.get(part.phase) ?? 0) >= share) continue;
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
