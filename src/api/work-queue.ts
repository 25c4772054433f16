/**
 * The work queue of a list run: its slices in writer order, each a chain of pages (a phase of the
 * plan, or a date slice of one). With --parallel above 1, slices ahead of the writer read too,
 * within a budget of pages, and a slice about to read that is expected to hold more than its share
 * is cut. Days run in the sort order (see SliceDays), so the code reads as ascending.
 */
import type { ListPlan, NextStep, PageSource } from './paging.js';
import { PageGuard, type ChainState } from './page-guard.js';
import type { ResumePoint } from './resume-token.js';
import type { Scheduler } from './scheduler.js';
import { SliceDays, type Probed } from './slices.js';

/** A page as the writer takes it. */
export interface TakenPage {
  url: string;
  records: Record<string, unknown>[];
  next: string | null;
  /** Records from its start that the run this one continues wrote (beyond its length: the next page's). */
  skip: number;
  /** The next link was refused: a run continuing the list reads this page again. */
  nextRefused?: boolean;
}

/** Records read over days: a slice's or a phase's records per day. */
type Pace = { records: number; days: number };

export interface Slice {
  readonly phase: number;
  /** First and last day in the sort order; undefined: the phase's own bound. */
  lo?: number;
  hi?: number;
  /** The address of its first page (a token at its start), and the query its links are checked against. */
  first: string;
  base: string;
  next: string | null;
  /** Records of the next page the run this one continues wrote (its first page only). */
  skipFirst: number;
  pagesRead: number;
  recordsRead: number;
  /** The day its chain has reached: every record before it was read (the keyset bound of its next link). */
  reached?: number;
  pace: Pace;
  inFlight: boolean;
  error?: unknown;
  buffer: TakenPage[];
  chain?: ChainState;
  /** The address the guard already knows as read (entered when the page linking to it came). */
  entered?: string;
}

export interface QueueOptions {
  plan: ListPlan;
  source: PageSource;
  scheduler: Scheduler;
  start: ResumePoint;
  pageSize: number;
  limit: number;
}

/** Pages a chain aims to hold: long enough to pay for its cut, short enough that chains end together. */
const SHARE_PAGES = 4;
/** Pages left that a slice reads as they come, whatever slots are idle. */
const SHORT_PAGES = 2;
/** Pages the slices ahead of the writer may hold, per slot of --parallel. */
const BUDGET_PAGES = 8;

export class WorkQueue {
  readonly slices: Slice[];
  /** Records written so far, and those of the page being written; set by the writer. */
  written = 0;
  pageLeft = 0;
  private writerAt = 0;
  private stopped = false;
  /**
   * A record came twice within one query: the service does not keep to the slices' bounds, or a
   * sort date moved. The writer leaves the repeat out; nothing is cut any further.
   */
  distrusted = false;
  private readonly guard = new PageGuard();
  private readonly days: SliceDays | undefined;
  private readonly parallel: boolean;
  private readonly paces: Pace[];
  private wake!: () => void;
  /** Resolved at the next change (a page came, a slice failed): what take() waits for. */
  private changed = new Promise<void>((resolve) => (this.wake = resolve));

  constructor(private readonly options: QueueOptions) {
    const { plan, start, scheduler } = options;
    this.parallel = (plan.union === true || plan.slicing !== undefined) && scheduler.parallel > 1;
    this.days = plan.slicing && new SliceDays(plan, plan.slicing, { probe: (address) => this.probe(address), changed: () => this.pump() });
    this.paces = plan.phases.map(() => ({ records: 0, days: 0 }));
    this.slices = plan.phases.slice(start.phase).map((address, i) => newSlice(start.phase + i, address));
    // A resumed run: its first slice starts at the token's page, which may reach past the slice's end (narrowed to it; the rest follows).
    const first = this.slices[0] as Slice;
    if (start.url !== first.first) {
      first.first = first.next = start.url;
      first.pagesRead = 1;
    }
    first.skipFirst = start.skip;
    if (this.days && start.end !== undefined) this.cut(first, this.days.fromDay(start.end));
  }

  /** Waits for a page of the writer's slice `index`; null when the slice is done. */
  async take(index: number): Promise<TakenPage | null> {
    const slice = this.slices[index] as Slice;
    this.writerAt = index;
    for (;;) {
      const page = slice.buffer.shift();
      if (page) {
        this.pageLeft = recordsLeftOf(page);
        this.pump();
        return page;
      }
      if (slice.error !== undefined) throw slice.error;
      if (slice.next === null && !slice.inFlight) return null;
      this.pageLeft = 0;
      // Taken before pump(): a failure pump() meets at once must wake this wait.
      const changed = this.changed;
      this.pump();
      await changed;
    }
  }

  /** The run is over (done, --limit, a failure): nothing more is asked for. */
  stop(): void {
    this.stopped = true;
  }

  /** The last day of a slice for a token (a day as the date bounds count it); undefined: the phase's own. */
  endOf(slice: Slice): number | undefined {
    return this.days?.dayOf(slice.hi);
  }

