/**
 * The parts of a list run: chains of pages, each a phase of the plan or a date slice of one, in
 * the order they are written. Made here: the parts a run starts with (a resumed run: the slice it
 * stopped in, from its cursor, then the rest of that phase), and the cut of a part in two.
 */
import type { ChainState } from './page-guard.js';
import type { ListPlan } from './paging.js';
import type { ResumePoint } from './resume-token.js';
import { narrowed, type SliceRule } from './slices.js';

/** A page as the writer takes it. */
export interface TakenPage {
  url: string;
  records: Record<string, unknown>[];
  next: string | null;
  /**
   * Records from its start already written by the run this one continues: more than it holds when
   * that run read larger pages (another --page-size or --limit), the rest being the next page's.
   */
  skip: number;
  /** The next link was refused: a run continuing the list reads this page again. */
  nextRefused?: boolean;
}

export interface Part {
  phase: number;
  /** Order among the parts of a phase: 0 for its first part, else by the slice's first day in the sort order. */
  readonly rank: number;
  /** The slice's first and last day; undefined: the phase's own bound. */
  lo?: number;
  hi?: number;
  /** The address of its first page, for a token pointing at its start. */
  first: string;
  /** The query its links are checked against. */
  base: string;
  next: string | null;
  /** Records of the next page written by the run this one continues (its first page only). */
  skipFirst: number;
  /** Pages read; a resumed part counts as under way. */
  pagesRead: number;
  /** Records read in this run. */
  recordsRead: number;
  /** A part without a first day of its own: the day its first page reached, and the records read by then. */
  firstDay?: number;
  firstRecords?: number;
  inFlight: boolean;
  error?: unknown;
  buffer: TakenPage[];
  chain?: ChainState;
  /** The address the guard already knows as read (on arrival of the page that linked to it). */
  entered?: string;
}

/** Past the last day a date parameter can name (9999-12-31 is day 2,932,896). */
const LAST_DAY = 2 ** 22;

function rankOf(rule: SliceRule | undefined, lo: number | undefined, hi: number | undefined): number {
  const day = rule?.descending ? hi : lo;
  if (day === undefined) return 0;
  return rule?.descending ? LAST_DAY - day : day + 1;
}

export function newPart(phase: number, lo: number | undefined, hi: number | undefined, first: string, rule?: SliceRule): Part {
  return {
    phase,
    rank: rankOf(rule, lo, hi),
    ...(lo !== undefined && { lo }),
    ...(hi !== undefined && { hi }),
    first,
    base: first,
    next: first,
    skipFirst: 0,
    pagesRead: 0,
    recordsRead: 0,
    inFlight: false,
    buffer: [],
  };
}

/** The parts a run starts with: one per phase from `start`; a resumed slice, then the rest of its phase. */
export function initialParts(plan: ListPlan, start: ResumePoint): Part[] {
  const rule = plan.slicing;
  const parts: Part[] = [];
  for (let phase = start.phase; phase < plan.phases.length; phase++) {
    const address = plan.phases[phase] as string;
    const resumed = phase === start.phase && (start.url !== address || start.skip > 0 || start.end !== undefined);
    if (!resumed) {
      parts.push(newPart(phase, undefined, undefined, address));
      continue;
    }
    const end = start.end;
    const [lo, hi] = rule?.descending ? [end, undefined] : [undefined, end];
    // A page read before its slice was cut reaches past the slice's end: narrowed to it.
    const part = newPart(phase, lo, hi, rule && end !== undefined ? narrowed(start.url, rule, lo, hi) : start.url);
    part.base = rule ? narrowed(address, rule, lo, hi) : address;
    part.skipFirst = start.skip;
    part.pagesRead = start.url === address ? 0 : 1;
    parts.push(part);
    if (end !== undefined && rule) {
      const [restLo, restHi] = rule.descending ? [undefined, end - 1] : [end + 1, undefined];
      parts.push(newPart(phase, restLo, restHi, narrowed(address, rule, restLo, restHi), rule));
    }
  }
  return parts;
}

