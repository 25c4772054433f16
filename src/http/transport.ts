/**
 * HTTP transport: one keep-alive connection pool (undici) to the base address, Basic auth,
 * JSON replies, typed errors, and retries of idempotent requests.
 *
 * Retries are our own loop rather than undici's RetryAgent: the waits go through the injected
 * sleep (tests never wait for real), a Retry-After beyond the cap fails instead of sleeping for
 * hours, and a non-idempotent POST must only be retried when it provably never left.
 */
import type { Dispatcher } from 'undici';
import { ApiError, CarectlError, InterruptedError, NetworkError } from '../errors.js';
import { loadUndici } from './undici.js';
import { isNeverSentError, parseRetryAfter, retryDelayMs, RETRYABLE_STATUSES } from './retry.js';

export type QueryParams = ReadonlyArray<readonly [string, string]>;

export interface TransportConfig {
  baseUrl: URL;
  user: string;
  password: string;
  userAgent: string;
  requestTimeoutMs: number;
  retries: number;
  /** Longest wait between attempts (also the longest Retry-After honoured). */
  maxRetryWaitMs: number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  now(): number;
  signal: AbortSignal;
  /** Receives one line per request and response when --verbose is on. */
  trace?: (line: string) => void;
  /** The backoff's random draw, 0 ≤ r < 1 (default Math.random). */
  random?: () => number;
}

export interface RequestOptions {
  query?: QueryParams;
  body?: unknown;
  /** GET and the absolute-valued PATCH may be repeated; the report POST may not. */
  idempotent: boolean;
}

export class Transport {
  private dispatcher: Dispatcher | undefined;
  private readonly authorization: string;
  /**
   * Aborted by Ctrl-C or by close(). A request still in flight when the command ends (the next
   * page, fetched ahead for a reader that has left) stops there, instead of retrying with back-off
   * and keeping the process alive.
   */
  private readonly lifetime = new AbortController();
  readonly baseUrl: URL;

  constructor(private readonly config: TransportConfig) {
    this.baseUrl = config.baseUrl;
    this.authorization = 'Basic ' + Buffer.from(`${config.user}:${config.password}`).toString('base64');
    const interrupt = config.signal;
    if (interrupt.aborted) this.lifetime.abort(interrupt.reason);
    else interrupt.addEventListener('abort', () => this.lifetime.abort(interrupt.reason), { once: true });
  }

  /** The address of a path below the base (`v1.3/tags`), with query parameters. */
  url(path: string, query: QueryParams = []): URL {
    const base = this.baseUrl.href.endsWith('/') ? this.baseUrl.href : this.baseUrl.href + '/';
    const url = new URL(path.replace(/^\/+/, ''), base);
    for (const [key, value] of query) url.searchParams.append(key, value);
    return url;
  }

  /**
   * Accepts a paging link from a reply. Credentials go only to the base address's origin, so a
   * link elsewhere is refused rather than followed.
   */
  sameOriginUrl(link: string): URL {
    const url = new URL(link, this.baseUrl);
    if (url.origin !== this.baseUrl.origin) {
      throw new CarectlError(`refusing to follow a link to ${url.origin}: credentials are only sent to ${this.baseUrl.origin}`);
    }
    return url;
  }