  private notify(): void {
    const wake = this.wake;
    this.changed = new Promise((resolve) => (this.wake = resolve));
    wake();
  }

  /** Starts what may start now; a fault in it fails the writer's slice rather than going unseen. */
  private pump(): void {
    if (this.stopped) return;
    try {
      this.startReady();
    } catch (err) {
      this.fail(this.slices[this.writerAt] as Slice, err);
    }
  }

  private startReady(): void {
    const { scheduler, limit, pageSize } = this.options;
    let { held, records, readableAhead } = this.holding();
    const writer = this.slices[this.writerAt] as Slice;
    // The writer's own slice reads a few pages ahead (one at a time: one), unless --limit has what it needs in hand.
    const writerMay = writer.buffer.length < (this.parallel ? SHARE_PAGES : 1) && this.written + this.pageLeft + heldRecords(writer) < limit;
    for (let at = this.writerAt; at < this.slices.length; at++) {
      const slice = this.slices[at] as Slice;
      if (!readable(slice)) continue;
      readableAhead--;
      const may = at === this.writerAt ? writerMay : this.parallel && scheduler.spare > 0 && held < BUDGET_PAGES * scheduler.parallel && records < limit;
      if (may) {
        const idleSlots = Math.max(0, scheduler.spare - 1 - readableAhead);
        const rest = this.parallel && !this.distrusted ? this.cutBeforeReading(slice, idleSlots) : undefined;
        if (rest) readableAhead++;
        this.fetch(slice, at - this.writerAt);
        held++;
      }
      // For --limit: the records a slice with pages left likely gives come before the next one's.
      if (this.parallel && limit !== Infinity && records < limit) records += Math.max(pageSize, this.left(slice)?.records ?? 0);
    }
  }

  /** Pages held or asked for by the slices from the writer's on, the records among them (a page in flight counts whole), and the slices that could read. */
  private holding(): { held: number; records: number; readableAhead: number } {
    const holding = { held: 0, records: this.written + this.pageLeft, readableAhead: 0 };
    for (const slice of this.slices.slice(this.writerAt)) {
      holding.held += slice.buffer.length + (slice.inFlight ? 1 : 0);
      holding.records += (slice.inFlight ? this.options.pageSize : 0) + heldRecords(slice);
      if (readable(slice)) holding.readableAhead++;
    }
    return holding;
  }

  /** Records per day of a slice's own chain once it has read over a day, else its phase's so far. */
  private rateOf(slice: Slice): number | undefined {
    const pace = slice.pace.days >= 1 ? slice.pace : (this.paces[slice.phase] as Pace);
    return pace.days >= 1 ? pace.records / pace.days : undefined;
  }

  /** The days a slice has still to read and the records they likely hold; undefined while either end or the rate is unknown. */
  private left(slice: Slice): { lo: number; hi: number; records: number } | undefined {
    const lo = slice.pagesRead > 0 ? slice.reached : slice.lo;
    if (!this.days || slice.skipFirst > 0 || lo === undefined) return undefined;
    const hi = slice.hi ?? this.days.lastDay(slice.phase, lo, slice.pagesRead > SHORT_PAGES);
    const rate = this.rateOf(slice);
    return hi === undefined || rate === undefined || hi < lo ? undefined : { lo, hi, records: rate * (hi - lo + 1) };
  }

  /**
   * Cuts a slice about to read that is expected to hold more than two shares (or, where slots
   * would stay idle, more than a page): it keeps a share (or the records left spread over the
   * idle slots, a page at least), the rest follows it.
   */
  private cutBeforeReading(slice: Slice, idleSlots: number): Slice | undefined {
    const left = this.left(slice);
    if (!left || left.hi === left.lo) return undefined;
    const { lo, hi, records } = left;
    const { pageSize } = this.options;
    // With slots idle, a slice is cut where more than SHORT_PAGES are left: a list of three pages
    // pays for no check of the bound a cut adds (at most one request more than --parallel 1).
    const piece = idleSlots > 0 ? Math.max(pageSize, Math.min(SHARE_PAGES * pageSize, records / (idleSlots + 1))) : SHARE_PAGES * pageSize;
    if (records <= (idleSlots > 0 ? SHORT_PAGES * pageSize : 2 * piece) || !this.days?.nearKept(slice.phase)) return undefined;
    return this.cut(slice, lo + Math.max(1, Math.round((piece / records) * (hi - lo + 1))) - 1);
  }

  /** Cuts `slice` after day `mid`: it keeps the days up to mid, its links narrowed to them; the rest follows it. */
  private cut(slice: Slice, mid: number): Slice {
    const days = this.days as SliceDays;
    const rest = { ...newSlice(slice.phase, days.narrowed(this.options.plan.phases[slice.phase] as string, mid + 1, slice.hi)), lo: mid + 1, hi: slice.hi };
    slice.hi = mid;
    slice.base = days.narrowed(slice.base, undefined, mid);
    slice.next = days.narrowed(slice.next as string, undefined, mid);
    if (slice.pagesRead === 0) slice.first = slice.next;
    this.slices.splice(this.slices.indexOf(slice) + 1, 0, rest);
    return rest;
  }

