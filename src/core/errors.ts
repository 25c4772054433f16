/**
 * Typed errors for every expected failure. Each carries the exit code of the CLI contract, so
 * the mapping from failure to exit status lives here and nowhere else.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  reportFailed: 5,
  reportTimeout: 6,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * How the exchange with the service failed, when the request itself was not refused: no answer
 * came (a connection refused, reset, timed out), one came that cannot be used, none came in the
 * time given, or the service sent carectl to another address (not followed: see LinkElsewhereError).
 * Another try may go through: a list that ends on one can be resumed, and a script reads it as
 * `network` (failureKind).
 */
export type ExchangeFailure = 'no answer' | 'bad reply' | 'deadline' | 'elsewhere';

export interface FailureDetails extends WriteOutcome {
  cause?: unknown;
  exchange?: ExchangeFailure;
}

export class CarectlError extends Error {
  readonly exitCode: ExitCode;
  /** Set when the exchange failed rather than the request (see ExchangeFailure). */
  readonly exchange: ExchangeFailure | undefined;
  /** See WriteOutcome; what callers of a change read, whatever the class. */
  readonly mayHaveBeenApplied: boolean;
  constructor(message: string, exitCode: ExitCode = ExitCode.failure, details: FailureDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.exchange = details.exchange;
    this.mayHaveBeenApplied = details.mayHaveBeenApplied === true;
  }
}

/** The line a list that stopped early adds to its error, so the same command can go on. */
export function resumeAdvice(token: string): string {
  return `to continue, run the same command with --resume ${token}`;
}

/**
 * A list that failed part-way: its cause, whose exit code it keeps, what the list had done by then
 * (`stopped`, said after the cause's message), and the token the same command goes on from, which
 * the composition root says and --resume-file keeps (none where the list continues by itself).
 */
export class ListStoppedError extends CarectlError {
  constructor(
    override readonly cause: CarectlError,
    /** After the cause's message: `; the list stopped after 3 records`. */
    readonly stopped: string,
    readonly resumeToken: string | undefined,
  ) {
    super(`${cause.message}${stopped}`, cause.exitCode, { cause });
  }
}

/**
 * A failure another attempt would meet again (a certificate refused, an archive --unzip will not
 * extract): its message gives no "try again" advice.
 */
export class LastingError extends CarectlError {}

/** Standard output could not be written (a full disk, say): not the service's fault, nor the user's command. */
export class OutputError extends CarectlError {
  /** The system's reason, for a caller that names the output itself. */
  readonly reason: string;
  constructor(cause: Error) {
    const reason = systemReason(cause);
    super(`cannot write the output: ${reason}`);
    this.reason = reason;
  }
}

/**
 * A system error as a reason a user reads, without the call or the path (the message names its
 * own): "ENOSPC: no space left on device, write" → "no space left on device (ENOSPC)".
 */
export function systemReason(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (!code) return err.message;
  return `${err.message.replace(`${code}: `, '').replace(/, \w+(?: '.*')?$/, '')} (${code})`;
}

/** Bad command line or configuration: nothing was sent. */
export class UsageError extends CarectlError {
  constructor(message: string) {
    super(message, ExitCode.usage);
  }
}

/** For a request that changes something (PATCH, POST): whether the change may have been made. */
export interface WriteOutcome {
  /**
   * True when a failed write may have been applied all the same: an attempt broke off after the
   * request was sent, or a gateway answered for a service that may have acted on it. The message
   * then says so (MAY_HAVE_BEEN_APPLIED); false for a read and for a write that surely did nothing.
   */
  mayHaveBeenApplied?: boolean;
}

/** The words every "may have been applied" error carries, so that callers and tests can find them. */
export const MAY_HAVE_BEEN_APPLIED = 'the change may have been applied';

/** Whether the exchange failed rather than the request (see ExchangeFailure): another try may go through. */
export function exchangeFailed(err: unknown): boolean {
  return err instanceof CarectlError && err.exchange !== undefined;
}

