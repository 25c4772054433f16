/**
 * What `conversations update` says of each id: a result row a script can read (`ok`, and on
 * failure `error.kind`, `error.status`, `error.message`), and when a batch stops because going on
 * cannot help (the service unreachable, or every id refused alike).
 */
import { ApiError, failureKind, InterruptedError, NetworkError, type CarectlError, type FailureKind } from '../../core/errors.js';
import type { ComputedColumn } from '../../output/types.js';
import type { ColumnSet } from '../../cli/columns.js';

export interface PatchBody {
  status: string;
  tag_ids: string[];
  close_reason?: string;
}

/** How one id ended. */
export interface Outcome {
  id: string;
  /** What was (or, on failure, would have been) sent. */
  body?: PatchBody;
  /** Inactive tags left out of the body (--drop-inactive-tags). */
  dropped?: string[];
  /** Names the service sent with the conversation's tags, as it was read. */
  tagNames?: ReadonlyMap<string, string>;
  /** Set when this id failed. */
  error?: CarectlError;
  /** The batch stopped before this id was sent. */
  notSent?: true;
}

export interface ResultError {
  kind: FailureKind;
  status: number | null;
  message: string;
}

export interface ResultRow extends Record<string, unknown> {
  id: string;
  ok: boolean;
  status: string | null;
  tags: string[] | null;
  dropped?: string[] | null;
  error: ResultError | null;
}

/** The fields of a row; the table reads `result` (computed) where the others have `error.*`. */
export const RESULT_FIELDS = ['id', 'ok', 'status', 'tags', 'dropped', 'error', 'result'];
/** The columns of every row by default; the error's, outside a table. */
const ROW_DEFAULTS = ['id', 'ok', 'status', 'tags'];
const ERROR_PATHS = ['error.kind', 'error.status', 'error.message'];

/** What --columns takes of a result row (`--columns help`): as resultColumns picks the defaults. */
export const RESULT_COLUMNS: ColumnSet = {
  of: 'conversations update',
  columns: RESULT_FIELDS.flatMap((field) => (field === 'error' ? [field, ...ERROR_PATHS] : [field])),
  defaults: ROW_DEFAULTS,
  notes: {
    dropped: 'default with --drop-inactive-tags',
    ...Object.fromEntries(ERROR_PATHS.map((path) => [path, 'default but in a table'])),
    result: 'default in a table; made by carectl from ok, error, dropped',
  },
  closing: 'error is null where ok is true. With --dry-run a row is the request it would send: id, method, path, body (and dropped).',
};

/** Default columns: `dropped` only with --drop-inactive-tags. */
export function resultColumns(table: boolean, dropping: boolean): string[] {
  const dropped = dropping ? ['dropped'] : [];
  return [...ROW_DEFAULTS, ...dropped, ...(table ? ['result'] : ERROR_PATHS)];
}

/** A table's one cell to read: `ok`, or what went wrong, kind first. */
export const RESULT_COLUMN: ComputedColumn = {
  name: 'result',
  from: (row) => {
    const { ok, error, dropped } = row as ResultRow;
    if (!ok) return error ? `${error.kind}: ${error.message}` : null;
    return dropped && dropped.length > 0 ? `ok; left out inactive ${dropped.join(', ')}` : 'ok';
  },
};

/**
 * The row of an outcome; `dropping`: the row carries `dropped`. `names`: tag ids shown by the
 * name carectl read for them (a person's table; the formats a script reads keep the ids).
 */
export function resultRow(outcome: Outcome, dropping: boolean, stop?: StopFacts, names?: ReadonlyMap<string, string>): ResultRow {
  const { id, body, error, notSent } = outcome;
  // A failed PATCH that may have been applied keeps what it sent: it may be the state now.
  const shown = error === undefined || (body !== undefined && mayShow(error)) ? body : undefined;
  const named = (tagIds: string[] | undefined): string[] | null => tagIds?.map((tag) => names?.get(tag) ?? tag) ?? null;
  const row: ResultRow = {
    id,
    ok: error === undefined && !notSent,
    status: shown?.status ?? null,
    tags: named(shown?.tag_ids),
    ...(dropping && { dropped: named(outcome.dropped) }),
    error: null,
  };
  if (notSent) row.error = { kind: notSentKind(stop), status: null, message: `not sent: ${stop?.reason ?? 'the batch stopped'}` };
  else if (error) row.error = { kind: failureKind(error), status: error instanceof ApiError ? error.status : null, message: error.message };
  return row;
}

/** What a batch's stop tells the rows of the ids it did not send. */
export type StopFacts = Pick<BatchStop, 'reason' | 'cause' | 'beforeAny'>;

