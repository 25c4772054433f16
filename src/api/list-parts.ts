/**
 * The parts of a list run, fetched through the scheduler and handed to the single writer in
 * order. A part is a chain of pages (each next address comes from the page before it): a phase
 * of the plan, or a date slice of one. Parts ahead of the writer run concurrently when the plan
 * allows it (the two priority queries of a union, slices of the sort date), within a budget of
 * pages held (page-budget.ts), and never more records than --limit still needs. A slice is cut
 * in two where its chain of pages would outlast the others' or be longer than the budget allows,
 * or while the window has room: a part not started yet at any day, a part under way only where
 * the service's links say how far it got (the keyset date bound). The part with the most records
 * still expected asks first.
 */
import type { ListPlan, NextStep, PageSource } from './paging.js';
import { PageBudget } from './page-budget.js';
import { PageGuard } from './page-guard.js';
import type { ResumePoint } from './resume-token.js';
import type { Priority, Scheduler } from './scheduler.js';
import { holdingOf, initialParts, pastOwnDays, recordsLeftOf, skipAfter, splitPart, takeRestOfPhase, type Part, type TakenPage } from './part.js';
import { PartSpans, type Probed } from './part-spans.js';
import type { SliceRule } from './slices.js';

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
  private distrusted = false;
  private readonly guard = new PageGuard();
  private readonly rule: SliceRule | undefined;
  private readonly lookAhead: boolean;
  private readonly bufferCap: number;
  private readonly budget: PageBudget;
  private readonly spans: PartSpans | undefined;
  private wake: () => void = () => undefined;
  private changed: Promise<void> = this.renewChanged();

  constructor(private readonly options: PartsOptions) {
    const { plan, start, scheduler } = options;
    this.rule = plan.slicing;
    this.lookAhead = (plan.union === true || plan.slicing !== undefined) && scheduler.parallel > 1;
    this.budget = new PageBudget(scheduler.parallel, options.pageSize);
    // One at a time, a part reads one page ahead, as one request at a time would.
    this.bufferCap = this.lookAhead ? 4 : 1;
    this.parts.push(...initialParts(plan, start));
    const probe = (phase: number, address: string): Promise<Probed | null> => {
      try {
        this.guard.enter(address);
      } catch {
        return Promise.resolve(null);
      }
      return scheduler
        .run([1, 0, phase, 0], (slot) => options.source.fetch(address, address, slot.throttle))
        .then(
          (page) => ({ ids: page.records.map((record) => String(record.id)), next: page.next }),
          () => null,
        );
    };
    this.spans = this.rule && new PartSpans(this.rule, { plan, pageSize: options.pageSize, probe, pump: () => this.pump() });
  }

  /** Waits for the writer's part `index` to have a page; null when the part is done. */
  async take(index: number): Promise<TakenPage | null> {
    const part = this.parts[index] as Part;
    this.writerAt = index;
    for (;;) {
      const page = part.buffer.shift();
      if (page) {
        this.pageLeft = recordsLeftOf(page);
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

  /**
   * A record came twice within one query: the service does not keep to the slices' bounds (or a
   * sort date moved). The writer leaves the repeat out; no part is cut any further, as the client
   * cannot tell which, and the parts read so far go on as they are.
   */
  distrust(): void {
    this.distrusted = true;
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
    const rates = this.lookAhead ? this.spans?.rates(this.parts.slice(this.writerAt)) : undefined;
    if (rates && !this.distrusted) this.balance(rates);
    let waiting = this.ready(rates);
    for (
      let more: Part[] | undefined;
      this.lookAhead && !this.distrusted && this.options.scheduler.spare > waiting.length && (more = this.splitWidest(waiting, rates));
    )
      waiting = more;
    for (const part of waiting) this.fetch(part, rates ? (this.spans as PartSpans).priorityOf(part, rates) : [1, 0, part.phase, part.rank]);
  }

  /**
   * Cuts the parts whose chains of pages would outlast the others' (PartSpans.balancingCuts) or
   * be longer than the page budget allows, among the next to read (two per slot of --parallel
   * with pages left): parts further on are cut when they come near.
   */
  private balance(rates: Map<number, number>): void {
    const near: Part[] = [];
    for (let i = this.writerAt, left = 2 * this.options.scheduler.parallel; i < this.parts.length && left > 0; i++) {
      near.push(this.parts[i] as Part);
      if (this.parts[i]?.next !== null) left--;
    }
    for (const { part, cuts } of (this.spans as PartSpans).balancingCuts(near, this.options.scheduler.window, rates, this.budget.longestChain)) {
      for (const mid of cuts) this.splitAt(part, mid);
    }
  }

  /**
   * The parts that may ask for their next page now, in order. The writer's part may read a few
   * pages ahead (unless --limit has what it needs in hand); a part ahead of it may while the page
   * budget allows. `rates`: each query's records per day, from start() (a cut changes no query's
   * rate).
   */
  private ready(rates: Map<number, number> | undefined): Part[] {
    const ready: Part[] = [];
    const parts = this.parts.slice(this.writerAt);
    const total = holdingOf(parts, this.pageLeft);
    const { limit, pageSize, scheduler } = this.options;
    // --limit: a part ahead reads only while the records expected before it (held, in flight,
    // and the days its predecessors have left at their query's records per day so far) fall
    // short; where no rate is known yet, at most one page per slot of the window is read ahead.
    const limitRates = limit === Infinity ? undefined : (rates ?? new Map<number, number>());
    let expected = this.written + this.pageLeft;
    let needed = 0;
    for (const [i, part] of parts.entries()) {
      if (part.next !== null) needed++;
      const expectedBefore = expected;
      if (limitRates) expected += this.recordsToCome(part, limitRates);
      if (part.inFlight || part.next === null || part.error !== undefined) continue;
      if (i === 0) {
        if (this.writerMayRead(part)) ready.push(part);
        continue;
      }
      const more = ready.length;
      const rated = !limitRates || limitRates.has(part.phase) || total.pages + more < scheduler.parallel;
      const wanted = expectedBefore + (total.inFlight + more + 1) * pageSize <= limit + (limitRates ? 0 : Infinity) && rated;
      if (this.lookAhead && (limit === Infinity || wanted) && this.budget.allows(needed, total.pages + more + 1)) ready.push(part);
    }
    return ready;
  }

  /** The records `part` holds, asks for, and will likely give over its days left (for --limit). */
  private recordsToCome(part: Part, rates: Map<number, number>): number {
    return holdingOf([part], 0).records + (part.inFlight ? this.options.pageSize : 0) + (this.spans?.expectedLeft(part, rates) ?? 0);
  }

  /** The writer's own part reads a few pages ahead, unless --limit has what it needs in hand. */
  private writerMayRead(part: Part): boolean {
    const inHand = this.pageLeft + holdingOf([part], 0).records;
    return part.buffer.length < this.bufferCap && this.written + inHand < this.options.limit;
  }

  private fetch(part: Part, priority: Priority): void {
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
    this.options.scheduler
      .run(priority, (slot) => this.options.source.fetch(url, part.base, slot.throttle))
      .then(
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
      part.chain = this.guard.follow(part.chain, page.records, url, page.next !== null || page.refusal !== undefined);
    } catch (err) {
      this.fail(part, err);
      return;
    }
    const taken: TakenPage = { url, records: page.records, next: page.next, skip };
    part.next = page.next;
    if (page.next !== null) part.skipFirst = skipAfter(taken);
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
    if (this.spans && part.next !== null && url === this.options.plan.phases[part.phase]) {
      const position = this.spans.positionOf(part, part.next);
      if (position !== undefined)
        this.spans.sample(
          part.phase,
          page.records.map((record) => String(record.id)),
          position,
        );
    }
    if (part.firstDay === undefined && this.spans && part.next !== null) {
      part.firstDay = this.spans.positionOf(part, part.next);
      part.firstRecords = part.recordsRead;
    }
    // A slice whose pages reach past its own days: the service ignores the far bound. Its query
    // goes on as this one chain (takeRestOfPhase), cut no further.
    const position = this.spans && part.next !== null ? this.spans.positionOf(part, part.next) : undefined;
    if (position !== undefined && this.rule && pastOwnDays(part, position, this.rule)) {
      this.distrust();
      takeRestOfPhase(this.parts, part, this.rule);
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
   * Cuts in two the part that most needs it (PartSpans.widest), `waiting` being the parts about to
   * ask for a page; answers the parts ready after the cut. A cut whose new part may not start now
   * (the page budget, --limit) is undone: no part is ever cut finer while it waits.
   */
  private splitWidest(waiting: readonly Part[], rates: Map<number, number> | undefined): Part[] | undefined {
    if (!this.spans) return undefined;
    const parts = this.parts.slice(this.writerAt);
    // Each query with pages left gets its share of the window's requests: the first to answer
    // does not take every slot while another, as long, still waits for its first page.
    const phases = new Set<number>();
    const busy = new Map<number, number>();
    for (const part of parts) {
      if (part.next !== null || part.inFlight) phases.add(part.phase);
      if (part.inFlight || waiting.includes(part)) busy.set(part.phase, (busy.get(part.phase) ?? 0) + 1);
    }
    const share = Math.ceil(this.options.scheduler.window / Math.max(1, phases.size));
    // As ready() will judge it: the new half follows the part cut, with one page more asked for.
    const held = holdingOf(parts, this.pageLeft).pages + waiting.length + 1;
    let needed = 0;
    const room = (part: Part): boolean => this.budget.allows((needed += part.next !== null ? 1 : 0) + 1, held);
    const cut = this.spans.widest(parts, busy, share, room, rates);
    if (!cut) return undefined;
    const { part } = cut;
    const uncut = { ...part };
    const rest = this.splitAt(part, cut.mid);
    const ready = this.ready(rates);
    if (ready.includes(rest)) return ready;
    for (const key of ['lo', 'hi'] as const) {
      if (uncut[key] === undefined) delete part[key];
      else part[key] = uncut[key];
    }
    Object.assign(part, { base: uncut.base, next: uncut.next, first: uncut.first });
    this.parts.splice(this.parts.indexOf(rest), 1);
    return undefined;
  }

  /** Cuts `part` after day `mid` (see splitPart); the rest follows it. */
  private splitAt(part: Part, mid: number): Part {
    const rest = splitPart(part, mid, this.options.plan.phases[part.phase] as string, this.rule as SliceRule);
    this.parts.splice(this.parts.indexOf(part) + 1, 0, rest);
    return rest;
  }
}