/** Whether a failed write may have been applied (see WriteOutcome). */
export function mayHaveBeenApplied(err: unknown): boolean {
  return err instanceof CarectlError && err.mayHaveBeenApplied;
}

/** The service answered with an error body (or a non-2xx status). */
export class ApiError extends CarectlError {
  readonly status: number;
  /**
   * The service asked for this long a pause (Retry-After), longer than carectl waits between two
   * attempts of one request: a caller that waits anyway (a report wait) may honour it.
   */
  readonly retryAfterMs: number | undefined;
  constructor(status: number, message: string, outcome: WriteOutcome & { retryAfterMs?: number } = {}) {
    super(message, exitCodeForStatus(status), { mayHaveBeenApplied: outcome.mayHaveBeenApplied });
    this.status = status;
    this.retryAfterMs = outcome.retryAfterMs;
  }
}

/** Connection refused, reset, timed out: no answer arrived. */
export class NetworkError extends CarectlError {
  /** True when the request may have reached the server (matters for non-idempotent POST). */
  readonly maybeSent: boolean;
  constructor(message: string, maybeSent: boolean, outcome: WriteOutcome = {}) {
    super(message, ExitCode.failure, { ...outcome, exchange: 'no answer' });
    this.maybeSent = maybeSent;
  }
}

/**
 * A reply that arrived but cannot be used: not JSON, nested too deep, or larger than carectl
 * reads. Often transient (a proxy's error page, a truncated body), so a read is retried unless
 * the same answer would come again, and a list that ends on it can be resumed.
 */
export class BadReplyError extends CarectlError {
  constructor(message: string, outcome: WriteOutcome = {}) {
    super(message, ExitCode.failure, { ...outcome, exchange: 'bad reply' });
  }
}

/** A read given a deadline (a report wait's --timeout) that passed before an answer came. */
export class DeadlineError extends CarectlError {
  /** `answered`: the service did answer, with what `message` says, but not usably. */
  constructor(
    message: string,
    readonly answered = false,
  ) {
    super(message, ExitCode.failure, { exchange: 'deadline' });
  }
}

export class AuthError extends CarectlError {
  constructor(message: string) {
    super(message, ExitCode.auth);
  }
}

export class ReportFailedError extends CarectlError {
  constructor(message: string) {
    super(message, ExitCode.reportFailed);
  }
}

export class ReportTimeoutError extends CarectlError {
  constructor(message: string) {
    super(message, ExitCode.reportTimeout);
  }
}

export class InterruptedError extends CarectlError {
  constructor(message = 'interrupted') {
    super(message, ExitCode.interrupted);
  }
}

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return ExitCode.auth;
  if (status === 404) return ExitCode.notFound;
  return ExitCode.failure;
}

/**
 * `carectl … | head -1`: the reader left; that is how pipelines end, not a failure. EIO is the
 * same for a terminal that hung up (SIGHUP): nobody is left to read the output.
 */
export function isBrokenPipe(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return code === 'EPIPE' || code === 'EIO';
}

/**
 * What a failure means to a script (`conversations update` rows' `error.kind`), from what failed
 * (the exchange, the HTTP status), never its text. `not_sent`: a batch stopped before sending it. A 5xx is
 * `network` with a 502/503/504 gateway's: the service did not serve the request, another try may.
 */
export const FAILURE_KINDS = ['not_found', 'refused', 'forbidden', 'auth', 'network', 'rate_limited', 'not_sent'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export function failureKind(err: CarectlError): Exclude<FailureKind, 'not_sent'> {
  if (err instanceof ApiError) {
    if (err.status === 401) return 'auth';
    if (err.status === 403) return 'forbidden';
    if (err.status === 429) return 'rate_limited';
    if (err.status >= 500) return 'network';
  }
  if (err.exchange !== undefined) return 'network';
  if (err.exitCode === ExitCode.auth) return 'auth';
  return err.exitCode === ExitCode.notFound ? 'not_found' : 'refused';
}
