/**
 * HTTP transport: one keep-alive connection pool (undici) to the base address, Basic auth,
 * JSON replies, typed errors, and retries of idempotent requests; through the proxy the
 * environment names (proxy.ts). Every error message and trace line it makes passes through
 * redact(): nothing it hands on holds the password, its Base64 form or a URL's credentials.
 *
 * Retries are our own loop rather than undici's RetryAgent: the waits go through the injected
 * sleep (tests never wait for real), a Retry-After beyond the cap fails instead of sleeping for
 * hours, and a non-idempotent POST must only be retried when it provably never left.
 */
import { setMaxListeners } from 'node:events';
import type { Dispatcher } from 'undici';
import { ApiError, BadReplyError, CarectlError, DeadlineError, InterruptedError, NetworkError } from '../core/errors.js';
import { stringifyJson } from '../core/exact-json.js';
import { loadUndici, UndiciPatchError } from './undici.js';
import { createDispatcher, namingProxy, proxyLabel, proxySecrets, type ProxySettings } from './proxy.js';
import { basicCredentialForms, longSecrets, redact, redactReply, stripUserinfo } from './redact.js';
import { errorMessage, MAX_REPLY_BYTES, parseReply, redirectMessage, ReplyTooLargeError } from './reply.js';
import { isNeverSentError, parseRetryAfter, retryDelayMs, RETRYABLE_STATUSES } from './retry.js';
import { ACCEPT_ENCODING, ReplyEncodingError } from './encoding.js';
import { answerDetails, watchConnections } from './verbose.js';
import { LinkElsewhereError } from './link-elsewhere.js';
import { certificateMessage, isCertificateError } from './tls.js';
import {
  attemptDeadline,
  sendAttempt,
  type AttemptReply,
  type RequestFailure,
  describeNetworkError,
  isProxyRefusal,
  isUnreadableAnswer,
  finalError,
  mayHaveReached,
} from './attempt.js';

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
  /** Receives a notice for the user (stderr): once, when a reply held a credential that prints as [redacted]. */
  notice?: (line: string) => void;
  /** The backoff's random draw, 0 ≤ r < 1 (default Math.random). */
  random?: () => number;
  /** The largest reply body read (default 64 MiB); a larger one is a BadReplyError, retried. */
  maxReplyBytes?: number;
  /** The proxies of the environment (proxyFromEnv(io.env)); none when absent. */
  proxy?: ProxySettings;
  /** Connections kept to the origin (default 4): as many as requests a command keeps in flight. */
  connections?: number;
  /** Sends the requests instead of our own pool (tests: MockAgent); close() leaves it to its owner. */
  dispatcher?: Dispatcher;
}

export interface RequestOptions {
  query?: QueryParams;
  body?: unknown;
  /** JSON text sent as it is, in place of `body` (carectl api -d: the user's bytes, 1.0 and 1e2 kept). */
  bodyText?: string;
  /** GET and the absolute-valued PATCH may be repeated; the report POST may not (but after a 429, or a 503 with Retry-After: not processed). */
  idempotent: boolean;
  /**
   * Checks a successful reply's JSON (its envelope, its records) and status: a BadReplyError thrown
   * here counts as a bad reply, retried like any other; any other error ends the request as it is.
   */
  check?: ReplyCheck;
  /**
   * Told of a 429 (or a 503 a resend may follow) with the wait it asks for (Retry-After, else the
   * back-off); answers true when it took the request back (a scheduler lowering its concurrency,
   * waiting, then letting it go again), and the attempt does not count against --retries. False:
   * the usual retry rules.
   */
  throttle?: Throttle;
  /** For a read: its end on the injected clock, retries included (an attempt is cut there, no retry waits past it): a DeadlineError. */
  deadline?: number;
}

export type Throttle = (waitMs: number, status: number) => Promise<boolean>;

export type ReplyCheck = (value: unknown, status: number) => void;

type ReplyHeaders = Record<string, string | string[] | undefined>;