  async request(method: string, url: URL, options: RequestOptions): Promise<unknown> {
    this.sameOriginUrl(url.href);
    for (const [key, value] of options.query ?? []) url.searchParams.append(key, value);
    const { Agent } = await loadUndici();
    this.throwIfStopped();
    const dispatcher = (this.dispatcher ??= new Agent({ keepAliveTimeout: 10_000, connections: 4 }));
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = {
      authorization: this.authorization,
      'user-agent': this.config.userAgent,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let waitedMs = 0;

    for (let attempt = 0; ; attempt++) {
      this.throwIfStopped();
      const started = this.config.now();
      this.trace(`> ${method} ${url.href}`);
      this.trace(`> authorization: Basic [redacted]`);
      let status: number;
      let responseHeaders: Record<string, string | string[] | undefined>;
      let text: string;
      const deadline = attemptDeadline(this.lifetime.signal, this.config.requestTimeoutMs);
      try {
        const reply = await dispatcher.request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          signal: deadline.signal,
        });
        status = reply.statusCode;
        responseHeaders = reply.headers;
        text = await reply.body.text();
      } catch (err) {
        // The attempt is over: its timer must not outlive it into the wait before the next one.
        deadline.clear();
        // Cut off by Ctrl-C, a POST may already have reached the service: the user must not assume it did not.
        this.throwIfStopped(options.idempotent ? undefined : `interrupted while ${method} ${url.origin}${url.pathname} was in flight: it may have reached the service`);
        const neverSent = isNeverSentError(err);
        const reason = describeNetworkError(err, this.config.requestTimeoutMs);
        this.trace(`< ${reason} (${this.config.now() - started} ms)`);
        const retryable = options.idempotent || neverSent;
        if (!retryable || attempt >= this.config.retries) {
          throw new NetworkError(`${method} ${url.origin}${url.pathname} failed: ${reason}`, !neverSent);
        }
        waitedMs += await this.wait(attempt, undefined, waitedMs);
        continue;
      } finally {
        deadline.clear();
      }
      this.trace(`< ${status} (${this.config.now() - started} ms)`);
      if (status >= 200 && status < 300) return parseJson(text);
      const error = new ApiError(status, errorMessage(status, text));
      if (options.idempotent && RETRYABLE_STATUSES.has(status) && attempt < this.config.retries) {
        waitedMs += await this.wait(attempt, responseHeaders['retry-after'], waitedMs, error);
        continue;
      }
      throw error;
    }
  }

  get(url: URL): Promise<unknown> {
    return this.request('GET', url, { idempotent: true });
  }

  async close(): Promise<void> {
    this.lifetime.abort(new TransportClosedError());
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    await dispatcher?.destroy();
  }

  /** Waits before another attempt; resolves to the milliseconds waited. */
  private async wait(attempt: number, retryAfter: string | string[] | undefined, waitedMs: number, cause?: ApiError): Promise<number> {
    const header = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    const now = this.config.now();
    const capMs = this.config.maxRetryWaitMs;
    const random = this.config.random ?? Math.random;
    const delay = retryDelayMs({ attempt, retryAfter: header, now, capMs, random, retries: this.config.retries, waitedMs });
    if (delay === 'too-long') {
      const askedSeconds = Math.ceil((parseRetryAfter(header, now) ?? 0) / 1000);
      throw new ApiError(
        cause?.status ?? 503,
        `${cause?.message ?? 'the service is unavailable'}; it asked to wait ${askedSeconds} s before a retry (Retry-After: ${header}), more than the ${Math.round(capMs / 1000)} s carectl waits: try again later`,
      );
    }
    this.trace(`  retrying in ${delay} ms`);
    try {
      await this.config.sleep(delay, this.lifetime.signal);
    } catch {
      this.throwIfStopped();
      throw new InterruptedError();
    }
    return delay;
  }

  private throwIfStopped(interruptMessage?: string): void {
    if (this.config.signal.aborted) throw new InterruptedError(interruptMessage);
    if (this.lifetime.signal.aborted) throw new TransportClosedError();
  }

  private trace(line: string): void {
    this.config.trace?.(line);
  }
}

/** A request made or still running after the command closed its transport; nobody reads its answer. */
export class TransportClosedError extends CarectlError {
  constructor() {
    super('the connection was closed before the request ended');
  }
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new CarectlError('the service sent a reply that is not JSON');
  }
}

/** The spec's error body is {status: "error", message}; anything else falls back to the status. */
function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body?.message === 'string' && body.message !== '') return `${body.message} (HTTP ${status})`;
  } catch {
    // not JSON: fall through to the plain status
  }
  return `the service answered HTTP ${status}`;
}

/**
 * The signal for one attempt: aborted by Ctrl-C or when the attempt runs past its time. Cleared
 * as soon as the attempt ends. AbortSignal.timeout would keep each attempt's timer and signal
 * alive for the whole timeout: hundreds of them in a long export, held until V8's next full
 * collection and enough to grow a streaming export's memory by megabytes.
 */
function attemptDeadline(interrupt: AbortSignal, timeoutMs: number): { signal: AbortSignal; clear(): void } {
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

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  const code = e?.code ?? e?.cause?.code;
  return code ? `${code}${e?.message ? ` (${e.message})` : ''}` : (e?.message ?? String(err));
}
