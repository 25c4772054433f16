/**
 * The plain list planner (issue 46), a pure function: plan(state, event) → { state, requests }. The first page of a phase and its
 * far end give its span; it is cut into as many half-open day ranges as the window in force has idle slots, and a slice is
 * re-cut only when a slot would otherwise idle. The first cut of a phase tests the bound a cut adds: the cut slices' first pages
 * must not bring back the phase's first records; until one tells, the phase's first
 * slice reads no further, and where the service ignores the bound the cut slices leave the order unread. The pump
 * (plan-pump.ts) sends the requests and turns their answers into events. Days are ordered days (see SliceDays).
 */
import type { ListPlan, TakenPage } from './paging.js';
import type { ResumePoint } from './resume-token.js';
import { SliceDays } from './slices.js';

/** Where a slice is: its next page may be asked for, is in flight, waits for its phase's verdict on the bound, or it ended. */
type SliceStatus = { kind: 'ready' } | { kind: 'reading' } | { kind: 'held' } | { kind: 'done' } | { kind: 'failed'; error: unknown };

/** A probe's answer: the far end's ordered day. */
type ProbeAnswer = { kind: 'unasked' } | { kind: 'pending' } | { kind: 'known'; day: number } | { kind: 'failed' };

/** Whether the service keeps the bound a cut adds, as the phase's first cut told. */
export type Verdict = 'untold' | 'kept' | 'ignored';

export interface PlanSlice {
  readonly id: number;
  readonly phase: number;
  /** Its first and last ordered day; undefined: the phase's own. */
  readonly lo?: number;
  readonly hi?: number;
  readonly first: string;
  /** The query its links keep, and its next page (both narrowed to its days). */
  readonly base: string;
  readonly next: string | null;
  /** Records of its next page the run this one continues wrote. */
  readonly writtenBefore: number;
  readonly pages: readonly TakenPage[];
  readonly pagesRead: number;
  readonly recordsRead: number;
  /** The day its next link's keyset bound is at: every record before it was read. */
  readonly reached?: number;
  /** The records a day of its last page whose days are known. */
  readonly perDay?: number;
  readonly status: SliceStatus;
}

interface PhaseState {
  readonly far: ProbeAnswer;
  readonly verdict: Verdict;
  /** The ids of the phase's own first page, which a cut slice ignoring its bound brings back. */
  readonly sample?: readonly string[];
  /** No more cuts: a bound ignored, or a record met twice within one query. */
  readonly uncut: boolean;
  /** Records read over the days they span (pages whose first day is known): what a cut expects of the days left. */
  readonly pace?: { readonly records: number; readonly days: number };
}

interface PlanConfig {
  readonly plan: ListPlan;
  readonly pageSize: number;
  readonly limit: number;
  readonly days: SliceDays | undefined;
  /** A union or slicing: several slices may read at once. */
  readonly sliceable: boolean;
}

export interface PlanState {
  readonly config: PlanConfig;
  /** Every slice from the one being written on, in the order written. */
  readonly slices: readonly PlanSlice[];
  readonly phases: readonly PhaseState[];
  /** The consumer's slice, its count of records written and the records left of the page it took, as it last said. */
  readonly writing: number;
  readonly written: number;
  readonly pageLeft: number;
  readonly window: number;
  /** Requests sent and not answered (pages of slices left out of the order too). */
  readonly inFlight: number;
  readonly nextId: number;
  readonly stopped: boolean;
}

/** A page as the pump hands it over: its records, its next link, and why that link cannot be followed. */
export type Arrival = { url: string; records: Record<string, unknown>[]; next: string | null; refusal?: unknown };

export type PlanEvent =
  | { kind: 'window'; window: number }
  | { kind: 'take'; slice: number; written: number }
  | { kind: 'page'; slice: number; page: Arrival }
  | { kind: 'failed'; slice: number; error: unknown }
  | { kind: 'far'; phase: number; answer: ProbeAnswer }
  | { kind: 'repeat' }
  | { kind: 'stop' };

export type PlanRequest =
  { kind: 'page'; slice: number; url: string; base: string; priority: number } | { kind: 'far'; phase: number; url: string; priority: number };

type Planned = { state: PlanState; requests: PlanRequest[] };

