/**
 * Downloads a report file from its download address: another origin, so it is fetched with a
 * plain client that never carries the API credentials (never through Transport).
 *
 * A file is streamed into a temporary file beside PATH (a PartialFile, created by the caller
 * before anything is sent), flushed to disk, and renamed into place only when complete: a failed
 * or interrupted download leaves nothing at PATH (and no temporary file). PATH `-` streams to
 * standard output.
 *
 * A download ends, one way or another: one that stalls (no byte for idleTimeoutMs) is cut off,
 * one that grows past maxBytes (4 GiB) fails at once, and so does a redirect that cannot lead to
 * the file (another scheme, a loop, more than 5 hops). Redirects are followed here, hop by hop,
 * so that those are told apart from a transient failure worth another attempt.
 */
import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { ApiError, CarectlError, InterruptedError, LastingError, NetworkError, isBrokenPipe } from '../core/errors.js';
import type { PartialFile } from './partial-file.js';
import { createDispatcher, namingProxy, proxyLabel, type ProxySettings } from './proxy.js';
import { isProxyRefusal, proxyRefusalText, type AttemptReply } from './attempt.js';
import { redact, stripUserinfo } from './redact.js';
import { formatLimit } from './reply.js';
import { RETRYABLE_STATUSES, retryDelayMs } from './retry.js';
import { loadUndici, UndiciPatchError, type Undici } from './undici.js';
import { ACCEPT_ENCODING, decodedBody, ReplyEncodingError } from './encoding.js';
import { certificateMessage } from './tls.js';
import { OpeningError, type OpeningLimit } from './opening.js';
import { fileSink, stdoutSink, type Sink, type Unzipping } from './download-sink.js';
import { FirstBytes } from './download-check.js';
import { answerDetails, watchConnections } from './verbose.js';

// What callers of download() also need, from the modules they now live in.
export { linkTarget, PartialFile, removePartialFiles } from './partial-file.js';
export type { Unzipping } from './download-sink.js';
export { formatOfType } from './download-check.js';

/** The largest file downloaded: a report is never near it, an endless or runaway body is. */
export const MAX_DOWNLOAD_BYTES = 4 * 1024 ** 3;

/**
 * Where the bytes go: a file (absolute path, through its temporary file) or standard output. A
 * file named by what it holds (report-ID.EXT) is named from the reply's Content-Type, once it came.
 */
export type DownloadTarget = { file: string | ((contentType: string | undefined) => string); partial: PartialFile; unzip?: Unzipping } | { stdout: Writable };

export interface DownloadOptions {
  url: string;
  target: DownloadTarget;
  userAgent: string;
  /** Longest silence while waiting for headers or the next chunk (not a limit on the whole download). */
  idleTimeoutMs: number;
  /** Attempts after the first, for transient failures (network, 429, 5xx). */
  retries: number;
  maxRetryWaitMs: number;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  signal: AbortSignal;
  onProgress?: (received: number, total: number | undefined) => void;
  random?: () => number;
  /** --verbose: one line per request, reply and wait. */
  trace?: (line: string) => void;
  /** The largest file accepted, in bytes (default MAX_DOWNLOAD_BYTES). */
  maxBytes?: number;
  /** The proxies of the environment (proxyFromEnv(io.env)); none when absent. */
  proxy?: ProxySettings;
  /** The report format asked for (create --format), which the file must be; unknown when absent. */
  format?: string;
  /** The API's connections to its origin (Transport.sharedConnections): a download from there goes on them. */
  shared?: { origin: string; dispatcher: Dispatcher } | undefined;
}

/** A failure that a fresh attempt may not repeat, with what the service said about waiting. */
class TransientDownloadError extends CarectlError {
  constructor(
    message: string,
    readonly retryAfter: string | undefined,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** Bytes already went to standard output: another attempt would repeat them, so none is made. */
class StdoutStarted extends CarectlError {}

const MAX_REDIRECTIONS = 5;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Downloads to the target; resolves to the number of bytes written. */
export async function download(options: DownloadOptions): Promise<number> {
  const url = checkedUrl(options.url);
  const dispatchers = new Dispatchers(await loadUndici(), options.proxy, { timeoutMs: options.idleTimeoutMs, signal: options.signal }, options.shared);
  let waitedMs = 0;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await attemptDownload(dispatchers, url, options);
      } catch (err) {
        if (options.signal.aborted) throw new InterruptedError();
        if (!(err instanceof TransientDownloadError) || attempt >= options.retries) throw finalError(err);
        waitedMs += await waitBeforeRetry(attempt, waitedMs, err, options);
      }
    }
  } catch (err) {
    // The download's own failure is the one to report, not a cleanup that failed after it.
    if ('partial' in options.target) await options.target.partial.discard().catch(() => undefined);
    throw err;
  } finally {
    await dispatchers.destroy();
  }
}