/**
 * Cuts `part` after day `mid` (ascending; descending, before mid + 1): it keeps the side it reads
 * first, its next address narrowed to it; the other side is a new part from `phaseAddress`.
 */
export function splitPart(part: Part, mid: number, phaseAddress: string, rule: SliceRule): Part {
  const [keepLo, keepHi, restLo, restHi] = rule.descending ? [mid + 1, part.hi, part.lo, mid] : [part.lo, mid, mid + 1, part.hi];
  const rest = newPart(part.phase, restLo, restHi, narrowed(phaseAddress, rule, restLo, restHi), rule);
  if (keepLo !== undefined) part.lo = keepLo;
  if (keepHi !== undefined) part.hi = keepHi;
  const [narrowLo, narrowHi] = rule.descending ? [keepLo, undefined] : [undefined, keepHi];
  part.base = narrowed(part.base, rule, narrowLo, narrowHi);
  part.next = narrowed(part.next as string, rule, narrowLo, narrowHi);
  if (part.pagesRead === 0) part.first = part.next;
  return rest;
}

/** Whether a part's position (a day) lies past its own last day, in the rule's order. */
export function pastOwnDays(part: Part, position: number, rule: SliceRule): boolean {
  return rule.descending ? position < (part.lo ?? -Infinity) : position > (part.hi ?? Infinity);
}

/**
 * `part`, whose service ignores its far bound, lists every later slice of its query too: those
 * are dropped (the writer has not reached them), and its days become the rest of the query, so a
 * token names no last day and the run continuing it adds no slice after it.
 */
export function takeRestOfPhase(parts: Part[], part: Part, rule: SliceRule): void {
  const at = parts.indexOf(part);
  // A page of a part already dropped (it was in flight): nothing more to drop.
  if (at < 0) return;
  let end = at + 1;
  while (end < parts.length && parts[end]?.phase === part.phase) end++;
  parts.splice(at + 1, end - at - 1);
  if (rule.descending) delete part.lo;
  else delete part.hi;
}

/** The records of a page still to be written. */
export const recordsLeftOf = (page: TakenPage): number => Math.max(0, page.records.length - page.skip);

/** Records of the page after `page` already written by the run this one continues (see TakenPage.skip). */
export const skipAfter = (page: TakenPage): number => Math.max(0, page.skip - page.records.length);

/** Pages held or asked for by `parts`, the records among them (and `pageLeft`), and the requests in flight. */
export function holdingOf(parts: readonly Part[], pageLeft: number): { pages: number; records: number; inFlight: number } {
  const holding = { pages: 0, records: pageLeft, inFlight: 0 };
  for (const part of parts) {
    holding.pages += part.buffer.length + (part.inFlight ? 1 : 0);
    holding.inFlight += part.inFlight ? 1 : 0;
    for (const page of part.buffer) holding.records += recordsLeftOf(page);
  }
  return holding;
}

/**
 * What a part under way has read: records over the days it covered, up to the start of `span`,
 * the days it has left; undefined before it read any or without a first day.
 */
export function readSoFar(part: Part, span: { lo: number; hi: number }, rule: SliceRule): { records: number; days: number } | undefined {
  const own = rule.descending ? part.hi : part.lo;
  const start = own ?? part.firstDay;
  const records = part.recordsRead - (own === undefined ? (part.firstRecords ?? 0) : 0);
  if (part.pagesRead === 0 || records <= 0 || start === undefined) return undefined;
  return { records, days: Math.abs((rule.descending ? span.hi : span.lo) - start) + 1 };
}

/** The records a part under way will likely give over the days `span` it has left, at its own rate so far. */
export function recordsLeftIn(part: Part, span: { lo: number; hi: number }, rule: SliceRule): number | undefined {
  const read = readSoFar(part, span, rule);
  return read && (read.records / read.days) * (span.hi - span.lo + 1);
}