/** Pages the consumer's slice keeps read ahead while several slices read: it rarely waits, yet slices ahead get the slots. */
const READ_AHEAD_PAGES = 4;
/** Pages a slice reads past the day the dates were resolved at before the far end is asked (a list of three pages pays no probe). */
const PAGES_PAST_END = 2;
/** Pages the slices from the one being written on may hold, per slot of the window in force. */
const BUDGET_PAGES = 16;

export function initialState(plan: ListPlan, start: ResumePoint, options: { pageSize: number; limit: number; window: number }): PlanState {
  const days = plan.slicing && new SliceDays(plan, plan.slicing);
  const config: PlanConfig = { plan, pageSize: options.pageSize, limit: options.limit, days, sliceable: plan.union === true || days !== undefined };
  const resumedCut = days && start.sliceLastDay !== undefined ? days.toOrdered(start.sliceLastDay) : undefined;
  // A token's last day says the run it continues saw the service keep the bound a cut adds.
  const phases = plan.phases.map((): PhaseState => ({ far: { kind: 'unasked' }, verdict: resumedCut === undefined ? 'untold' : 'kept', uncut: false }));
  const slices = plan.phases.slice(start.phase).map((address, i) => newSlice(i, start.phase + i, address));
  const head = slices[0] as PlanSlice;
  if (start.url !== head.first) slices[0] = { ...head, first: start.url, next: start.url, pagesRead: 1 };
  slices[0] = { ...(slices[0] as PlanSlice), writtenBefore: start.writtenBefore };
  const state: PlanState = {
    config,
    slices,
    phases,
    writing: 0,
    written: 0,
    pageLeft: 0,
    window: options.window,
    inFlight: 0,
    nextId: slices.length,
    stopped: false,
  };
  return resumedCut === undefined ? state : cut(state, 0, [resumedCut], true);
}

function newSlice(id: number, phase: number, first: string, range: { lo?: number; hi?: number } = {}): PlanSlice {
  return { id, phase, ...range, first, base: first, next: first, writtenBefore: 0, pages: [], pagesRead: 0, recordsRead: 0, status: { kind: 'ready' } };
}

/** The one planner: the state after `event`, and the requests to send now. */
export function plan(state: PlanState, event: PlanEvent): Planned {
  const next = apply(state, event);
  return next.stopped ? { state: next, requests: [] } : decide(next);
}

/** An answer the planner did not ask for (a slice in the order not reading, a far end not pending): a fault, never a quiet end. */
function expected(state: PlanState, event: PlanEvent): void {
  const fault = (what: string): never => {
    throw new Error(`the list planner did not expect a ${event.kind} event: ${what}`);
  };
  if (event.kind === 'take' && indexOf(state, event.slice) < 0) fault(`slice ${event.slice} is not in the order`);
  if (event.kind === 'page' || event.kind === 'failed') {
    const slice = state.slices[indexOf(state, event.slice)];
    if (slice && slice.status.kind !== 'reading') fault(`slice ${slice.id} is ${slice.status.kind}, not reading`);
  }
  const far = event.kind === 'far' ? state.phases[event.phase]?.far.kind : 'pending';
  if (far !== 'pending') fault(`the far end of phase ${event.kind === 'far' ? event.phase : ''} is ${far}`);
}

function apply(state: PlanState, event: PlanEvent): PlanState {
  if (!state.stopped) expected(state, event);
  switch (event.kind) {
    case 'window':
      return { ...state, window: event.window };
    case 'take':
      return taken(state, event.slice, event.written);
    case 'page':
      return arrived({ ...state, inFlight: state.inFlight - 1 }, event.slice, event.page);
    case 'failed':
      return failedSlice({ ...state, inFlight: state.inFlight - 1 }, event.slice, event.error);
    case 'far':
      return { ...setPhase(state, event.phase, { far: event.answer }), inFlight: state.inFlight - 1 };
    case 'repeat':
      return { ...state, phases: state.phases.map((phase) => ({ ...phase, uncut: true })) };
    case 'stop':
      return { ...state, stopped: true };
  }
}

const indexOf = (state: PlanState, id: number): number => state.slices.findIndex((slice) => slice.id === id);

