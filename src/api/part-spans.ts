/**
 * What a run knows of its parts' days, for cutting them and for --limit: the days each part has
 * still to read, each query's far end (asked for once, with one record of it in the other
 * order), its records per day so far, and which part to cut next.
 */
import type { ListPlan } from './paging.js';
import { readSoFar, recordsLeftIn, type Part } from './part.js';
import type { Priority } from './scheduler.js';
import { dayOf, daysOf, farEndOf, farEndProbe, narrowed, positionOf, remainingDays, withSize, type SliceRule } from './slices.js';

export interface SpanHost {
  readonly plan: ListPlan;
  readonly pageSize: number;
  /** Sends a probe (a page of a record or two); answers its ids and next link, or null when it failed. */
  probe(phase: number, address: string): Promise<Probed | null>;
  /** Something changed that may let a part be cut: start what may start. */
  pump(): void;
}

export type Span = { lo: number; hi: number };

export interface Probed {
  ids: string[];
  next: string | null;
}

export class PartSpans {
  /** Each phase's far end found by a probe (null: the probe found none; undefined: asked). */
  private readonly far = new Map<number, number | null | undefined>();
  private readonly positions = new WeakMap<Part, { next: string; base: string; read: number; position: number | undefined }>();
  private readonly phases = new Map<number, { lo?: number; hi?: number }>();
  /** Each phase's near-bound check (true: the service keeps to it; undefined: asked). */
  private readonly near = new Map<number, boolean | undefined>();
  /** Each phase's first page from its start: its ids, all dated no later (descending: earlier) than its keyset position. */
  private readonly samples = new Map<number, { ids: string[]; position: number }>();

  constructor(
    private readonly rule: SliceRule,
    private readonly host: SpanHost,
  ) {}

  /**
   * The days a part has still to read, when both ends are known. An open far end is asked for
   * once (`probe`) when a part under way needs it, so a list that ends on its first page pays
   * for no probe: descending, the oldest record's day; ascending, the newest's (the run's day
   * until the answer comes, or when it says nothing). A part in flight counts only `anyState`.
   * None for a part still skipping what the run it continues wrote (read with larger pages): a
   * cut would part those records from their count.
   */
  remaining(part: Part, probe: boolean, anyState = false): Span | undefined {
    const rule = this.rule;
    if (part.next === null || part.error !== undefined || (part.inFlight && !anyState) || part.skipFirst > 0) return undefined;
    const underWay = part.pagesRead > 0;
    const position = underWay ? this.positionOf(part, part.next) : undefined;
    if (underWay && position === undefined) return undefined;
    const phaseDays = this.phaseDays(part.phase);
    const open = rule.descending ? (part.lo ?? phaseDays.lo) === undefined : (part.hi ?? phaseDays.hi) === undefined;
    if (open && probe && underWay && !this.far.has(part.phase)) this.probe(part.phase);
    return remainingDays({ lo: part.lo, hi: part.hi, position, underWay }, phaseDays, rule, this.farEnd(part.phase));
  }

  /**
   * The phase's far end as the probe found it. Until the probe answers, where to cut assumes the
   * list ends today; never a bound: the last slice stays open, so records dated later are still read.
   */
  private farEnd(phase: number): number | undefined {
    const far = this.far.get(phase) ?? undefined;
    if (far === undefined && !this.rule.descending && this.host.plan.asOf !== undefined) return dayOf(this.host.plan.asOf);
    return far;
  }

  /** positionOf, read once per next address: the run asks on every page written and every page come. */
  positionOf(part: Part, next: string): number | undefined {
    const known = this.positions.get(part);
    if (known?.next === next && known.base === part.base && known.read === part.recordsRead) return known.position;
    const position = positionOf(next, part.base, part.recordsRead, this.rule);
    this.positions.set(part, { next, base: part.base, read: part.recordsRead, position });
    return position;
  }

  private phaseDays(phase: number): { lo?: number; hi?: number } {
    let days = this.phases.get(phase);
    if (!days) this.phases.set(phase, (days = daysOf(this.host.plan.phases[phase] as string, this.rule)));
    return days;
  }

  private probe(phase: number): void {
    this.far.set(phase, undefined);
    const address = farEndProbe(this.host.plan.phases[phase] as string, this.rule);
    this.host.probe(phase, address).then((probed) => {
      this.far.set(phase, probed ? (farEndOf(probed.next, this.rule) ?? null) : null);
      this.host.pump();
    });
  }

  /** A page read from the phase's first address, whose next link stands at `position`. */
  sample(phase: number, ids: string[], position: number): void {
    if (!this.samples.has(phase)) this.samples.set(phase, { ids, position });
  }

  /**
   * Whether a slice of the phase may be cut: the service must keep to the bound a cut adds on
   * the side read first (a slice's `_gte` ascending), or a slice would list the query's start
   * again. Asked once per phase when a cut is first wanted: records of the phase's start, all
   * dated up to a keyset position, must not come back from the phase bounded past that day.
   * False until the answer; false for good when it shows the bound ignored (or cannot tell):
   * the query is read as one chain, as --parallel 1 would.
   */
  nearKept(phase: number): boolean {
    if (!this.near.has(phase)) {
      this.near.set(phase, undefined);
      this.checkNear(phase).then(
        (kept) => {
          this.near.set(phase, kept);
          this.host.pump();
        },
        () => this.near.set(phase, false),
      );
    }
    return this.near.get(phase) === true;
  }

