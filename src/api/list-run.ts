/**
 * Runs a list plan: its single consumer takes the planner's slices (plan.ts, through its pump) in order and writes their records into a RecordSink,
 * each once, up to --limit, from where --resume starts; a list that stops early gets its resume token.
 */
import { ApiError, exchangeFailed, InterruptedError, ListStoppedError, type CarectlError } from '../core/errors.js';
import { realSleep } from '../core/io.js';
import { PlanPump } from './plan-pump.js';
import { PagingError } from './page-guard.js';
import { type ListPlan, type PageSource, type TakenPage } from './paging.js';
import { decodeResumeToken, type ResumePoint } from './resume-token.js';
import { Trail, type Place } from './list-trail.js';
import { idText } from '../core/exact-json.js';
import { IdSet } from '../core/id-set.js';
import { Scheduler } from './scheduler.js';

/** Where a list's records go: all the engine knows of a writer (the output's RecordWriter is one). */
export interface RecordSink {
  write(record: Record<string, unknown>): Promise<void>;
  /** A page boundary, every pageSize records of a phase. */
  endPage(): Promise<void>;
  end(): Promise<void>;
  /** How many records the stream handed on, when it writes each at once: after a stop, those a resumed run must not repeat. */
  delivered?(): number;
}

/** How a list ended: whole, or at --limit with the token that goes on. A failure rejects (a ListStoppedError where it can go on). */
export type ListEnd = { ended: 'complete'; written: number } | { ended: 'limit'; written: number; token: string };

interface ListRunOptions {
  plan: ListPlan;
  source: PageSource;
  writer: RecordSink;
  /** From startPoint(): the plan's start, or where --resume continues. */
  start: ResumePoint;
  /** 'csv' or 'tsv' when the writer starts the output with such a header, for the resume token. */
  header?: string;
  limit?: number;
  /** Records per page asked for: the writer's pages are this size, whatever the slices' pages. */
  pageSize?: number;
  scheduler?: Scheduler;
  /** A stop signal: checked before each record, so records read ahead are not written after it. */
  signal?: AbortSignal;
  notice(message: string): void;
  /** The file (-O, as named) the output reaches only if the list completes: a failed run's token starts where it began. */
  onlyIfWhole?: string;
}

/** Decodes --resume before anything is sent, so a bad token is a usage error. */
export function startPoint(plan: ListPlan, resume: string | undefined): ResumePoint {
  return resume === undefined ? { phase: 0, url: plan.phases[0] ?? '', writtenBefore: 0 } : decodeResumeToken(plan, resume);
}

export async function runList(options: ListRunOptions): Promise<ListEnd> {
  const { plan, start, limit = Infinity, pageSize = 50 } = options;
  const scheduler = options.scheduler ?? new Scheduler({ parallel: 1, now: () => Date.now(), sleep: realSleep });
  const run = new PlanPump({ plan, source: options.source, scheduler, start, pageSize, limit });
  const consumer = new Consumer(options, run, limit, pageSize);
  try {
    slices: for (let slice = run.next(); slice !== undefined; slice = run.next(slice)) {
      await consumer.startSlice(slice);
      for (let page = await run.take(slice, consumer.written); page !== null; page = await run.take(slice, consumer.written)) {
        await consumer.writePage(slice, page);
        if (consumer.written >= limit) break slices;
      }
    }
    await consumer.closePhase();
  } catch (err) {
    run.stop();
    throw await consumer.stopped(err);
  }
  run.stop();
  await options.writer.end();
  const { written, cursor } = consumer;
  if (written < limit || !cursor) return { ended: 'complete', written };
  const token = consumer.token(cursor);
  options.notice(`stopped at --limit ${limit}; more may follow: run the same command with --resume ${token}`);
  return { ended: 'limit', written, token };
}

/** The pump's single consumer: the slices' records in order, each id once, with the cursor a token continues from. */
class Consumer {
  written = 0;
  cursor: Place | null;
  /** Where the run began. */
  private readonly first: Place;
  // The cursor before each record the output has not handed on yet: a token after a failure starts at the first.
  private readonly undelivered: Place[] = [];
  private deliveredBefore = 0;
  /** A record is being written: stopped now, part of it may already be out. */
  private midRecord = false;
  // Every id written, so a record comes out once whatever the service does (a sort date that moves brings one back from anywhere).
  private readonly seen = new IdSet();
  // A page boundary every pageSize records of a phase, however the slices were cut: a table lays out the same rows.
  private phase: number;
  private counted: number;

  private readonly trail: Trail;

  constructor(
    private readonly options: ListRunOptions,
    private readonly pump: PlanPump,
    private readonly limit: number,
    private readonly pageSize: number,
  ) {
    const { start } = options;
    this.trail = new Trail(options.plan, start);
    this.first = this.trail.place(start);
    this.cursor = this.first;
    this.phase = start.phase;
    this.counted = start.writtenBefore;
  }

  /** The token of `at`, with the header the output holds once records went out (or held for the run it continues). */
  token(at: Place, origin?: string): string {
    const { start, header } = this.options;
    return this.trail.token(at, start.header ?? (this.written > 0 ? header : undefined), origin);
  }

  async startSlice(slice: number): Promise<void> {
    this.trail.startChain();
    const { phase } = this.pump.place(slice);
    if (phase === this.phase) return;
    await this.closePhase();
    this.phase = phase;
    this.counted = 0;
  }