/** `state` with slice `id` changed by `change` (a slice left out of the order: as it was). */
function update(state: PlanState, id: number, change: (slice: PlanSlice) => PlanSlice): PlanState {
  const at = indexOf(state, id);
  if (at < 0) return state;
  const slices = [...state.slices];
  slices[at] = change(slices[at] as PlanSlice);
  return { ...state, slices };
}

const setPhase = (state: PlanState, phase: number, change: Partial<PhaseState>): PlanState => ({
  ...state,
  phases: state.phases.map((each, i) => (i === phase ? { ...each, ...change } : each)),
});

/** A request of slice `id` failed: so does the slice; a cut slice's first one tells nothing of the bound. */
function failedSlice(state: PlanState, id: number, error: unknown): PlanState {
  const slice = state.slices[indexOf(state, id)];
  const result = update(state, id, (each) => ({ ...each, next: null, status: { kind: 'failed', error } }));
  return slice && untold(state, slice) ? judge(result, slice, undefined) : result;
}

/** A cut slice's first answer, its phase's verdict untold: it may tell whether the bound holds. */
const untold = (state: PlanState, slice: PlanSlice): boolean =>
  slice.lo !== undefined && slice.pagesRead === 0 && state.phases[slice.phase]?.verdict === 'untold';

/** The consumer takes the first page held of `id` (if any) and says how many records it has written. */
function taken(state: PlanState, id: number, written: number): PlanState {
  const at = indexOf(state, id);
  const slice = state.slices[at] as PlanSlice;
  const [page, ...rest] = slice.pages;
  const slices = [...state.slices.slice(at)];
  slices[0] = { ...slice, pages: rest };
  return { ...state, slices, writing: id, written, pageLeft: page ? recordsLeftOf(page) : 0 };
}

function arrived(state: PlanState, id: number, page: Arrival): PlanState {
  const at = indexOf(state, id);
  if (at < 0) return state;
  const slice = state.slices[at] as PlanSlice;
  const { records, next, refusal } = page;
  const taken: TakenPage = { url: page.url, records, next, writtenBefore: slice.writtenBefore, ...(refusal !== undefined && { nextRefused: true }) };
  const recordsRead = slice.recordsRead + records.length;
  const reached = next === null ? slice.reached : (state.config.days?.positionOf(next, slice.base, recordsRead) ?? slice.reached);
  const status: SliceStatus = refusal !== undefined ? { kind: 'failed', error: refusal } : next === null ? { kind: 'done' } : { kind: 'ready' };
  const after: PlanSlice = {
    ...slice,
    next: refusal === undefined ? next : null,
    writtenBefore: next === null ? 0 : Math.max(0, slice.writtenBefore - records.length),
    pages: [...slice.pages, taken],
    pagesRead: slice.pagesRead + 1,
    recordsRead,
    ...(reached !== undefined && { reached }),
    status,
  };
  let result = paced(
    update(state, id, () => after),
    slice,
    records.length,
    next === null ? (slice.hi ?? spanEnd(state, slice.phase)) : reached,
  );
  const phase = state.phases[slice.phase] as PhaseState;
  if (page.url === state.config.plan.phases[slice.phase] && phase.sample === undefined)
    result = setPhase(result, slice.phase, { sample: records.map((record) => String(record.id)) });
  if (untold(state, slice)) result = judge(result, slice, page);
  // Its pages reach past its last day: the service ignores the far bound. The slice reads on to the phase's end, and the
  // phase's later slices, which would repeat it, leave the order.
  if (after.hi !== undefined && reached !== undefined && reached > after.hi) result = overran(result, after);
  return result;
}

/**
 * The phase's pace, and the slice's records a day, with a page of `slice` (as it was before the page) of `records` records
 * reaching day `to`: over the days it spans from the slice's first day still to read, where both are known. A phase's first page tells none: its query's own bound may lie
 * years before its first record.
 */
function paced(state: PlanState, slice: PlanSlice, records: number, to: number | undefined): PlanState {
  const from = fromDay(slice);
  if (from === undefined || to === undefined || to < from) return state;
  const pace = (state.phases[slice.phase] as PhaseState).pace;
  const days = to - from + 1;
  const withPage = update(state, slice.id, (each) => ({ ...each, perDay: records / days }));
  return setPhase(withPage, slice.phase, { pace: { records: (pace?.records ?? 0) + records, days: (pace?.days ?? 0) + days } });
}