/**
 * `not_sent`; but where nothing could be sent, why (`network`, `auth` …), as the id's own row
 * would have said it: a failure that names the id (not_found, refused) would misread there.
 */
export function notSentKind(stop: StopFacts | undefined): FailureKind {
  const kind = stop?.beforeAny && stop.cause ? failureKind(stop.cause) : 'not_sent';
  return kind === 'not_found' || kind === 'refused' ? 'not_sent' : kind;
}

function mayShow(error: CarectlError): boolean {
  return error.mayHaveBeenApplied;
}

/** Network failures in a row that stop a batch: the service is unreachable. */
export const UNREACHABLE_IN_A_ROW = 3;
/** A batch whose first results are this many alike refusals stops: a body field (a close reason, a tag) is refused. */
export const SAME_REFUSAL_FIRST = 5;

/**
 * Reads a batch's results as they come and says when to stop: after UNREACHABLE_IN_A_ROW network
 * failures in a row (no answer, or a gateway's 502/503/504), or when the first SAME_REFUSAL_FIRST results are one refusal (the same 4xx
 * status and message for different ids: the ids do not matter, the body does). While the results
 * so far point that way, an id waits for those in flight before it is sent (admit): a service that
 * is down costs one round of retries, not one per --parallel ids.
 */
export class BatchStop {
  /** Why the batch stopped; undefined while it goes on. */
  reason: string | undefined;
  /** The failure it stopped on: its exit code is the batch's. */
  cause: CarectlError | undefined;
  /** Stopped before any id was tried (nothingSent). */
  beforeAny = false;
  private inARow = 0;
  /** One of the failures in a row reached the service (an answer cut off, none in time): it is there, its answers are not. */
  private reachedInARow = false;
  private seen = 0;
  private sameSoFar = true;
  private firstRefusal: CarectlError | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();

  /**
   * Runs `send` unless the batch stopped (undefined then), first waiting out the ids in flight while
   * in doubt. Ctrl-C (`stop`) during that wait: it never started (InterruptedError, as a waiting task's).
   */
  async admit<T>(send: () => Promise<T>, stop?: AbortSignal): Promise<T | undefined> {
    let waited = false;
    while (this.reason === undefined && this.inDoubt && this.inFlight.size > 0) {
      waited = true;
      await Promise.all(this.inFlight);
    }
    if (waited && stop?.aborted) throw new InterruptedError();
    if (this.reason !== undefined) return undefined;
    const sending = send();
    const settled = sending.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    try {
      return await sending;
    } finally {
      this.inFlight.delete(settled);
    }
  }

  /** What every id needs failed before any was tried (the tags list could not be read): none is sent. */
  nothingSent(reason: string, cause: CarectlError): void {
    this.stop(reason, cause);
    this.beforeAny = true;
  }

  private get inDoubt(): boolean {
    return this.inARow > 0 || (this.sameSoFar && this.seen > 0);
  }

  /** Takes the next result (its error, or undefined for a success); true once the batch should stop. */
  see(error: CarectlError | undefined): boolean {
    if (this.reason !== undefined) return true;
    const kind = error === undefined ? undefined : failureKind(error);
    this.inARow = unreachable(error) ? this.inARow + 1 : 0;
    this.reachedInARow = this.inARow > 0 && (this.reachedInARow || (error instanceof NetworkError && error.maybeSent));
    if (this.inARow >= UNREACHABLE_IN_A_ROW) {
      const why = this.reachedInARow ? 'the service is reached, but no answer comes whole' : 'the service is unreachable';
      return this.stop(`${UNREACHABLE_IN_A_ROW} network failures in a row: ${why}`, error);
    }
    this.seen++;
    this.sameSoFar &&= kind === 'refused' && error instanceof ApiError && (this.firstRefusal === undefined || sameRefusal(this.firstRefusal, error));
    this.firstRefusal ??= error;
    if (this.sameSoFar && this.seen === SAME_REFUSAL_FIRST) {
      return this.stop(`the first ${SAME_REFUSAL_FIRST} updates were refused alike: the rest would be too`, error);
    }
    return false;
  }

  private stop(reason: string, error: CarectlError | undefined): boolean {
    this.reason = reason;
    this.cause = error;
    return true;
  }
}

/** No answer came (a reply that cannot be used is an answer), or a gateway said the service is not there. */
function unreachable(error: CarectlError | undefined): boolean {
  if (error instanceof ApiError) return GATEWAY_STATUSES.has(error.status);
  return error?.exchange !== undefined && error.exchange !== 'bad reply';
}

const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

function sameRefusal(a: CarectlError, b: ApiError): boolean {
  return a instanceof ApiError && a.status === b.status && a.message === b.message;
}
