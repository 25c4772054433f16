/**
 * Waiting for a report: poll its record until it is generated or failed, on a cadence that
 * notices a ready report within a second at first and within 10 % of the wait later on.
 * Time and sleep are injected, so tests run the whole lifecycle without waiting.
 */
import { ApiError, CarectlError, DeadlineError, ExitCode, InterruptedError, ReportFailedError, ReportTimeoutError } from '../../core/errors.js';
import type { OutStream } from '../../core/io.js';
import { failureText, reportState, type ReportState } from '../../catalogue/index.js';
import { sanitizeForTerminal } from '../../output/index.js';
import { CLEAR_LINE } from '../../output/progress.js';
import { fitLine } from '../../output/text-width.js';

/**
 * First wait 250 ms, then ×1.5 up to 0.9 s: a quick report is noticed within a second. After
 * that the wait grows with the time already waited (a tenth of it), so a ready report is
 * noticed within 10 % of the wait, up to one request per 15 s: a 45-minute wait sends about
 * 200 requests, not 3,000.
 */
export const POLL_FIRST_MS = 250;
export const POLL_FACTOR = 1.5;
export const POLL_CAP_MS = 900;
export const POLL_SHARE_OF_WAIT = 0.1;
export const POLL_LONG_CAP_MS = 15_000;
/**
 * --timeout bounds the whole wait, its requests included; the last poll, sent at the deadline,
 * still has this long for its answer, so a report ready just in time is not missed.
 */
export const LAST_POLL_MS = 1000;

/** The wait before the next poll, given the previous wait and the time waited so far. */
export function nextPollDelay(previous: number | undefined, elapsedMs = 0): number {
  const quick = previous === undefined ? POLL_FIRST_MS : Math.min(POLL_CAP_MS, Math.round(previous * POLL_FACTOR));
  return Math.min(POLL_LONG_CAP_MS, Math.max(quick, Math.floor(elapsedMs * POLL_SHARE_OF_WAIT)));
}

/** Shows the waiting on stderr; see createWaitProgress. */
export interface WaitProgress {
  /** After every poll. */
  polled(state: ReportState, elapsedMs: number): void;
  /** The wait ended (any way): the live line must not linger. */
  finish(state: ReportState | undefined, elapsedMs: number): void;
}

export interface WaitOptions {
  reportId: string;
  /** GET of the report record with at least REPORT_STATE_FIELDS, over by `deadline` (see now()). */
  fetch(deadline: number): Promise<Record<string, unknown>>;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  signal: AbortSignal;
  timeoutMs: number;
  /** When the wait began (create: right after the POST); defaults to now(). */
  startedAt?: number;
  /** The command that picks the wait up again, named in timeout and interrupt messages. */
  resumeCommand: string;
  progress: WaitProgress;
}

/** The generated report's record; a failed report throws ReportFailedError (exit 5). */
export async function waitForReport(options: WaitOptions): Promise<Record<string, unknown>> {
  const { reportId, progress } = options;
  const started = options.startedAt ?? options.now();
  const elapsed = (): number => options.now() - started;
  let state: ReportState | undefined;
  try {
    let delay: number | undefined;
    const pause = (ms: number): Promise<void> =>
      options.sleep(ms, options.signal).catch((err: unknown) => {
        throw options.signal.aborted ? new InterruptedError() : err;
      });
    for (;;) {
      if (options.signal.aborted) throw new InterruptedError();
      let record: Record<string, unknown>;
      try {
        record = await options.fetch(Math.max(started + options.timeoutMs, options.now() + LAST_POLL_MS));
      } catch (err) {
        if (err instanceof DeadlineError) throw timedOut(options, state, err.answered ? err.message : undefined);
        // A service that asks for a longer pause than one request waits is waited for, as long
        // as --timeout leaves room: the wait is there to wait.
        const asked = err instanceof ApiError ? err.retryAfterMs : undefined;
        if (asked === undefined || asked > options.timeoutMs - elapsed()) throw err;
        await pause(asked);
        continue;
      }
      state = reportState(record);
      progress.polled(state, elapsed());
      if (state === 'generated') return record;
      if (state === 'failed') throw new ReportFailedError(`report ${reportId} failed: ${failureText(record.failure)}`);
      const remaining = options.timeoutMs - elapsed();
      if (remaining <= 0) throw timedOut(options, state);
      delay = nextPollDelay(delay, elapsed());
      // The last poll lands on the deadline, so a report ready just in time is not missed.
      await pause(Math.min(delay, remaining));
    }
  } catch (err) {
    throw resumable(err, options);
  } finally {
    progress.finish(state, elapsed());
  }
}

