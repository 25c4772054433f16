/**
 * The work queue of a list run: its slices in the order the consumer (list-run.ts) takes them, each a chain of pages. How it
 * decides what to read and where to cut: docs/ARCHITECTURE.md, "The list engine". Days are ordered days (see SliceDays).
 */
import type { ListPlan, PageSource } from './paging.js';
import { PageGuard, type ChainState } from './page-guard.js';
import type { ResumePoint } from './resume-token.js';
import type { Scheduler } from './scheduler.js';
import { SliceDays, type Probed } from './slices.js';

/** A page as the consumer takes it. */
export interface TakenPage {
  url: string;
  records: Record<string, unknown>[];
  next: string | null;
  /** Records from its start that the run this one continues wrote (beyond its length: the next page's). */
  writtenBefore: number;
  /** The next link was refused: a run continuing the list reads this page again. */
  nextRefused?: boolean;
}

/** Records read over days: a slice's or a phase's records per day. */
type Pace = { records: number; days: number };

/** A slice's chain: its first page (a token's, resumed), the query its links keep, its next page and the records of it the run this one
 * continues wrote, the pages not taken yet, what the guard keeps of it and the address it has entered already. */
interface Chain {
  first: string;
  base: string;
  next: string | null;
  writtenBefore: number;
  inFlight: boolean;
  error?: unknown;
  buffer: TakenPage[];
  guardState?: ChainState;
  entered?: string;
}

/** What a slice's chain has read; `reached`: the day of its next link's keyset bound (every record before it was read). */
type SliceStats = { pagesRead: number; recordsRead: number; reached?: number; pace: Pace };

/** A phase or a date slice of one: first and last day in the sort order (undefined: the phase's own), its chain, what that read, the slice after it. */
export interface Slice {
  readonly phase: number;
  readonly range: { lo?: number; hi?: number };
  readonly chain: Chain;
  readonly stats: SliceStats;
  following?: Slice;
}

/** What decides a cut: the days a slice has left (lo..hi), the records they likely hold, the page size, the slots that would stay idle. */
export type CutStats = { lo: number; hi: number; records: number; pageSize: number; idleSlots: number };

export type QueueOptions = { plan: ListPlan; source: PageSource; scheduler: Scheduler; start: ResumePoint; pageSize: number; limit: number };

/** A share: the pages a chain aims to hold, long enough to pay for its cut, short enough that chains end together. */
const SHARE_PAGES = 4;
/** Pages the consumer's slice keeps read ahead when slicesAtOnce: it rarely waits, yet ahead slices get the slots. */
const READ_AHEAD_PAGES = 4;
/** Pages left that a slice reads as they come, whatever slots are idle. */
const SHORT_PAGES = 2;
/** Pages the slices from the one being written on may hold, per slot of the window in force. */
const BUDGET_PAGES = 8;
/** Pages a chain has read past which an ascending list probes for its far end: a short list sends no probe. */
const LONG_CHAIN_PAGES = 2;
/** Shares a slice holds before it is cut with no slot idle: cut at one, each half would soon be cut again. */
const CUT_AT_SHARES = 2;
/** What a slice's pace keeps of its pages before the last at each page: data is denser in some days than others. */
const PACE_DECAY = 1 / 2;

/**
 * The last day a slice about to read keeps, or undefined to leave it whole: cut where it likely holds more than CUT_AT_SHARES
 * shares (with slots idle, more than SHORT_PAGES: a list of three pages pays for no probe of the bound a cut adds), it keeps a
 * share (with slots idle, the records spread over them, a page at least); the rest follows it.
 */
export function planCut({ lo, hi, records, pageSize, idleSlots }: CutStats): number | undefined {
  if (hi <= lo) return undefined;
  const kept = idleSlots > 0 ? Math.max(pageSize, Math.min(SHARE_PAGES * pageSize, records / (idleSlots + 1))) : SHARE_PAGES * pageSize;
  if (records <= (idleSlots > 0 ? SHORT_PAGES * pageSize : CUT_AT_SHARES * kept)) return undefined;
  return lo + Math.max(1, Math.round((kept / records) * (hi - lo + 1))) - 1;
}