/** What a cut slice's first page (undefined: it failed) tells of the bound a cut adds (see the module's comment). */
function judge(state: PlanState, slice: PlanSlice, page: Arrival | undefined): PlanState {
  const sample = new Set(state.phases[slice.phase]?.sample);
  const records = page?.records ?? [];
  if (records.some((record) => sample.has(String(record.id)))) return dropCuts(state, slice.phase);
  if (records.length > 0 && page?.refusal === undefined) return settle(state, slice.phase);
  // An empty page or a failure tells nothing: the phase waits for another cut slice's, and none left to tell counts as ignored.
  const waiting = state.slices.some((each) => each.phase === slice.phase && untold(state, each) && each.status.kind !== 'failed');
  return waiting ? state : dropCuts(state, slice.phase);
}

/** The bound is kept: the phase's held slice reads on, its links narrowed to its days now. */
function settle(state: PlanState, phase: number): PlanState {
  const slices = state.slices.map((slice) =>
    slice.status.kind === 'held' && slice.phase === phase ? { ...narrowedTo(state, slice, slice.hi as number), status: readyOrDone(slice) } : slice,
  );
  return setPhase({ ...state, slices }, phase, { verdict: 'kept' });
}

const readyOrDone = (slice: PlanSlice): SliceStatus => (slice.next === null ? { kind: 'done' } : { kind: 'ready' });

/** The service ignores the bound a cut adds: the phase's cut slices leave the order, and its first reads on as one chain. */
function dropCuts(state: PlanState, phase: number): PlanState {
  const slices = state.slices
    .filter((slice) => slice.phase !== phase || slice.lo === undefined)
    .map((slice) => (slice.phase === phase && slice.status.kind === 'held' ? { ...opened(slice), status: readyOrDone(slice) } : slice));
  return setPhase({ ...state, slices }, phase, { verdict: 'ignored', uncut: true });
}

/** `slice` without its last day: it reads to its phase's end. */
function opened(slice: PlanSlice): PlanSlice {
  const { hi: _hi, ...open } = slice;
  return open;
}

function overran(state: PlanState, slice: PlanSlice): PlanState {
  const at = indexOf(state, slice.id);
  const later = state.slices.slice(at + 1);
  const end = later.findIndex((each) => each.phase !== slice.phase);
  const slices = [...state.slices.slice(0, at), opened(slice), ...(end < 0 ? [] : later.slice(end))];
  return setPhase({ ...state, slices }, slice.phase, { uncut: true });
}

/**
 * The requests to send now: the far ends that spans need, the consumer's slice's read-ahead, the slices ahead within the budget
 * of pages, and, with slots still idle, the slice with the most days left cut into as many ranges as it and they make.
 */
function decide(state: PlanState): Planned {
  const requests: PlanRequest[] = [];
  let current = state;
  for (const phase of farWanted(current)) {
    requests.push({ kind: 'far', phase, url: (current.config.days as SliceDays).farProbe(phase), priority: -1 });
    current = { ...setPhase(current, phase, { far: { kind: 'pending' } }), inFlight: current.inFlight + 1 };
  }
  for (;;) {
    const reads = readers(current);
    const idle = current.window - current.inFlight - reads.length;
    const cut = idle > 0 ? cutForIdle(current, idle) : undefined;
    if (cut) {
      current = cut;
      continue;
    }
    for (const at of reads) {
      const slice = current.slices[at] as PlanSlice;
      requests.push({ kind: 'page', slice: slice.id, url: slice.next as string, base: slice.base, priority: at });
    }
    const reading = new Set(reads);
    const slices = current.slices.map((slice, at) => (reading.has(at) ? { ...slice, status: { kind: 'reading' } as const } : slice));
    return { state: { ...current, slices, inFlight: current.inFlight + reads.length }, requests };
  }
}

/** Several slices read at once: the window in force holds more than one. */
const atOnce = (state: PlanState): boolean => state.config.sliceable && state.window > 1;