/** --timeout passed: the report's last known state, or that the service gave none (or what it answered instead). */
function timedOut(options: WaitOptions, state: ReportState | undefined, lastAnswer?: string): ReportTimeoutError {
  const nothing = lastAnswer === undefined ? 'had no answer from the service' : `had no usable answer from the service (${lastAnswer})`;
  const what = state === undefined ? nothing : `is still ${state}`;
  return new ReportTimeoutError(`report ${options.reportId} ${what} after ${formatElapsed(options.timeoutMs)}; keep waiting with: ${options.resumeCommand}`);
}

/** Failures that leave the report alive name it and the command that continues the wait. */
function resumable(err: unknown, options: WaitOptions): unknown {
  if (err instanceof ReportFailedError || err instanceof ReportTimeoutError) return err;
  if (err instanceof InterruptedError || options.signal.aborted) {
    return new InterruptedError(`interrupted while waiting for report ${options.reportId}; pick it up with: ${options.resumeCommand}`);
  }
  // After a network or service error (exit 1) the report lives on; a 404 or 403 has no later.
  if (err instanceof CarectlError && err.exitCode === ExitCode.failure) {
    return new CarectlError(`${err.message} (while waiting for report ${options.reportId}; try again with: ${options.resumeCommand})`, err.exitCode);
  }
  return err;
}

/** `12s`, `3m05s`, `1h02m`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** A state change is drawn at once; the elapsed time of the same state at most this often. */
export const WAIT_REDRAW_EVERY_MS = 500;

/**
 * On a terminal, one live line (`report 60001: generating (4s)`) cut to the width of stderr,
 * redrawn when the state changes and otherwise at most every WAIT_REDRAW_EVERY_MS, and cleared at
 * the end, leaving a final line when the report is generated. Elsewhere (logs, cron mail), one
 * plain line per state change. With --quiet, nothing.
 */
export function createWaitProgress(stderr: OutStream, quiet: boolean, reportId: string): WaitProgress {
  const line = (state: ReportState, elapsedMs: number): string => sanitizeForTerminal(`report ${reportId}: ${state} (${formatElapsed(elapsedMs)})`);
  if (quiet) return { polled: () => undefined, finish: () => undefined };
  if (stderr.isTTY) {
    let drawn: { state: ReportState; text: string; at: number } | undefined;
    const draw = (state: ReportState, elapsedMs: number, end = ''): void => {
      const text = fitLine(line(state, elapsedMs), stderr.columns);
      stderr.stream.write(`${CLEAR_LINE}${text}${end}`);
      drawn = { state, text, at: elapsedMs };
    };
    return {
      polled(state, elapsedMs) {
        if (drawn && drawn.state === state && (elapsedMs - drawn.at < WAIT_REDRAW_EVERY_MS || fitLine(line(state, elapsedMs), stderr.columns) === drawn.text))
          return;
        draw(state, elapsedMs);
      },
      finish(state, elapsedMs) {
        if (!drawn) return;
        if (state === 'generated') draw(state, elapsedMs, '\n');
        else stderr.stream.write(CLEAR_LINE);
      },
    };
  }
  let last: ReportState | undefined;
  return {
    polled(state, elapsedMs) {
      if (state !== last) stderr.stream.write(`${line(state, elapsedMs)}\n`);
      last = state;
    },
    finish: () => undefined,
  };
}