/**
 * One connection per origin, through its proxy if the environment names one for it. Fresh, with no
 * default headers: nothing of the API connection can leak into them. The API's origin is the
 * exception: its connections are the API's (`shared`), never a second beside them.
 */
class Dispatchers {
  readonly #made = new Map<string, Dispatcher>();
  constructor(
    private readonly undici: Undici,
    private readonly proxy: ProxySettings | undefined,
    /** Opening a connection is bounded like the wait for a byte, and ends at a stop. */
    private readonly limit: OpeningLimit,
    private readonly shared: { origin: string; dispatcher: Dispatcher } | undefined,
  ) {}

  for(url: URL): Dispatcher {
    if (url.origin === this.shared?.origin) return this.shared.dispatcher;
    // By origin: whether it goes through the proxy (NO_PROXY) depends on the host.
    let dispatcher = this.#made.get(url.origin);
    if (!dispatcher) this.#made.set(url.origin, (dispatcher = createDispatcher(this.undici, url, this.proxy, { connections: 1 }, this.limit)));
    return dispatcher;
  }

  async destroy(): Promise<void> {
    await Promise.all([...this.#made.values()].map((d) => d.destroy().catch(() => undefined)));
  }
}

function checkedUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CarectlError(`the report's download address is not a URL: ${redact(text)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CarectlError(`refusing a download address with scheme ${url.protocol}`);
  return url;
}

/**
 * An address as printed: no credentials, and no query (a signed address carries its signature
 * there, a bearer secret kept out of logs).
 */
function shown(url: URL): string {
  return `${stripUserinfo(`${url.protocol}//${url.host}${url.pathname}`)}${url.search ? '?[redacted]' : ''}`;
}

/** The reply to a GET of the file, redirects followed; the redirects that cannot lead anywhere fail for good. */
async function fetchFile(
  dispatchers: Dispatchers,
  start: URL,
  options: DownloadOptions,
): Promise<{ reply: Dispatcher.ResponseData; url: URL; started: number }> {
  const visited = new Set<string>([start.href]);
  if (options.trace) watchConnections();
  for (let url = start, hops = 0; ; hops++) {
    const started = options.now();
    options.trace?.(`> GET ${shown(url)} (download: no credentials)`);
    let reply: Dispatcher.ResponseData;
    try {
      reply = await dispatchers.for(url).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'GET',
        headers: { 'user-agent': options.userAgent, accept: '*/*', 'accept-encoding': ACCEPT_ENCODING },
        headersTimeout: options.idleTimeoutMs,
        bodyTimeout: options.idleTimeoutMs,
        signal: options.signal,
      });
    } catch (err) {
      if (err instanceof UndiciPatchError) throw err;
      const reason = await namingProxy(err, url, options.proxy, describe(err, options));
      options.trace?.(`< ${reason} (${options.now() - started} ms)`);
      const failed = `download from ${url.origin} failed: ${reason}`;
      // A proxy that refused (its credentials, its rules) or a refused certificate answers the same again: no retry.
      const certificate = certificateMessage(err, url, 'download');
      if (certificate !== undefined) throw new LastingError(`download from ${url.origin} failed: ${certificate}`);
      if (isProxyRefusal(err)) throw new NetworkError(failed, false);
      throw new TransientDownloadError(failed, undefined, undefined);
    }
    const location = header(reply.headers.location);
    // A 2xx is traced once its body is in (answered()), with the bytes.
    if (reply.statusCode >= 200 && reply.statusCode < 300) return { reply, url, started };
    answered(options, url, reply.statusCode, { headers: reply.headers }, started);
    if (!REDIRECT_STATUSES.has(reply.statusCode) || location === undefined) return { reply, url, started };
    await reply.body.dump().catch(() => undefined);
    const next = URL.canParse(location, url.href) ? new URL(location, url.href) : undefined;
    const from = `download from ${url.origin} was redirected`;
    if (next === undefined) throw new CarectlError(`${from} to an address that is not a URL: ${redact(location)}`);
    if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new CarectlError(`${from} to ${shown(next)}: refusing scheme ${next.protocol}`);
    if (visited.has(next.href)) throw new CarectlError(`${from} in a loop (back to ${shown(next)})`);
    if (hops >= MAX_REDIRECTIONS) throw new CarectlError(`${from} more than ${MAX_REDIRECTIONS} times (last to ${shown(next)})`);
    visited.add(next.href);
    url = next;
  }
}

/**
 * --verbose: an answer with the details an API answer has (verbose.ts), and how its body ended
 * when it did not arrive whole.
 */
function answered(options: DownloadOptions, url: URL, status: number, seen: AttemptReply, started: number, failure?: unknown): void {
  if (!options.trace) return;
  const outcome = failure === undefined ? '' : `: ${failure instanceof Error ? failure.message : String(failure)}`;
  options.trace(`< ${status} GET ${shown(url)}${outcome} (${answerDetails('GET', url, seen, proxyLabel(url, options.proxy), options.now() - started)})`);
}

async function attemptDownload(dispatchers: Dispatchers, start: URL, options: DownloadOptions): Promise<number> {
  const { reply, url, started } = await fetchFile(dispatchers, start, options);
  await refuseFailure(reply, url);
  const maxBytes = options.maxBytes ?? MAX_DOWNLOAD_BYTES;
  const seen: AttemptReply = { headers: reply.headers };
  let decoded: DecodedBody | undefined;
  let sink: Sink | undefined;
  try {
    const opened = await openBody(reply, url, maxBytes, options.signal);
    decoded = opened.decoded;
    const contentType = header(reply.headers['content-type']);
    const { target } = options;
    sink =
      'file' in target
        ? await fileSink(target.partial, typeof target.file === 'string' ? target.file : target.file(contentType), target.unzip, options.signal)
        : stdoutSink(target.stdout, options.signal);
    const firstBytes = new FirstBytes({ contentType, asked: options.format }, `download from ${url.origin}`);
    const received = await copyBody(decoded, sink, { url, total: opened.total, maxBytes, firstBytes }, options);
    Object.assign(seen, { decodedBytes: received, wireBytes: decoded.wire() ?? received });
    answered(options, url, reply.statusCode, seen, started);
    await sink.commit();
    return received;
  } catch (err) {
    // The bytes come from the wire count only: what was decoded is not kept past a failure.
    if (seen.decodedBytes === undefined)
      answered(options, url, reply.statusCode, { headers: reply.headers, ...(decoded?.wire() !== undefined && { wireBytes: decoded.wire()! }) }, started, err);
    await sink?.discard();
    throw err;
  }
}

/** A reply other than 2xx fails the attempt: one worth another attempt (429, 5xx), or for good. */
async function refuseFailure(reply: Dispatcher.ResponseData, url: URL): Promise<void> {
  if (reply.statusCode >= 200 && reply.statusCode < 300) return;
  await reply.body.dump().catch(() => undefined);
  const message = `download from ${url.origin} answered HTTP ${reply.statusCode}`;
  if (RETRYABLE_STATUSES.has(reply.statusCode)) throw new TransientDownloadError(message, header(reply.headers['retry-after']), reply.statusCode);
  throw new ApiError(reply.statusCode, message);
}

type DecodedBody = Awaited<ReturnType<typeof decodedBody>>;

/**
 * The body, decoded, and its length as sent; a declared length over the cap fails before a byte is
 * read. A file sent with a Content-Encoding is saved decoded, and the cap applies to what is saved;
 * one without (a real .gz file) is saved as sent.
 */
async function openBody(
  reply: Dispatcher.ResponseData,
  url: URL,
  maxBytes: number,
  stop: AbortSignal,
): Promise<{ decoded: DecodedBody; total: number | undefined }> {
  const decoded = await decodedBody(reply.body, reply.headers['content-encoding'], stop).catch((err: Error) => {
    throw new CarectlError(`download from ${url.origin}: ${err.message}`);
  });
  const length = Number(header(reply.headers['content-length']));
  const total = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
  if (decoded.wire() === undefined && total !== undefined && total > maxBytes) {
    reply.body.destroy();
    throw tooLarge(url, maxBytes);
  }
  return { decoded, total };
}

function tooLarge(url: URL, maxBytes: number): CarectlError {
  return new CarectlError(`download from ${url.origin} is larger than ${formatLimit(maxBytes)}, more than carectl downloads: stopped`);
}

/**
 * Copies the body into the sink, reporting progress, up to the cap; resolves to the bytes written
 * once all the declared length arrived. The first bytes are held until they show the body is the
 * report (firstBytes). A break is transient unless bytes already went to stdout.
 */
async function copyBody(
  decoded: DecodedBody,
  sink: Sink,
  body: { url: URL; total: number | undefined; maxBytes: number; firstBytes: FirstBytes },
  options: DownloadOptions,
): Promise<number> {
  const { url, total, maxBytes, firstBytes } = body;
  let received = 0;
  let written = 0;
  const write = async (chunks: Buffer[]): Promise<void> => {
    for (const chunk of chunks) {
      await sink.write(chunk);
      written += chunk.length;
    }
    // Progress counts the bytes as sent, against the length as sent; none while the first are held.
    if (written > 0) options.onProgress?.(decoded.wire() ?? written, total);
  };
  options.onProgress?.(0, total);
  try {
    for await (const chunk of decoded.stream) {
      // Decoding may go on from bytes already received after an interrupt: it stops here.
      if (options.signal.aborted) throw new InterruptedError();
      if (received + (chunk as Buffer).length > maxBytes) {
        decoded.stream.destroy();
        throw tooLarge(url, maxBytes);
      }
      received += (chunk as Buffer).length;
      await write(firstBytes.pass(chunk as Buffer));
    }
  } catch (err) {
    // The decoding stopped by an interrupt fails the stream with the signal's reason.
    if (options.signal.aborted) throw new InterruptedError();
    // A reader that left (`--file - | head`) ends the download quietly, like any pipeline.
    if (err instanceof CarectlError || isBrokenPipe(err)) throw err;
    const message = `download from ${url.origin} broke off after ${decoded.wire() ?? received} bytes: ${err instanceof ReplyEncodingError ? err.message : describe(err, options)}`;
    throw written > 0 && 'stdout' in options.target ? new StdoutStarted(message) : new TransientDownloadError(message, undefined, undefined);
  }
  const wire = decoded.wire() ?? received;
  if (total !== undefined && wire !== total) {
    throw new TransientDownloadError(`download from ${url.origin} ended after ${wire} of ${total} bytes`, undefined, undefined);
  }
  await write(firstBytes.end());
  return written;
}

/** Waits before another attempt; resolves to the milliseconds waited. */
async function waitBeforeRetry(attempt: number, waitedMs: number, err: TransientDownloadError, options: DownloadOptions): Promise<number> {
  const random = options.random ?? Math.random;
  const delay = retryDelayMs({
    attempt,
    retryAfter: err.retryAfter,
    now: options.now(),
    capMs: options.maxRetryWaitMs,
    random,
    retries: options.retries,
    waitedMs,
  });
  if (delay === 'too-long') throw new CarectlError(`${err.message}; it asked to retry after ${err.retryAfter}, longer than carectl waits`);
  options.trace?.(`  retrying in ${delay} ms`);
  await options.sleep(delay, options.signal).catch(() => {
    throw new InterruptedError();
  });
  return delay;
}

function finalError(err: unknown): unknown {
  if (err instanceof TransientDownloadError) {
    return err.status === undefined ? new NetworkError(err.message, true) : new ApiError(err.status, err.message);
  }
  return err;
}

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function describe(err: unknown, options?: Pick<DownloadOptions, 'idleTimeoutMs'>): string {
  if (err instanceof OpeningError) return err.message;
  const e = err as { code?: string; message?: string; cause?: { code?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  const refused = proxyRefusalText(err);
  if (refused !== undefined) return refused;
  if (options && (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')) return `no byte arrived for ${options.idleTimeoutMs} ms (${code})`;
  return redact(code && e?.message && !e.message.includes(code) ? `${code} (${e.message})` : (e?.message ?? String(err)));
}