/** Whether a phase may be cut: slicing, several at once, no --limit, no bound ignored. */
const cutsAllowed = (state: PlanState, phase: number): boolean =>
  atOnce(state) && state.config.days !== undefined && state.config.limit === Infinity && !(state.phases[phase] as PhaseState).uncut;

/** Phases whose span a cut would need the far end of, not asked yet. */
function farWanted(state: PlanState): number[] {
  const days = state.config.days;
  if (!days) return [];
  const wanted = new Set<number>();
  for (const slice of state.slices) {
    const phase = state.phases[slice.phase] as PhaseState;
    if (phase.far.kind !== 'unasked' || slice.hi !== undefined || !cutsAllowed(state, slice.phase) || days.farBound(slice.phase) !== undefined) continue;
    const from = fromDay(slice);
    const end = spanEnd(state, slice.phase);
    // Past the day the dates were resolved at, records dated ahead are few: the far end is asked once they fill pages.
    if (end === undefined || (from !== undefined && from >= end && slice.pagesRead > PAGES_PAST_END)) wanted.add(slice.phase);
  }
  return [...wanted];
}

/** The last day of a phase's span (the last slice stays open). */
function spanEnd(state: PlanState, phase: number): number | undefined {
  const far = (state.phases[phase] as PhaseState).far;
  return state.config.days?.lastDay(phase, far.kind === 'known' ? far.day : undefined);
}

/** The first day a slice has still to read; undefined while unknown (or its first page is a resumed one, partly written). */
const fromDay = (slice: PlanSlice): number | undefined =>
  slice.pagesRead === 0 && slice.writtenBefore === 0 ? slice.lo : slice.writtenBefore > 0 ? undefined : slice.reached;

/**
 * The slices (by index) that read their next page now: the writer's within its read-ahead, the slices ahead in order while the pages
 * held up to them are within the budget (`whole`: the pages held by all of them, for slices a cut would add).
 */
function readers(state: PlanState, whole = false): number[] {
  const { pageSize, limit } = state.config;
  const start = indexOf(state, state.writing);
  const holding = (slice: PlanSlice): number => slice.pages.length + (slice.status.kind === 'reading' ? 1 : 0);
  let held = whole ? state.slices.slice(Math.max(0, start)).reduce((sum, slice) => sum + holding(slice), 0) : 0;
  let records = state.written + state.pageLeft;
  let spare = state.window - state.inFlight;
  const reads: number[] = [];
  for (let at = Math.max(0, start); at < state.slices.length; at++) {
    const slice = state.slices[at] as PlanSlice;
    if (!whole) held += holding(slice);
    records += heldRecords(slice) + (slice.status.kind === 'reading' ? pageSize : 0);
    if (spare <= 0 || slice.status.kind !== 'ready' || slice.next === null) continue;
    const reads_ =
      at === start
        ? slice.pages.length < (atOnce(state) ? READ_AHEAD_PAGES : 1) && records < limit
        : atOnce(state) && held < BUDGET_PAGES * state.window && records < limit;
    if (!reads_) continue;
    reads.push(at);
    held++;
    records += pageSize;
    spare--;
  }
  return reads;
}

/** The records a day in `slice`'s days: its last page's where denser than its phase's (data is denser in some days), if known. */
function recordsPerDay(slice: PlanSlice, phase: PhaseState): number | undefined {
  return phase.pace ? Math.max(slice.perDay ?? 0, phase.pace.records / phase.pace.days) : undefined;
}

/**
 * With `idle` slots idle: the slice (from the one being written on) with the most days left whose cut pays, cut into up to idle + 1
 * equal ranges. A cut pays only where each new slice reads at once (within the budget of pages: not a slice far ahead of the writer).
 */