  /** A probe (a page or two of the list in some order) through the scheduler, ahead of the pages; not a page of the run. */
  private probe(address: string): Promise<Probed> {
    const answer = this.options.scheduler.run(-1, (slot) => this.options.source.fetch(address, address, slot.throttle));
    return answer.then(
      (page) => ({ ids: page.records.map((record) => String(record.id)), next: page.next }),
      () => null,
    );
  }

  private fetch(slice: Slice, priority: number): void {
    const url = slice.next as string;
    try {
      if (slice.entered !== url) this.guard.enter(url);
    } catch (err) {
      this.fail(slice, err);
      return;
    }
    slice.inFlight = true;
    const skip = slice.skipFirst;
    slice.skipFirst = 0;
    this.options.scheduler
      .run(priority, (slot) => this.options.source.fetch(url, slice.base, slot.throttle))
      .then((page) => this.arrived(slice, url, skip, page))
      // A page the guard refuses (or any fault on arrival) fails its slice like a failed request.
      .catch((err: unknown) => this.fail(slice, err));
  }

  private arrived(slice: Slice, url: string, skip: number, page: { records: Record<string, unknown>[] } & NextStep): void {
    slice.inFlight = false;
    slice.pagesRead++;
    slice.recordsRead += page.records.length;
    const taken: TakenPage = { url, records: page.records, next: page.next, skip };
    slice.next = page.next;
    if (page.next !== null) slice.skipFirst = Math.max(0, skip - page.records.length);
    slice.chain = this.guard.follow(slice.chain, page.records, url, page.next !== null || page.refusal !== undefined);
    let refusal: unknown = page.refusal;
    if (refusal === undefined && page.next !== null) {
      try {
        this.guard.enter(page.next);
        slice.entered = page.next;
      } catch (err) {
        refusal = err;
      }
    }
    if (refusal !== undefined) {
      taken.nextRefused = true;
      slice.next = null;
      slice.error = refusal;
    }
    if (this.days && refusal === undefined) this.advance(slice, url, page.records, slice.next);
    slice.buffer.push(taken);
    this.notify();
    this.pump();
  }

  /**
   * What a page tells of the days: the slice's and its phase's pace, and a service that reads past a
   * slice's end. A slice's last page tells that its days are read to its end: an empty slice lowers
   * the pace (else a long span without records is walked in slices sized by the records before it).
   */
  private advance(slice: Slice, url: string, records: Record<string, unknown>[], next: string | null): void {
    const days = this.days as SliceDays;
    const position = next === null ? (slice.hi === undefined ? undefined : slice.hi + 1) : days.positionOf(next, slice.base, slice.recordsRead);
    if (position === undefined) return;
    if (next !== null && url === this.options.plan.phases[slice.phase])
      days.sample(slice.phase, records, position, this.parallel && this.options.limit === Infinity);
    const from = slice.reached ?? slice.lo ?? days.bound(slice.phase, 'near');
    slice.reached = position;
    if (from !== undefined) {
      // A slice's own pace weighs its recent pages most (halved at each page): data is denser in some days than others.
      slice.pace = { records: slice.pace.records / 2 + records.length, days: slice.pace.days / 2 + position - from };
      const phase = this.paces[slice.phase] as Pace;
      phase.records += records.length;
      phase.days += position - from;
    }
    // Its pages reach past its own last day: the service ignores the far bound. Its query goes on
    // as this one chain; the slices after it in its phase would repeat it.
    const at = this.slices.indexOf(slice);
    // (A slice dropped while its page was in flight: nothing more to drop.)
    if (next === null || at < 0 || slice.hi === undefined || position <= slice.hi) return;
    this.distrusted = true;
    let end = at + 1;
    while (end < this.slices.length && this.slices[end]?.phase === slice.phase) end++;
    this.slices.splice(at + 1, end - at - 1);
    delete slice.hi;
  }

  private fail(slice: Slice, err: unknown): void {
    slice.inFlight = false;
    slice.error = err;
    slice.next = null;
    this.notify();
  }
}

function newSlice(phase: number, first: string): Slice {
  return { phase, first, base: first, next: first, skipFirst: 0, pagesRead: 0, recordsRead: 0, pace: { records: 0, days: 0 }, inFlight: false, buffer: [] };
}

/** Records a slice holds that are still to be written. */
const heldRecords = (slice: Slice): number => slice.buffer.reduce((sum, page) => sum + recordsLeftOf(page), 0);

/** The records of a page still to be written (the run this one continues wrote `skip` of them). */
const recordsLeftOf = (page: TakenPage): number => Math.max(0, page.records.length - page.skip);

const readable = (slice: Slice): boolean => slice.next !== null && !slice.inFlight && slice.error === undefined;