export class WorkQueue {
  /** The first slice (each names the one after it), the slice the consumer takes pages of, the records written and those of its page. */
  readonly head: Slice;
  private writing: Slice;
  private written = 0;
  private pageLeft = 0;
  private stopped = false;
  /** A record came twice within one query (the service strays from the slices' bounds, or a sort date moved): no more cuts. */
  private distrusted = false;
  private readonly guard = new PageGuard();
  private readonly days: SliceDays | undefined;
  /** A union or slicing: several slices may read at once, while the window in force is above 1. */
  private readonly sliceable: boolean;
  private readonly paces: Pace[];
  /** Phases whose near-bound probe goes out with the next pump (see SliceDays.sample). */
  private readonly probeSoon = new Set<number>();
  private pumpQueued = false;
  /** A phase's first slice and its recent slice, read at once and held after their first pages until both answered (see readRecent). */
  private undecided: { first: Slice; recent: Slice } | undefined;
  /** A recent slice was read: it costs a short list the one request more a probe would have. */
  private recentRead = false;
  /** Resolves the consumer's wait in take() for a change (a page came, a slice failed, a probe answered); once is enough. */
  private wakeConsumer = (): void => undefined;

  constructor(private readonly options: QueueOptions) {
    const { plan, start } = options;
    this.sliceable = plan.union === true || plan.slicing !== undefined;
    this.days = plan.slicing && new SliceDays(plan, plan.slicing, { probe: (address) => this.probe(address), changed: () => this.changed() });
    this.paces = plan.phases.map(() => ({ records: 0, days: 0 }));
    const slices = plan.phases.slice(start.phase).map((address, i) => newSlice(start.phase + i, address));
    slices.forEach((slice, i) => (slice.following = slices[i + 1]));
    this.head = this.writing = slices[0] as Slice;
    // A resumed run: its first slice starts at the token's page, which may reach past the slice's end (narrowed to it; the rest follows).
    const chain = this.head.chain;
    if (start.url !== chain.first) {
      chain.first = chain.next = start.url;
      this.head.stats.pagesRead = 1;
    }
    chain.writtenBefore = start.writtenBefore;
    if (this.days && start.sliceLastDay !== undefined) this.cut(this.head, this.days.toOrdered(start.sliceLastDay));
    // The last phase's only (a union's larger query, as a rule): two short queries cost one request more than one at a time, not two.
    const last = slices.at(-1) as Slice;
    if (this.slicesAtOnce && options.limit === Infinity && last.chain.first === plan.phases[last.phase]) this.readRecent(last);
  }

  /** Several slices read at once: the window the scheduler has now (not --parallel's ceiling) holds more than one. */
  private get slicesAtOnce(): boolean {
    return this.sliceable && this.options.scheduler.window > 1;
  }

  /** Waits for the consumer's next page of `slice`; null when the slice has no more. */
  async take(slice: Slice): Promise<TakenPage | null> {
    this.writing = slice;
    const { chain } = slice;
    for (;;) {
      const page = chain.buffer.shift();
      if (!page && chain.error !== undefined) throw chain.error;
      if (!page && chain.next === null && !chain.inFlight) return null;
      this.pageLeft = page ? recordsLeftOf(page) : 0;
      this.schedulePump();
      if (page) return page;
      await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
    }
  }

  /** The consumer wrote a record. */
  recordWritten(): void {
    this.written++;
  }

  /** The consumer met a record twice within one query (see `distrusted`). */
  distrust(): void {
    this.distrusted = true;
  }

  /** The run is over (finished, --limit, a failure): nothing more is asked for. */
  stop(): void {
    this.stopped = true;
  }

  /** The first slice (no argument), or the one after `slice`. */
  next(slice?: Slice): Slice | undefined {
    return slice ? slice.following : this.head;
  }

  /** A slice's phase, first page, and the calendar day it ends with for a token (undefined: the phase's own). */
  place(slice: Slice): { phase: number; first: string; sliceLastDay?: number } {
    const sliceLastDay = this.days?.toCalendar(slice.range.hi);
    return { phase: slice.phase, first: slice.chain.first, ...(sliceLastDay !== undefined && { sliceLastDay }) };
  }

  /** A page came or a probe answered: the consumer looks again, and what may start now starts. */
  private changed(): void {
    this.schedulePump();
    this.wakeConsumer();
  }

