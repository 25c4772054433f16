/**
 * What a list run passed, for its resume tokens (RELIABILITY.md, "Resume tokens"): the ids of the last records passed and of
 * those written, so that a token names the records before its cursor where it can rather than counting them.
 */
import { PAGING_STYLES } from '../catalogue/index.js';
import { isDateTime, splitAddress } from './links.js';
import type { Cursor, ListPlan } from './paging.js';
import { encodeResumeToken, type ResumePoint } from './resume-token.js';

/** Ids a token names at most (the contract: up to 100). */
const NAMED_MAX = 100;
/** Ids remembered (recent, printed) before the older half is let go: enough for a token, bounded in a 1M export. */
const REMEMBERED_MAX = 8192;
const REMEMBERED_KEPT = REMEMBERED_MAX / 2;

/** The service's `skip` parameter: records of the query before the page. */
const SKIP_PARAM = PAGING_STYLES.skip.cursorParam;

/** A cursor, the records the run passed before it, and how many of those lead up to it in its chain (their ids known). */
export type Place = Cursor & { recordsPassed: number; passedInChain: number };

/** The records a run passed, in order, as far back as a token may need to name them; the consumer passes each. */
export class Trail {
  // The ids of the last records passed (written, or left out as repeats), for byIds; undefined: a record with none.
  private recent: Array<string | undefined> = [];
  recordsPassed = 0;
  passedInChain = 0;
  /** Ids the run this one continues wrote (its token's namedIds): left out. */
  readonly leftOut: Set<string>;
  /** The ids written, in order, each with the count of records passed before it (those the run this one continues wrote first). */
  private printed: Array<{ id: string; at: number }> = [];
  /** The oldest of `printed` were let go (a long list): too many to name all. */
  private printedTrimmed = false;

  constructor(
    private readonly plan: ListPlan,
    start: ResumePoint,
  ) {
    this.leftOut = new Set(start.namedIds);
    for (const id of start.namedIds ?? []) this.pass(id, true);
  }

  /** A new chain of pages begins (a slice): the records passed before it are not on its links' terms. */
  startChain(): void {
    this.passedInChain = 0;
  }

  /** `cursor` as a place on the trail now. */
  place(cursor: Cursor): Place {
    return { ...cursor, recordsPassed: this.recordsPassed, passedInChain: this.passedInChain };
  }

  /** A record passed, `wasWritten` or left out as a repeat. */
  pass(id: string | undefined, wasWritten: boolean): void {
    if (wasWritten && id !== undefined) this.printed.push({ id, at: this.recordsPassed });
    if (this.printed.length > REMEMBERED_MAX) {
      this.printed = this.printed.slice(-REMEMBERED_KEPT);
      this.printedTrimmed = true;
    }
    this.recent.push(id);
    this.recordsPassed++;
    this.passedInChain++;
    if (this.recent.length > REMEMBERED_MAX) this.recent = this.recent.slice(-REMEMBERED_KEPT);
  }

  /**
   * `at` for a token, and what it still counts rather than names (RELIABILITY.md, "Resume tokens"): the ids of every record before
   * it on the link's terms with the service's skip set to 0 where the run knows them (a count would skip a record never written when
   * one written has left the list since), else the skip kept and the last ids written named, for a resumed run to leave out.
   */
  private byIds(at: Place): { cursor: Cursor; counts?: string } {
    const { recordsPassed, passedInChain, ...cursor } = at;
    const [path, params] = splitAddress(at.url);
    const skipped = Number(params.get(SKIP_PARAM) ?? 0);
    const before = skipped + at.writtenBefore;
    if (before === 0) return { cursor };
    const recentAt = this.recent.length - (this.recordsPassed - recordsPassed);
    // The ids written up to `at`, in the order written (those the run this one continues named first).
    const writtenIds = this.printed.filter((entry) => entry.at < recordsPassed).map((entry) => entry.id);
    // The link has a date-time bound the query lacks (keyset, or a snapshot's): its skip counts from there.
    const query = splitAddress(this.plan.phases[at.phase] ?? '')[1];
    const bounded = [...params].some(([key, value]) => /_(gte|gt|lte|lt)$/.test(key) && isDateTime(value) && !query.getAll(key).includes(value));
    // Under a date bound of its own the skip counts from that bound: the last `before` records passed.
    // A plain skip counts from the list's start: every record this part passed, and those named before.
    const names = bounded ? this.recent.slice(Math.max(0, recentAt - before), recentAt) : writtenIds;
    const covered = bounded ? before <= Math.min(passedInChain, recentAt) : before <= passedInChain && !this.printedTrimmed;
    const own = this.recent.slice(recentAt - Math.min(passedInChain, recentAt), recentAt);
    if (covered && !names.includes(undefined) && !own.includes(undefined) && names.length <= NAMED_MAX) {
      // skip=0 rather than none: the form of the service's own links (the spec's "a skip value").
      if (skipped > 0) params.set(SKIP_PARAM, '0');
      return { cursor: { ...cursor, url: `${path}?${params.toString()}`, writtenBefore: 0, namedIds: names as string[] } };
    }
    // The last ids written: those a list that grew in between shifts back past the cursor first.
    const lastWritten = writtenIds.slice(-NAMED_MAX);
    const page = this.recent.slice(recentAt - at.writtenBefore, recentAt);
    const pageNamed = at.writtenBefore <= recentAt && page.every((id) => id !== undefined && lastWritten.includes(id));
    // Said in words true for its link: a skip under its own date bound (keyset: the records at one second), a plain skip past
    // what a token can name (the service's cursor, which records leaving shift for any client), the page's unnamed records.
    const counts = [
      ...(skipped
        ? [`the service's skip in it counts the ${skipped} records before it${bounded ? " under the link's date bound" : ', more than a token names'}`]
        : []),
      ...(pageNamed ? [] : [`it counts the ${at.writtenBefore} records of its page written before it, which have no id to name`]),
    ];
    return {
      cursor: { ...cursor, writtenBefore: pageNamed ? 0 : at.writtenBefore, ...(lastWritten.length > 0 && { namedIds: lastWritten }) },
      ...(counts.length > 0 && { counts: `${counts.join('; ')}: for each record that leaves the list before it in between, one after it may be passed over` }),
    };
  }

  /** The token of `at`, with `header` (the output's csv or tsv header, if it holds one), on `origin` when the list went on elsewhere. */
  token(at: Place, header: string | undefined, origin?: string): string {
    const plan = origin === undefined ? this.plan : { ...this.plan, origin };
    const { cursor, counts } = this.byIds(at);
    const token = encodeResumeToken(plan, cursor, header);
    // Records counted, being too many to name: say so, and what that risks.
    return counts === undefined ? token : `${token} (${counts})`;
  }
}
