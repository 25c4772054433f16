/** When and how long to wait before another attempt: pure, so it is tested without a network. */
import { proxyStatus } from './attempt.js';
import { isCertificateError } from './tls.js';
import { OpeningError } from './opening.js';

/** Throttling and transient server trouble; other 4xx are the caller's fault and not retried. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** The first backoff's ceiling; each later one doubles it (up to the cap). */
export const BASE_DELAY_MS = 500;

/**
 * The least time the backoff waits spread over, when the service gives no Retry-After: the last
 * retry's wait makes up what the earlier, jittered ones left short, so that with the default 3
 * retries a service that is away for a few seconds (a restart, a failover) is still waited out.
 */
export const MIN_RETRY_SPAN_MS = 5_000;

/** Errors raised before any byte of the request could reach the server. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Whether the request surely never reached the service: the connection (or the host's address)
 * could not be had (nor opened in time: opening.ts), the service's certificate was refused at
 * the handshake, or the proxy answered in its place (a tunnel it did not open, whatever its
 * status; its 407).
 */
export function isNeverSentError(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return (
    err instanceof OpeningError ||
    NEVER_SENT_CODES.has(e?.code ?? '') ||
    NEVER_SENT_CODES.has(e?.cause?.code ?? '') ||
    isCertificateError(err) ||
    proxyStatus(err) !== undefined
  );
}

export interface RetryDelayInput {
  /** 0 for the wait after the first failed attempt. */
  attempt: number;
  retryAfter: string | undefined;
  now: number;
  capMs: number;
  random: () => number;
  /** The retries allowed in all: the wait before the last of them makes up MIN_RETRY_SPAN_MS. */
  retries?: number;
  /** What the waits before this one came to. */
  waitedMs?: number;
}

/**
 * Retry-After (delta-seconds or HTTP-date) when the service sent one, else exponential backoff
 * with full jitter: a random wait between 0 and min(cap, 500 ms·2^attempt). The wait before the
 * last retry adds what the earlier waits fell short of MIN_RETRY_SPAN_MS, so all the waits
 * together come to at least 5 s (the jitter on top still spreads clients apart); never more than
 * the cap. A Retry-After longer than the cap answers 'too-long': failing clearly beats sleeping
 * for hours in a cron job.
 */
export function retryDelayMs(input: RetryDelayInput): number | 'too-long' {
  const asked = parseRetryAfter(input.retryAfter, input.now);
  if (asked !== undefined) return asked > input.capMs ? 'too-long' : asked;
  const ceiling = Math.min(input.capMs, BASE_DELAY_MS * 2 ** input.attempt);
  const jitter = Math.round(input.random() * ceiling);
  const last = input.retries !== undefined && input.attempt === input.retries - 1;
  const shortfall = last ? Math.max(0, MIN_RETRY_SPAN_MS - (input.waitedMs ?? 0)) : 0;
  return Math.min(input.capMs, shortfall + jitter);
}

export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP-date names its day and month; without letters Date.parse would read "1.5" as a year-2001 date.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