  /** Runs pump() once after this event (however many events come before it). */
  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => this.pump());
  }

  /** Starts what may start now: the one place requests are sent from. A fault in it fails the slice being written rather than going unseen. */
  private pump(): void {
    this.pumpQueued = false;
    if (this.stopped) return;
    try {
      if (!this.undecided) {
        for (const phase of this.probeSoon) this.days?.probeNear(phase);
        this.probeSoon.clear();
      }
      this.startReady();
    } catch (err) {
      this.fail(this.writing, err);
    }
  }

  private startReady(): void {
    const { scheduler, limit, pageSize } = this.options;
    let { held, records, readableAhead } = this.holding();
    const writing = this.writing;
    // The slice being written reads a few pages ahead (one at a time: one), unless --limit has what it needs in hand.
    const writingReads =
      writing.chain.buffer.length < (this.slicesAtOnce ? READ_AHEAD_PAGES : 1) && this.written + this.pageLeft + heldRecords(writing) < limit;
    // A slice cut in this loop is followed by its later days: they come next.
    for (let slice: Slice | undefined = writing, ahead = 0; slice; slice = slice.following, ahead++) {
      if (!this.canRead(slice)) continue;
      readableAhead--;
      const reads = slice === writing ? writingReads : this.readsAhead(held, records);
      const cuts = reads && this.slicesAtOnce && scheduler.heldWindow > 1 && !this.distrusted;
      const counts = this.slicesAtOnce && limit !== Infinity && records < limit;
      // What the estimates below lack is probed for first.
      if (cuts || counts) this.probeFarEnd(slice);
      if (reads) {
        const idleSlots = Math.max(0, scheduler.spareHeld - 1 - readableAhead);
        if (cuts && this.cutBeforeReading(slice, idleSlots, limit - records)) readableAhead++;
        this.fetch(slice, ahead);
        held++;
      }
      // For --limit: the records a slice with pages left likely gives come before the next one's.
      if (counts) records += Math.max(pageSize, this.left(slice)?.records ?? 0);
    }
  }

  /** Whether a slice ahead of the one being written may read: slicesAtOnce, a slot spare, within the budget of pages and --limit. */
  private readsAhead(held: number, records: number): boolean {
    const { scheduler, limit } = this.options;
    return this.slicesAtOnce && scheduler.spare > 0 && held < BUDGET_PAGES * scheduler.window && records < limit;
  }

  /** Pages held or asked for by the slices from the one being written on, the records among them (a page in flight counts whole), and the slices that could read. */
  private holding(): { held: number; records: number; readableAhead: number } {
    const holding = { held: 0, records: this.written + this.pageLeft, readableAhead: 0 };
    for (let slice: Slice | undefined = this.writing; slice; slice = slice.following) {
      holding.held += slice.chain.buffer.length + (slice.chain.inFlight ? 1 : 0);
      holding.records += (slice.chain.inFlight ? this.options.pageSize : 0) + heldRecords(slice);
      if (this.canRead(slice)) holding.readableAhead++;
    }
    return holding;
  }

  /** The first day a slice has still to read; undefined while unknown (or its first page is a resumed one, partly written). */
  private fromDay(slice: Slice): number | undefined {
    if (!this.days || slice.chain.writtenBefore > 0) return undefined;
    return slice.stats.pagesRead > 0 ? slice.stats.reached : slice.range.lo;
  }

  /** Probes for the phase's far end where the days left of an open slice need it. */
  private probeFarEnd(slice: Slice): void {
    const lo = this.fromDay(slice);
    if (slice.range.hi === undefined && lo !== undefined && this.days?.farEndWanted(slice.phase, lo, slice.stats.pagesRead > LONG_CHAIN_PAGES))
      this.days.probeFarEnd(slice.phase);
  }

  /**
   * The days a slice has still to read and the records they likely hold, at its own chain's pace once that covers a day, else its
   * phase's; undefined while either end or the pace is unknown.
   */
  private left(slice: Slice): { lo: number; hi: number; records: number } | undefined {
    const lo = this.fromDay(slice);
    const hi = slice.range.hi ?? this.days?.lastDay(slice.phase);
    const pace = slice.stats.pace.days >= 1 ? slice.stats.pace : (this.paces[slice.phase] as Pace);
    if (lo === undefined || hi === undefined || pace.days < 1 || hi < lo) return undefined;
    return { lo, hi, records: (pace.records / pace.days) * (hi - lo + 1) };
  }

  /**
   * Cuts a slice about to read where planCut says, once the service is known to keep to the bound a cut adds; true when it cut.
   * `wanted`: the records --limit still asks for beyond those held; no more than SHORT_PAGES of them are read as they come, as a
   * short list's are (a --limit of three pages pays for no probe).
   */
  private cutBeforeReading(slice: Slice, idleSlots: number, wanted: number): boolean {
    if (wanted <= SHORT_PAGES * this.options.pageSize) return false;
    const left = this.left(slice);
    const mid = left && planCut({ ...left, pageSize: this.options.pageSize, idleSlots });
    const days = this.days as SliceDays;
    if (mid === undefined) return false;
    // Recent days still undecided answer for every phase (settleRecent): no probe beside them.
    if (!this.undecided) days.probeNear(slice.phase);
    if (!days.nearKept(slice.phase)) {
      // Asked again at the next pump until answered: the probe may take two requests, each sent from a pump.
      this.probeSoon.add(slice.phase);
      return false;
    }
    this.cut(slice, mid);
    return true;
  }

  /** Cuts `slice` after day `mid`: it keeps the days up to mid, its links narrowed to them; a new slice of the later days follows it. */
  private cut(slice: Slice, mid: number): void {
    const laterDays = this.slice(slice.phase, mid + 1, slice.range.hi);
    this.narrow(slice, mid);
    laterDays.following = slice.following;
    slice.following = laterDays;
  }

  /** A new slice of a phase's days lo..hi (undefined: the phase's own end). */
  private slice(phase: number, lo: number, hi: number | undefined): Slice {
    return newSlice(phase, (this.days as SliceDays).narrowed(this.options.plan.phases[phase] as string, lo, hi), { lo, hi });
  }

  /** Ends a slice with day `mid`: its links are narrowed to it. */
  private narrow(slice: Slice, mid: number): void {
    const days = this.days as SliceDays;
    const { range, chain } = slice;
    range.hi = mid;
    chain.base = days.narrowed(chain.base, undefined, mid);
    chain.next = days.narrowed(chain.next as string, undefined, mid);
    if (slice.stats.pagesRead === 0) chain.first = chain.next;
  }

  /**
   * Reads a phase's recent days (SliceDays.recentFrom) as a slice of their own, sent with its first page: the two answers tell
   * at once whether the service keeps the bound a cut adds, and the records a day, so that the window fills a round trip sooner
   * than with a probe after the first page. Both read no further until both answered; then the first slice ends where the
   * recent one begins, or, where that cannot be told (the list ends on its first page, reaches into the recent days, or the
   * service ignores the bound), the recent slice leaves the order unwritten and the first reads on as it would have.
   */
  private readRecent(first: Slice): void {
    const from = this.days?.recentFrom(first.phase);
    if (from === undefined) return;
    const recent = this.slice(first.phase, from, undefined);
    recent.following = first.following;
    first.following = recent;
    this.undecided = { first, recent };
    this.recentRead = true;
  }

  /** After an answer (or a failure) of a slice: if it and its pair have both answered, keeps the recent slice or drops it. */
  private settleRecent(slice: Slice): void {
    if (!this.undecided || !this.paired(slice)) return;
    const { first, recent } = this.undecided;
    if (first.chain.inFlight || recent.chain.inFlight) return;
    this.undecided = undefined;
    // Its page tells even where its link was refused (a service ignoring the bound may link from the list's start).
    const page = recent.chain.buffer[0];
    const from = recent.range.lo as number;
    const kept = first.chain.next !== null && page !== undefined && this.days?.recentKept(first.phase, from, page.records);
    // Where the first page reached into the recent days, they would repeat it; what they tell stays.
    if (kept && recent.chain.error === undefined && (first.stats.reached as number) < from) return this.narrow(first, from - 1);
    first.following = recent.following;
    Object.assign(recent.chain, { next: null, buffer: [], error: undefined });
  }

  /** Whether a slice may send its next request: it has one, none in flight, no failure, and no pair to wait for past its first page. */
  private canRead(slice: Slice): boolean {
    return readable(slice) && !(this.paired(slice) && slice.stats.pagesRead > 0);
  }

  /** A phase's first slice or its recent slice, still undecided (readRecent). */
  private paired(slice: Slice): boolean {
    return slice === this.undecided?.first || slice === this.undecided?.recent;
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
    const { chain } = slice;
    const url = chain.next as string;
    const refusal = chain.entered === url ? undefined : this.guard.tryEnter(url);
    if (refusal) return this.fail(slice, refusal);
    chain.inFlight = true;
    const writtenBefore = chain.writtenBefore;
    chain.writtenBefore = 0;
    this.options.scheduler
      .run(priority, (slot) => this.options.source.fetch(url, chain.base, slot.throttle))
      .then((page) => this.arrived(slice, { url, records: page.records, next: page.next, writtenBefore }, page.refusal))
      // A page the guard refuses (or any fault on arrival) fails its slice like a failed request.
      .catch((err: unknown) => this.fail(slice, err));
  }

  private arrived(slice: Slice, taken: TakenPage, linkRefusal: unknown): void {
    const { chain, stats } = slice;
    const { url, records, next } = taken;
    chain.inFlight = false;
    stats.pagesRead++;
    stats.recordsRead += records.length;
    chain.next = next;
    if (next !== null) chain.writtenBefore = Math.max(0, taken.writtenBefore - records.length);
    chain.guardState = this.guard.follow(chain.guardState, records, url, next !== null || linkRefusal !== undefined);
    const refusal = linkRefusal ?? (next === null ? undefined : this.guard.tryEnter(next));
    chain.buffer.push(taken);
    if (refusal !== undefined) {
      taken.nextRefused = true;
      this.fail(slice, refusal);
    } else if (next !== null) chain.entered = next;
    if (this.days && refusal === undefined) this.advance(slice, url, records, next);
    this.settleRecent(slice);
    this.changed();
  }

  /**
   * What a page tells of the days: the slice's and its phase's pace, and a service that reads past a
   * slice's end. A slice's last page tells that its days are read to its end: an empty slice lowers
   * the pace (else a long span without records is walked in slices sized by the records before it).
   */
  private advance(slice: Slice, url: string, records: Record<string, unknown>[], next: string | null): void {
    const days = this.days as SliceDays;
    const { range, stats } = slice;
    const position = this.positionAfter(slice, next);
    if (position === undefined) return;
    // Without a recent slice (readRecent), the near-bound probe goes out at once, a round trip sooner than when a cut needs it.
    const probeNow = this.slicesAtOnce && this.options.limit === Infinity && !this.recentRead;
    if (next !== null && url === this.options.plan.phases[slice.phase] && days.sample(slice.phase, records, position) && probeNow)
      this.probeSoon.add(slice.phase);
    const from = stats.reached ?? range.lo ?? days.bound(slice.phase, 'near');
    stats.reached = position;
    if (from !== undefined && position >= from) {
      stats.pace = { records: stats.pace.records * PACE_DECAY + records.length, days: stats.pace.days * PACE_DECAY + position - from };
      const phasePace = this.paces[slice.phase] as Pace;
      phasePace.records += records.length;
      phasePace.days += position - from;
    }
    // Its pages reach past its own last day: the service ignores the far bound. Its query goes on as this one chain; the slices
    // after it in its phase would repeat it: they leave the order (one with a page in flight still comes here; out of the order, unread).
    if (next === null || range.hi === undefined || position <= range.hi) return;
    this.distrusted = true;
    let after = slice.following;
    while (after?.phase === slice.phase) after = after.following;
    slice.following = after;
    delete range.hi;
  }

  /** The day a slice has read up to after a page: its next link's keyset bound; after its last page, the day after its end (an open slice's, as far as cuts go, the phase's last day). */
  private positionAfter(slice: Slice, next: string | null): number | undefined {
    const days = this.days as SliceDays;
    if (next !== null) return days.positionOf(next, slice.chain.base, slice.stats.recordsRead);
    const end = slice.range.hi ?? (slice.range.lo === undefined ? undefined : days.lastDay(slice.phase));
    return end === undefined ? undefined : end + 1;
  }

  private fail(slice: Slice, err: unknown): void {
    const { chain } = slice;
    chain.inFlight = false;
    chain.error = err;
    chain.next = null;
    this.settleRecent(slice);
    // Not changed(): a fault of pump() comes here, and would come again from the pump it scheduled.
    this.wakeConsumer();
  }
}

function newSlice(phase: number, first: string, range: Slice['range'] = {}): Slice {
  const chain: Chain = { first, base: first, next: first, writtenBefore: 0, inFlight: false, buffer: [] };
  return { phase, range, chain, stats: { pagesRead: 0, recordsRead: 0, pace: { records: 0, days: 0 } } };
}

/** Records a slice holds that are still to be written. */
const heldRecords = (slice: Slice): number => slice.chain.buffer.reduce((sum, page) => sum + recordsLeftOf(page), 0);

/** The records of a page still to be written (the run this one continues wrote `writtenBefore` of them). */
const recordsLeftOf = (page: TakenPage): number => Math.max(0, page.records.length - page.writtenBefore);

const readable = ({ chain }: Slice): boolean => chain.next !== null && !chain.inFlight && chain.error === undefined;
