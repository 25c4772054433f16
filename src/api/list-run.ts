/**
 * Streams a list plan into an output writer: --limit, --resume, and the resume token printed
 * when the list stops early, whether by --limit or by a failure after retries.
 */
import { ApiError, InterruptedError, NetworkError } from '../core/errors.js';
import type { RecordWriter } from '../output/index.js';
import { cursorAfterPage, decodeResumeToken, encodeResumeToken, planPages, startOf, type Cursor, type ListPlan, type PageSource, type ResumePoint } from './paging.js';

export interface ListRunOptions {
  plan: ListPlan;
  source: PageSource;
  writer: RecordWriter;
  /** From startPoint(): the plan's start, or where --resume continues. */
  start: ResumePoint;
  /** 'csv' or 'tsv' when the writer starts the output with such a header, for the resume token. */
  header?: string;
  limit?: number;
  notice(message: string): void;
}

/** Decodes --resume before anything is sent, so a bad token is a usage error. */
export function startPoint(plan: ListPlan, resume: string | undefined): ResumePoint {
  return resume === undefined ? startOf(plan) : decodeResumeToken(plan, resume);
}

export async function runList(options: ListRunOptions): Promise<number> {
  const { plan, writer, start, limit = Infinity } = options;
  let cursor: Cursor | null = start;
  let written = 0;
  // The header the output holds once records went out, and still holds for a run continuing it.
  const token = (at: Cursor): string => encodeResumeToken(plan, at, start.header ?? (written > 0 ? options.header : undefined));
  // The cursor before each record the stream has not handed on yet (a reader that stopped
  // reading): after a stop, the resumed run starts at the first of them.
  const undelivered: Cursor[] = [];
  let deliveredBefore = 0;
  try {
    for await (const page of planPages(options.source, plan, cursor, limit)) {
      let i = page.skip;
      for (; i < page.records.length && written < limit; i++) {
        undelivered.push({ phase: page.phase, url: page.url, skip: i });
        await writer.write(page.records[i] as Record<string, unknown>);
        written++;
        cursor = { phase: page.phase, url: page.url, skip: i + 1 };
        for (const delivered = writer.delivered?.() ?? written; deliveredBefore < delivered; deliveredBefore++) undelivered.shift();
      }
      if (i >= page.records.length) cursor = cursorAfterPage(plan, page);
      await writer.endPage();
    }
  } catch (err) {
    // Close what was started (a json array stays valid); a list that failed before its first
    // record prints nothing, so `> out.json` never looks like an empty success.
    if (written > 0) await writer.end().catch(() => undefined);
    const delivered = writer.delivered?.() ?? written;
    if (delivered < written && undelivered.length > 0) {
      cursor = undelivered[Math.max(0, delivered - deliveredBefore)] as Cursor;
      written = delivered;
    }
    if (isResumable(err) && cursor) {
      // Part of the error, not a notice: --quiet cron jobs must still learn how to continue.
      const records = `${written} record${written === 1 ? '' : 's'}`;
      (err as Error).message += `; the list stopped after ${records}: to continue, run the same command with --resume ${token(cursor)}`;
    }
    throw err;
  }
  await writer.end();
  if (written >= limit && cursor) {
    options.notice(`stopped at --limit ${limit}; more may follow: run the same command with --resume ${token(cursor)}`);
  }
  return written;
}

/** Failures that a later run can get past: the network, the service's own trouble, Ctrl-C. */
function isResumable(err: unknown): boolean {
  if (err instanceof NetworkError || err instanceof InterruptedError) return true;
  return err instanceof ApiError && (err.status >= 500 || err.status === 429);
}