  private async checkNear(phase: number): Promise<boolean> {
    const address = this.host.plan.phases[phase] as string;
    let sample = this.samples.get(phase);
    if (!sample) {
      const first = await this.host.probe(phase, withSize(address, this.rule, 2));
      const position = first?.next ? positionOf(first.next, address, first.ids.length, this.rule) : undefined;
      if (!first || position === undefined) return false;
      sample = { ids: first.ids, position };
    }
    const [lo, hi] = this.rule.descending ? [undefined, sample.position - 1] : [sample.position + 1, undefined];
    const past = await this.host.probe(phase, withSize(narrowed(address, this.rule, lo, hi), this.rule, 2));
    const before = new Set(sample.ids);
    return past !== null && !past.ids.some((id) => before.has(id));
  }

  /** Records per day of each query, from its parts under way (what they read over the days they covered). */
  rates(parts: readonly Part[]): Map<number, number> {
    const sums = new Map<number, { records: number; days: number }>();
    for (const part of parts) {
      const span = this.remaining(part, false, true);
      const read = span && readSoFar(part, span, this.rule);
      if (!read) continue;
      const sum = sums.get(part.phase) ?? { records: 0, days: 0 };
      sums.set(part.phase, { records: sum.records + read.records, days: sum.days + read.days });
    }
    return new Map([...sums].map(([phase, sum]) => [phase, sum.records / sum.days]));
  }

  /** The records a part will likely still give beyond what it holds and asks for: its days left at its query's rate. */
  expectedLeft(part: Part, rates: Map<number, number>): number {
    return this.expected(part, rates)?.records ?? 0;
  }

  private expected(part: Part, rates: Map<number, number>, probe = false): { span: Span; rate: number; records: number } | undefined {
    const span = this.remaining(part, probe, true);
    const rate = rates.get(part.phase);
    return span && rate ? { span, rate, records: rate * (span.hi - span.lo + 1) } : undefined;
  }

  /**
   * The scheduler's priority of a part's next request (lower goes first): the part with the most
   * records still expected first, since the longest chain of pages decides when the run ends; a
   * part not known yet before all (its first page tells); ties in the writer's order.
   */
  priorityOf(part: Part, rates: Map<number, number>): Priority {
    const expected = this.expected(part, rates);
    return expected ? [1, -Math.round(expected.records), part.phase, part.rank] : [0, 0, part.phase, part.rank];
  }

  /**
   * Where to cut `parts` so that no chain of pages is much longer than its share of the window:
   * a share is the records expected of all parts over the window's slots, at most `longest`; a
   * part not in flight expected to give more than two shares keeps one, and what is left is cut
   * the same way, into at most `window` shares and the rest (cut in its turn when it comes
   * first: a long list is not cut into days all at once). Each answer lists a part's cuts from
   * its far end, as a part keeps the days it reads first.
   */
  balancingCuts(parts: readonly Part[], window: number, rates: Map<number, number>, longest: number): { part: Part; cuts: number[] }[] {
    let total = 0;
    for (const part of parts) total += this.expected(part, rates)?.records ?? 0;
    const share = Math.max(this.host.pageSize, Math.min(total / window, longest));
    const answer: { part: Part; cuts: number[] }[] = [];
    for (const part of parts) {
      const expected = part.inFlight ? undefined : this.expected(part, rates, true);
      if (!expected || expected.records <= 2 * share || !this.nearKept(part.phase)) continue;
      const days = Math.max(1, Math.round(share / expected.rate));
      const { lo, hi } = expected.span;
      const cuts: number[] = [];
      // Each piece of `days` from the side read first, while more than two shares would be left.
      for (let left = expected.records, first = 0; left > 2 * share && first + days <= hi - lo && cuts.length < window; left -= share, first += days) {
        cuts.push(this.rule.descending ? hi - first - days : lo + first + days - 1);
      }
      if (cuts.length > 0) answer.push({ part, cuts: cuts.reverse() });
    }
    return answer;
  }

  /**
   * The part to cut next among `parts` (from the writer's on) and the day to cut after: the one
   * with the most days left, but none of a query that already has its `share` of requests
   * (`busy`), none whose records so far say one page holds what is left, and none past the
   * page budget (`room(part)` false: its new half could not start).
   */
  widest(
    parts: readonly Part[],
    busy: Map<number, number>,
    share: number,
    room: (part: Part) => boolean,
    rates: Map<number, number> | undefined,
  ): { part: Part; mid: number } | undefined {
    let best: { part: Part; lo: number; hi: number } | undefined;
    for (const part of parts) {
      if (!room(part)) break;
      if ((busy.get(part.phase) ?? 0) >= share) continue;
      const span = this.remaining(part, true);
      if (!span || span.hi <= span.lo) continue;
      // Cut only where the data seen says more than a page is left (its own pages, else its
      // query's records per day): a short list costs no more requests than one at a time.
      // Two pages left are two requests either way: cut, they go side by side (the run's tail).
      const rate = rates?.get(part.phase);
      const left = recordsLeftIn(part, span, this.rule) ?? (rate === undefined ? undefined : rate * (span.hi - span.lo + 1));
      if (left === undefined || left <= this.host.pageSize || !this.nearKept(part.phase)) continue;
      if (!best || span.hi - span.lo > best.hi - best.lo) best = { part, ...span };
    }
    return best && { part: best.part, mid: best.lo + Math.floor((best.hi - best.lo) / 2) };
  }
}