  /** The phase's last page ends (a page boundary every pageSize records of a phase). */
  async closePhase(): Promise<void> {
    if (this.counted % this.pageSize !== 0 || this.counted === 0) await this.options.writer.endPage();
  }

  async writePage(slice: number, page: TakenPage): Promise<void> {
    const { writer, plan } = this.options;
    let i = page.writtenBefore;
    for (; i < page.records.length && this.written < this.limit; i++) {
      const record = page.records[i] as Record<string, unknown>;
      const text = idText(record.id);
      // A record without an id (an annotation) is never taken for a repeat: nothing tells it from another.
      const seen = text !== undefined && this.seen.has(text);
      const repeat = seen || (text !== undefined && this.trail.leftOut.has(text));
      // A repeat within one query (a union's second query repeats the first's by design).
      if (seen && (!plan.union || this.pump.place(slice).phase === 0)) this.pump.distrust();
      if (!repeat) await this.writeRecord(this.at(slice, page.url, i), record, text);
      this.trail.pass(text, !repeat);
      this.cursor = this.at(slice, page.url, i + 1);
      if (++this.counted % this.pageSize === 0) await writer.endPage();
    }
    if (i >= page.records.length) this.cursor = this.after(slice, page);
  }

  /** One record out, `at` the cursor before it. */
  private async writeRecord(at: Place, record: Record<string, unknown>, id: string | undefined): Promise<void> {
    const { writer, signal } = this.options;
    // A stop (SIGTERM, Ctrl-C) ends the list before its next record, whatever the slices read ahead.
    if (signal?.aborted) throw new InterruptedError();
    this.undelivered.push(at);
    this.midRecord = true;
    await writer.write(record);
    this.midRecord = false;
    this.written++;
    for (const delivered = writer.delivered?.() ?? this.written; this.deliveredBefore < delivered; this.deliveredBefore++) this.undelivered.shift();
    if (id !== undefined) this.seen.add(id);
  }

  /** A failure: the output closed, and the error saying how to continue when it can (else `err` itself). */
  async stopped(err: unknown): Promise<unknown> {
    const { writer } = this.options;
    // Close what was started (a json array stays valid); nothing printed, `> out.json` is no empty success.
    if (this.written > 0) await writer.end().catch(() => undefined);
    const delivered = writer.delivered?.() ?? this.written;
    if (delivered < this.written && this.undelivered.length > 0) {
      this.cursor = this.undelivered[Math.max(0, delivered - this.deliveredBefore)] as Place;
      this.written = delivered;
    }
    // The system may have taken part of the record being written: that cut line is not output.
    const cut = this.midRecord && err instanceof InterruptedError ? '; stdout was not being read, so its last line may be cut off' : '';
    const { plan, start, onlyIfWhole } = this.options;
    const records = `${this.written} record${this.written === 1 ? '' : 's'}`;
    // -O's file keeps what it held: none of the records written is in it, so the token is where this run began.
    const lost = onlyIfWhole !== undefined && this.written > 0;
    if (lost) [this.cursor, this.written] = [this.first, 0];
    // Before its first record, only a resumed run prints a token (the one it was given).
    if (isResumable(err) && this.cursor && (this.written > 0 || isResumed(plan, start) || lost)) {
      const stopped = lost
        ? `after ${records}, none of them in ${onlyIfWhole}, which is left as it was`
        : this.written > 0
          ? `after ${records}`
          : 'before its first record';
      const token = this.token(this.cursor, err instanceof PagingError ? err.continuesAt : undefined);
      return new ListStoppedError(err as CarectlError, `${cut}; the list stopped ${stopped}`, token);
    }
    return cut === '' ? err : new ListStoppedError(err as CarectlError, cut, undefined);
  }

  private at(slice: number, url: string, writtenBefore: number): Place {
    const { phase, sliceLastDay } = this.pump.place(slice);
    // One shape for every record's place (an absent last day is undefined): a second object per record was a third of the allocation a parallel list adds.
    return { phase, url, writtenBefore, sliceLastDay, recordsPassed: this.trail.recordsPassed, passedInChain: this.trail.passedInChain };
  }

  /** Where the list goes on after the whole of `page`. */
  private after(slice: number, page: TakenPage): Place | null {
    if (page.nextRefused) return this.at(slice, page.url, page.records.length);
    if (page.next !== null) return this.at(slice, page.next, Math.max(0, page.writtenBefore - page.records.length));
    const following = this.pump.next(slice);
    return following === undefined ? null : { ...this.at(following, this.pump.place(following).first, 0), passedInChain: 0 };
  }
}

/** Whether `start` is another point than the plan's own start: a --resume token's. */
const isResumed = (plan: ListPlan, start: ResumePoint): boolean =>
  start.phase > 0 || start.url !== plan.phases[0] || start.writtenBefore > 0 || start.sliceLastDay !== undefined || start.namedIds !== undefined;

/** Failures a list can go on from: the exchange, any answer (a 4xx part-way too: a credential renewed), paging, Ctrl-C; not our output's. */
function isResumable(err: unknown): boolean {
  return exchangeFailed(err) || err instanceof InterruptedError || err instanceof PagingError || err instanceof ApiError;
}