/** A request across its attempts: what each attempt sends, and what the attempts so far have done. */
interface Call {
  method: string;
  url: URL;
  options: RequestOptions;
  dispatcher: Dispatcher;
  headers: Record<string, string>;
  body: string | undefined;
  maxReplyBytes: number;
  /** The request as error messages name it. */
  shown: string;
  answerTo: string;
  /**
   * A change (PATCH, POST): an attempt that may have delivered it before the request failed
   * (`reached`, see mayHaveReached) flags the error mayHaveBeenApplied. A retried change (the
   * absolute-valued PATCH) is worded so here; a POST that is never repeated by its caller.
   */
  write: boolean;
  reached: boolean;
  waitedMs: number;
}

/** How an attempt ended: with the answer, taken back by the throttle (not counted), or failed. */
type Outcome =
  { kind: 'answered'; value: unknown } | { kind: 'taken back' } | { kind: 'failed'; error: RequestFailure; retryable: boolean; retryAfter?: string | string[] };

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
  /** The credentials (the API's and the proxy's) in every form they could be echoed in. */
  readonly secrets: readonly string[];
  /** Those looked for in carectl's own text (see redactOwnText). */
  private readonly ownSecrets: readonly string[];
  private noticedRedaction = false;

  constructor(private readonly config: TransportConfig) {
    this.baseUrl = config.baseUrl;
    this.authorization = 'Basic ' + Buffer.from(`${config.user}:${config.password}`).toString('base64');
    this.secrets = [...basicCredentialForms(config.user, config.password), ...proxySecrets(config.proxy)];
    this.ownSecrets = longSecrets(this.secrets);
    const interrupt = config.signal;
    // Each request in flight listens to it (up to 32 with --parallel, and their waits): not a leak.
    setMaxListeners(0, this.lifetime.signal);
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

  /** Text the service or a proxy sent, with the credentials and any URL's userinfo taken out. */
  redact(text: string): string {
    return redact(text, this.secrets);
  }

  /** carectl's own text (where the service's parts were redacted already): see redactOwnText. */
  private redactOwn(text: string): string {
    return redact(text, this.ownSecrets);
  }

  /**
   * Accepts a paging link from a reply. Credentials go only to the base address's origin, so a
   * link elsewhere is refused rather than followed. A relative link is resolved against the page
   * it came on (`from`, RFC 3986), else against the base address.
   */
  sameOriginUrl(link: string, from: URL = this.baseUrl): URL {
    const url = new URL(link, from);
    if (url.origin !== this.baseUrl.origin) throw new LinkElsewhereError(url, this.baseUrl);
    return url;
  }

  async request(method: string, url: URL, options: RequestOptions): Promise<unknown> {
    const call = await this.prepare(method, url, options);
    if (this.config.trace) watchConnections();
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(call, attempt);
      if (outcome.kind === 'answered') return outcome.value;
      if (outcome.kind === 'taken back') {
        attempt--;
        continue;
      }
      if (!outcome.retryable || attempt >= this.config.retries) throw finalError(outcome.error, call.write && call.reached, options.idempotent);
      call.waitedMs += await this.wait(attempt, outcome.retryAfter, call.waitedMs, outcome.error, options.deadline);
    }
  }

  /** Checks the address and builds what every attempt of the request sends. */
  private async prepare(method: string, url: URL, options: RequestOptions): Promise<Call> {
    this.sameOriginUrl(url.href);
    for (const [key, value] of options.query ?? []) url.searchParams.append(key, value);
    const dispatcher = await this.connections();
    const body = options.bodyText ?? (options.body === undefined ? undefined : stringifyJson(options.body));
    const headers: Record<string, string> = {
      authorization: this.authorization,
      'user-agent': this.config.userAgent,
      accept: 'application/json',
      'accept-encoding': ACCEPT_ENCODING,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return {
      method,
      url,
      options,
      dispatcher,
      headers,
      body,
      maxReplyBytes: this.config.maxReplyBytes ?? MAX_REPLY_BYTES,
      shown: `${method} ${stripUserinfo(`${url.origin}${url.pathname}`)}`,
      // Each answer names its request: with requests in parallel, answers come in any order.
      answerTo: `${method} ${url.pathname}${url.search}`,
      write: method !== 'GET' && method !== 'HEAD',
      reached: false,
      waitedMs: 0,
    };
  }

  /** One attempt: sends the request within its time and classes what came back. */
  private async attempt(call: Call, attempt: number): Promise<Outcome> {
    this.throwIfStopped();
    const started = this.config.now();
    const left = call.options.deadline === undefined ? Infinity : call.options.deadline - started;
    if (left <= 0) throw new DeadlineError(`${call.shown}: no answer in the time given`);
    const { method, url, headers, body, maxReplyBytes } = call;
    this.trace(`> ${method} ${stripUserinfo(url)}`);
    this.trace(`> authorization: Basic [redacted]`);
    const seen: AttemptReply = {};
    let text: string;
    const deadline = attemptDeadline(this.lifetime.signal, Math.min(this.config.requestTimeoutMs, left));
    try {
      text = await sendAttempt(call.dispatcher, { url, method, headers, body, signal: deadline.signal, maxReplyBytes }, seen);
    } catch (err) {
      // The attempt is over: its timer must not outlive it into the wait before the next one.
      deadline.clear();
      if (left < this.config.requestTimeoutMs && deadline.signal.aborted && !this.lifetime.signal.aborted) {
        throw new DeadlineError(`${call.shown}: no answer in the time given`);
      }
      return this.failedAttempt(call, err, seen, started);
    } finally {
      deadline.clear();
    }
    const status = seen.status!;
    this.trace(`< ${status} ${call.answerTo} (${answerDetails(method, url, seen, proxyLabel(url, this.config.proxy), this.config.now() - started)})`);
    if (status >= 200 && status < 300) return this.success(call, status, text, seen.headers!);
    return this.failureStatus(call, attempt, status, text, seen.headers!);
  }

  /** An attempt that got no whole reply: the reply's body was unreadable, or the exchange failed. */
  private async failedAttempt(call: Call, err: unknown, seen: AttemptReply, started: number): Promise<Outcome> {
    const { options, shown, answerTo, write, url } = call;
    if (err instanceof UndiciPatchError) throw err;
    if ((err instanceof ReplyTooLargeError || err instanceof ReplyEncodingError) && seen.status !== undefined) {
      return this.unreadableBody(call, err, seen.status, seen, started);
    }
    // Cut off by Ctrl-C, a POST may already have reached the service: the user must not assume it did not.
    this.throwIfStopped(options.idempotent ? undefined : `interrupted while ${shown} was in flight: it may have reached the service`);
    const neverSent = isNeverSentError(err);
    const reason =
      certificateMessage(err, url) ?? this.redactOwn(await namingProxy(err, url, this.config.proxy, describeNetworkError(err, this.config.requestTimeoutMs)));
    this.trace(`< ${answerTo}: ${reason} (${this.config.now() - started} ms)`);
    call.reached ||= write && mayHaveReached({ neverSent });
    // A refusal (the proxy's, a certificate's) gets the same answer again. A change the service
    // answered (an unreadable reply, a head saying it may have acted) is not sent twice.
    const answered = isUnreadableAnswer(err) || (seen.status !== undefined && mayHaveReached({ status: seen.status }));
    const repeatable = options.idempotent && !(write && answered);
    const retryable = (repeatable || neverSent) && !isProxyRefusal(err) && !isCertificateError(err);
    return { kind: 'failed', error: new NetworkError(`${shown} failed: ${reason}`, !neverSent), retryable };
  }

  /** A reply whose head came but whose body carectl could not take: past the cap, or in a coding it cannot read. */
  private unreadableBody(call: Call, err: ReplyTooLargeError | ReplyEncodingError, status: number, seen: AttemptReply, started: number): Outcome {
    const { method, url, write } = call;
    this.trace(
      `< ${status} ${call.answerTo}: ${err.message} (${answerDetails(method, url, seen, proxyLabel(url, this.config.proxy), this.config.now() - started)})`,
    );
    call.reached ||= write && mayHaveReached({ status });
    // A runaway body or a bomb is the same again; a change the service took (2xx) is not sent twice.
    const taken = write && status >= 200 && status < 300;
    const permanent = err instanceof ReplyTooLargeError || err.permanent;
    return { kind: 'failed', error: new BadReplyError(`${call.shown}: ${err.message}`), retryable: call.options.idempotent && !taken && !permanent };
  }

  /** The connections to the base address (made on first use). */
  private async connections(): Promise<Dispatcher> {
    const undici = await loadUndici();
    this.throwIfStopped();
    return (this.dispatcher ??=
      this.config.dispatcher ??
      createDispatcher(
        undici,
        this.baseUrl,
        this.config.proxy,
        { keepAliveTimeout: 10_000, connections: this.config.connections ?? 4, trace: this.config.trace && ((line) => this.trace(line)) },
        { timeoutMs: this.config.requestTimeoutMs, signal: this.lifetime.signal },
      ));
  }

  /**
   * The connections to the base address's origin, for a report download from there: a second
   * connection beside an idle one of ours waits forever at a server that serves one at a time.
   * They carry no credentials of their own (each request sends its headers). None when a test's
   * dispatcher stands in for them.
   */
  async sharedConnections(): Promise<{ origin: string; dispatcher: Dispatcher } | undefined> {
    if (this.config.dispatcher) return undefined;
    return { origin: this.baseUrl.origin, dispatcher: await this.connections() };
  }

  /** A 2xx reply: its JSON, or a bad reply when it does not parse or `check` refuses it. */
  private success(call: Call, status: number, text: string, headers: ReplyHeaders): Outcome {
    const parsed = parseReply(text, headers['content-type']);
    const value = parsed.ok ? redactReply(parsed.value, text, this.secrets) : undefined;
    if (parsed.ok && value !== parsed.value && !this.noticedRedaction) {
      this.noticedRedaction = true;
      // Not silent: a short password also blanks data that merely equals it (an id, a word).
      this.config.notice?.("carectl: the service's reply holds the password (or a form of it), which prints as [redacted]");
    }
    // The check's words are carectl's, around values redacted already; the parser's name the reply's content-type.
    const reason = parsed.ok ? this.refusal(call.options.check, value, status) : this.redact(parsed.reason);
    if (reason === undefined) return { kind: 'answered', value };
    call.reached ||= call.write && mayHaveReached({ status: 200 });
    this.trace(`< ${reason}`);
    // A change answered 2xx was taken, whatever the body says: sending it again could apply it twice.
    return { kind: 'failed', error: new BadReplyError(`${call.shown}: ${this.redactOwn(reason)}`), retryable: call.options.idempotent && !call.write };
  }

  /** A reply other than 2xx: a redirect ends the request; an error status may be retried, or handed to the throttle (a 429). */
  private async failureStatus(call: Call, attempt: number, status: number, text: string, headers: ReplyHeaders): Promise<Outcome> {
    const { url, options } = call;
    if (status >= 300 && status < 400) {
      return {
        kind: 'failed',
        error: new ApiError(
          status,
          redirectMessage(status, text, headers.location, url, (part) => this.redact(part)),
        ),
        retryable: false,
      };
    }
    // A 429, or a 503 that says when to come back, was not processed: a POST may be sent again too.
    // A 503 without Retry-After may be a gateway's after passing the POST on.
    const unprocessed = status === 429 || (status === 503 && headers['retry-after'] !== undefined);
    call.reached ||= call.write && (mayHaveReached({ status }) || (status === 503 && !unprocessed && !options.idempotent));
    const error = new ApiError(status, errorMessage(status, text, { proxy: proxyLabel(url, this.config.proxy), url, clean: (part) => this.redact(part) }));
    // A 503 may be pressure of ours too: a gateway's connection limit (nginx's limit_conn) answers so, without Retry-After.
    const pressure = status === 429 || (status === 503 && (options.idempotent || unprocessed));
    if (pressure && (await this.throttled(options, attempt, status, headers['retry-after']))) return { kind: 'taken back' };
    return { kind: 'failed', error, retryable: (options.idempotent || unprocessed) && RETRYABLE_STATUSES.has(status), retryAfter: headers['retry-after'] };
  }

  get(url: URL, check?: ReplyCheck): Promise<unknown> {
    return this.request('GET', url, { idempotent: true, ...(check && { check }) });
  }

  /** Why `check` refuses a reply, or undefined when it takes it. */
  private refusal(check: ReplyCheck | undefined, value: unknown, status: number): string | undefined {
    try {
      check?.(value, status);
      return undefined;
    } catch (err) {
      if (err instanceof BadReplyError) return err.message;
      throw err;
    }
  }

  private async sleepOrStop(ms: number): Promise<void> {
    try {
      await this.config.sleep(ms, this.lifetime.signal);
    } catch {
      this.throwIfStopped();
      throw new InterruptedError();
    }
  }

  async close(): Promise<void> {
    // One error for the requests still running and the connections.
    const closed = new TransportClosedError();
    this.lifetime.abort(closed);
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    if (dispatcher !== this.config.dispatcher) await dispatcher?.destroy(closed);
  }

  /** A 429 or 503 handed to the request's throttle; false when there is none or the wait is too long. */
  private async throttled(options: RequestOptions, attempt: number, status: number, retryAfter: string | string[] | undefined): Promise<boolean> {
    if (!options.throttle) return false;
    const header = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    // Asked for no wait: fewer in flight is the answer to pressure of ours, and the back-off (up to
    // seconds, every request paused) cost a run behind a gateway's connection limit twice its time.
    if (header === undefined) return options.throttle(0, status);
    const delay = retryDelayMs({
      attempt,
      retryAfter: header,
      now: this.config.now(),
      capMs: this.config.maxRetryWaitMs,
      random: this.config.random ?? Math.random,
    });
    return delay !== 'too-long' && (await options.throttle(delay, status));
  }

  /** Waits before another attempt; resolves to the milliseconds waited. */
  private async wait(
    attempt: number,
    retryAfter: string | string[] | undefined,
    waitedMs: number,
    cause: RequestFailure,
    deadline = Infinity,
  ): Promise<number> {
    const header = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    const now = this.config.now();
    const capMs = this.config.maxRetryWaitMs;
    const random = this.config.random ?? Math.random;
    const delay = retryDelayMs({ attempt, retryAfter: header, now, capMs, random, retries: this.config.retries, waitedMs });
    if (delay === 'too-long') {
      const askedMs = parseRetryAfter(header, now) ?? 0;
      throw new ApiError(
        cause instanceof ApiError ? cause.status : 503,
        this.redactOwn(
          `${cause.message}; it asked to wait ${Math.ceil(askedMs / 1000)} s before a retry (Retry-After: ${header}), more than the ${Math.round(capMs / 1000)} s carectl waits: try again later`,
        ),
        { retryAfterMs: askedMs },
      );
    }
    if (now + delay >= deadline) {
      // The time given is waited out (a wait must not end before its --timeout), then the last answer is said.
      await this.sleepOrStop(deadline - now);
      throw new DeadlineError(cause.message, true);
    }
    this.trace(`  retrying in ${delay} ms`);
    await this.sleepOrStop(delay);
    return delay;
  }

  private throwIfStopped(interruptMessage?: string): void {
    if (this.config.signal.aborted) throw new InterruptedError(interruptMessage);
    if (this.lifetime.signal.aborted) throw new TransportClosedError();
  }

  private trace(line: string): void {
    this.config.trace?.(this.redactOwn(line));
  }
}

/** A request made or still running after the command closed its transport; nobody reads its answer. */
export class TransportClosedError extends CarectlError {
  constructor() {
    super('the connection was closed before the request ended');
  }
}
