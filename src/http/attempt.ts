/** One attempt of a request: sending it and reading its reply, its deadline, and how its failure is described and classed. */
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { ApiError, BadReplyError, MAY_HAVE_BEEN_APPLIED, NetworkError } from '../core/errors.js';
import { decodedBody } from './encoding.js';
import { readBounded } from './reply.js';
import { OpeningError } from './opening.js';

/** What an attempt's reply showed before its body was read (set even when reading it fails). */
export interface AttemptReply {
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  /** The body's bytes as received, and decoded (once it was read). */
  wireBytes?: number;
  decodedBytes?: number;
}

/**
 * Sends one attempt and reads its body, decoded (the cap applies to the decoded bytes: a coded
 * reply's length says nothing of them); the status and headers go into `seen` as they arrive.
 */
export async function sendAttempt(
  dispatcher: Dispatcher,
  request: { url: URL; method: string; headers: Record<string, string>; body: string | undefined; signal: AbortSignal; maxReplyBytes: number },
  seen: AttemptReply,
): Promise<string> {
  const { url } = request;
  const reply = await dispatcher.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: request.method as Dispatcher.HttpMethod,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
  });
  seen.status = reply.statusCode;
  seen.headers = reply.headers;
  const decoded = await decodedBody(reply.body, reply.headers['content-encoding'], request.signal);
  let text: string;
  try {
    text = await readBounded(
      decoded.stream,
      request.maxReplyBytes,
      decoded.wire() === undefined ? reply.headers['content-length'] : undefined,
      reply.headers['content-type'],
    );
  } catch (err) {
    // What came of a coded body before it was given up, for --verbose.
    seen.wireBytes = decoded.wire();
    throw err;
  }
  seen.decodedBytes = Buffer.byteLength(text);
  seen.wireBytes = decoded.wire() ?? seen.decodedBytes;
  return text;
}

/**
 * The status a proxy answered instead of passing the request on: a CONNECT it would not open
 * (undici keeps only the status), or the 407 undici turns into an error of its own; undefined
 * for any other failure. Either way the request never went past the proxy.
 */
export function proxyStatus(err: unknown): number | undefined {
  const message = (err as { message?: string } | undefined)?.message ?? '';
  const status = /^Proxy response \((\d+)\) !== 200/.exec(message)?.[1] ?? (/^Proxy Authentication Required/.test(message) ? '407' : undefined);
  return status === undefined ? undefined : Number(status);
}

/**
 * A proxy that refused the request (its credentials, its rules): asking again gets the same
 * answer, so it is not retried. A proxy that could not reach the service (a 5xx to CONNECT) may
 * do better on another attempt.
 */
export function isProxyRefusal(err: unknown): boolean {
  const status = proxyStatus(err);
  return status === 407 || status === 403;
}

/**
 * The signal for one attempt: aborted by Ctrl-C or when the attempt runs past its time. Cleared
 * as soon as the attempt ends. AbortSignal.timeout would keep each attempt's timer and signal
 * alive for the whole timeout: hundreds of them in a long export, held until V8's next full
 * collection and enough to grow a streaming export's memory by megabytes.
 */
export function attemptDeadline(interrupt: AbortSignal, timeoutMs: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort(interrupt.reason);
  if (interrupt.aborted) onInterrupt();
  else interrupt.addEventListener('abort', onInterrupt, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      interrupt.removeEventListener('abort', onInterrupt);
    },
  };
}

/**
 * What a proxy's answer instead of the service's (see proxyStatus) means, in words; undefined
 * for any other failure. Only 407 and 403 are refusals; a 5xx is a service it could not reach.
 */
export function proxyRefusalText(err: unknown): string | undefined {
  const status = proxyStatus(err);
  if (status === undefined) return undefined;
  if (status === 407) return 'the proxy refused the request (HTTP 407: proxy credentials missing or wrong)';
  const said = `HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
  if (status === 403) return `the proxy refused the request (${said})`;
  if (status >= 500) return `the proxy could not reach the service (${said}); the request never reached the service`;
  return `the proxy would not open a connection to the service (${said}); the request never reached the service`;
}

export function describeNetworkError(err: unknown, timeoutMs: number): string {
  if (err instanceof OpeningError) return err.message;
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  const refused = proxyRefusalText(err);
  if (refused !== undefined) return refused;
  const code = e?.code ?? e?.cause?.code;
  return code ? `${code}${e?.message ? ` (${e.message})` : ''}` : (e?.message ?? String(err));
}

/**
 * Whether the service answered but its reply could not be read (undici's "bad response" or "bad
 * upgrade", llhttp's parse errors, a body that is not its Content-Length): the request reached
 * it, and a change may have been applied. Sending a change again risks applying it twice for a
 * reply that came.
 */
export function isUnreadableAnswer(err: unknown): boolean {
  const e = err as { name?: string; code?: string; message?: string } | undefined;
  return (
    (e?.code === 'UND_ERR_SOCKET' && /^bad (response|upgrade)$/.test(e.message ?? '')) ||
    e?.name === 'HTTPParserError' ||
    e?.code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH'
  );
}

/** Replies of a gateway (or an HTTP_PROXY) that may have passed the request on before failing. */
const GATEWAY_FAILURES: ReadonlySet<number> = new Set([500, 502, 504]);

/**
 * The one rule for whether an attempt of a change may have reached the service: a reply the
 * service could have sent after acting on it (2xx, or one unreadable past its status), a
 * gateway's failure after passing it on, or a failure with no reply once it may have been sent.
 * A refusal (4xx, a 503) and a failure known to come before sending (a refused connection, a
 * certificate, a proxy's answer in the service's place: isNeverSentError) did not.
 */
export function mayHaveReached(attempt: { status: number } | { neverSent: boolean }): boolean {
  if ('neverSent' in attempt) return !attempt.neverSent;
  return attempt.status < 400 || GATEWAY_FAILURES.has(attempt.status);
}

/** How a request fails: the service's answer said no, none came, or what came cannot be used. */
export type RequestFailure = ApiError | NetworkError | BadReplyError;

/**
 * The error a request ends with: a change that may have been applied is flagged; a retried one
 * (`worded`) says so too, while the caller of a POST that is never repeated says it in its own words.
 */
export function finalError(error: RequestFailure, mayHaveBeenApplied: boolean, worded: boolean): RequestFailure {
  if (!mayHaveBeenApplied) return error;
  const message = worded ? `${error.message}; ${MAY_HAVE_BEEN_APPLIED} (an attempt ended after the request was sent)` : error.message;
  if (error instanceof ApiError) return new ApiError(error.status, message, { mayHaveBeenApplied });
  if (error instanceof BadReplyError) return new BadReplyError(message, { mayHaveBeenApplied });
  return new NetworkError(message, error.maybeSent, { mayHaveBeenApplied });
}