function cutForIdle(state: PlanState, idle: number): PlanState | undefined {
  const start = Math.max(0, indexOf(state, state.writing));
  const candidates = state.slices
    .map((_, at) => (at < start ? undefined : cutOf(state, at, idle)))
    .filter((each) => each !== undefined)
    .sort((a, b) => b.end - b.from - (a.end - a.from));
  // The writer waits on its own slice: pages cut in next to it are written next, and read within the budget up to them (those held
  // further ahead wait). Else a cut reads only within the budget of all pages held (a stuck reader's memory stays bounded).
  const waiting = ((state.slices[start] as PlanSlice | undefined)?.pages.length ?? 0) <= 1;
  for (const { at, from, end, parts } of candidates) {
    const cuts = Array.from({ length: parts - 1 }, (_, i) => from + Math.round(((i + 1) * (end - from + 1)) / parts) - 1);
    const slice = state.slices[at] as PlanSlice;
    // Until the cut slices tell whether the bound holds, the one cut reads no further, its links as they were.
    const after =
      (state.phases[slice.phase] as PhaseState).verdict === 'untold'
        ? update(cut(state, at, cuts, false), slice.id, (each) => ({ ...each, status: { kind: 'held' } }))
        : cut(state, at, cuts, true);
    if (readers(after, !waiting).filter((i) => (after.slices[i] as PlanSlice).id >= state.nextId).length === after.nextId - state.nextId) return after;
  }
  return undefined;
}

/** How the slice at `at` would be cut with `idle` slots idle: its days left and the parts; undefined where it may not be. */
function cutOf(state: PlanState, at: number, idle: number): { at: number; from: number; end: number; parts: number } | undefined {
  const slice = state.slices[at] as PlanSlice;
  const phase = state.phases[slice.phase] as PhaseState;
  if (slice.status.kind !== 'ready' || slice.next === null || !cutsAllowed(state, slice.phase)) return undefined;
  // The phase's first cut waits for its first page (the records it may not bring back); later ones for the verdict.
  const firstCut =
    phase.verdict === 'untold' && phase.sample !== undefined && !state.slices.some((each) => each.phase === slice.phase && each.lo !== undefined);
  if (phase.verdict !== 'kept' && !firstCut) return undefined;
  const from = fromDay(slice);
  const end = slice.hi ?? spanEnd(state, slice.phase);
  if (from === undefined || end === undefined || end <= from) return undefined;
  // No more parts than the pages its days are expected to hold (each part may end in a page partly filled); with no pace yet, the
  // first cut is in two: the slice and the one that tells whether the bound holds.
  const perDay = recordsPerDay(slice, phase);
  const pages = perDay !== undefined ? Math.ceil(((end - from + 1) * perDay) / state.config.pageSize) : firstCut ? 2 : 0;
  const parts = Math.min(idle + 1, end - from + 1, pages);
  return parts > 1 ? { at, from, end, parts } : undefined;
}

/**
 * Cuts the slice at `at` after each day of `ends` (ascending): it keeps the days up to the first (its links narrowed to them, or
 * left to settle()), new slices follow with the rest.
 */
function cut(state: PlanState, at: number, ends: readonly number[], narrowLinks: boolean): PlanState {
  const days = state.config.days as SliceDays;
  const slice = state.slices[at] as PlanSlice;
  const address = state.config.plan.phases[slice.phase] as string;
  const his = [...ends.slice(1), slice.hi];
  const later = his.map((hi, i) =>
    newSlice(state.nextId + i, slice.phase, days.narrowed(address, (ends[i] as number) + 1, hi), {
      lo: (ends[i] as number) + 1,
      ...(hi !== undefined && { hi }),
    }),
  );
  const mid = ends[0] as number;
  const narrowed = narrowLinks ? narrowedTo(state, slice, mid) : { ...slice, hi: mid };
  const slices = [...state.slices.slice(0, at), narrowed, ...later, ...state.slices.slice(at + 1)];
  return { ...state, slices, nextId: state.nextId + later.length };
}

/** `slice` ending with day `hi`, its links narrowed to it. */
function narrowedTo(state: PlanState, slice: PlanSlice, hi: number): PlanSlice {
  const days = state.config.days as SliceDays;
  const next = slice.next === null ? null : days.narrowed(slice.next, undefined, hi);
  return { ...slice, hi, base: days.narrowed(slice.base, undefined, hi), next, first: slice.pagesRead === 0 && next !== null ? next : slice.first };
}

/** Records a slice holds that are still to be written. */
const heldRecords = (slice: PlanSlice): number => slice.pages.reduce((sum, page) => sum + recordsLeftOf(page), 0);

const recordsLeftOf = (page: TakenPage): number => Math.max(0, page.records.length - page.writtenBefore);
