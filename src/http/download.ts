/**
 * Downloads a report file from its download address: another origin, so it is fetched with a
 * plain client that never carries the API credentials (never through Transport).
 *
 * A file is streamed into a temporary file beside PATH (a PartialFile, created by the caller
 * before anything is sent), flushed to disk, and renamed into place only when complete: a failed
 * or interrupted download leaves nothing at PATH (and no temporary file). PATH `-` streams to
 * standard output.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { ApiError, CarectlError, InterruptedError, NetworkError, isBrokenPipe } from '../errors.js';
import type { OutStream } from '../io.js';
import { StreamSink } from '../output/stream-sink.js';
import { RETRYABLE_STATUSES, retryDelayMs } from './retry.js';
import { loadUndici } from './undici.js';

/** Where the bytes go: a file (absolute path, through its temporary file) or standard output. */
export type DownloadTarget = { file: string; partial: PartialFile } | { stdout: Writable };

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

/** Downloads to the target; resolves to the number of bytes written. */
export async function download(options: DownloadOptions): Promise<number> {
  const url = checkedUrl(options.url);
  const { Agent, interceptors } = await loadUndici();
  // A fresh agent with no default headers: nothing of the API connection can leak into it.
  const dispatcher = new Agent({ connections: 1 }).compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }));
  let waitedMs = 0;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await attemptDownload(dispatcher, url, options);
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
    await dispatcher.destroy().catch(() => undefined);
  }
}

function checkedUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CarectlError(`the report's download address is not a URL: ${text}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CarectlError(`refusing a download address with scheme ${url.protocol}`);
  return url;
}

async function attemptDownload(dispatcher: Dispatcher, url: URL, options: DownloadOptions): Promise<number> {
  let reply: Dispatcher.ResponseData;
  const started = options.now();
  // A signed address may carry its signature in the query: a bearer secret, kept out of logs.
  options.trace?.(`> GET ${url.origin}${url.pathname}${url.search ? '?[redacted]' : ''} (download: no credentials)`);
  try {
    reply = await dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'GET',
      headers: { 'user-agent': options.userAgent, accept: '*/*' },
      headersTimeout: options.idleTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      signal: options.signal,
    });
  } catch (err) {
    options.trace?.(`< ${describe(err)} (${options.now() - started} ms)`);
    throw new TransientDownloadError(`download from ${url.origin} failed: ${describe(err)}`, undefined, undefined);
  }
  options.trace?.(`< ${reply.statusCode} (${options.now() - started} ms)`);
  if (reply.statusCode < 200 || reply.statusCode >= 300) {
    await reply.body.dump().catch(() => undefined);
    const message = `download from ${url.origin} answered HTTP ${reply.statusCode}`;
    if (RETRYABLE_STATUSES.has(reply.statusCode)) throw new TransientDownloadError(message, header(reply.headers['retry-after']), reply.statusCode);
    throw new ApiError(reply.statusCode, message);
  }
  const length = Number(header(reply.headers['content-length']));
  const total = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
  const sink = 'file' in options.target ? await fileSink(options.target.partial, options.target.file) : stdoutSink(options.target.stdout);
  let received = 0;
  try {
    options.onProgress?.(0, total);
    try {
      for await (const chunk of reply.body) {
        await sink.write(chunk as Buffer);
        received += (chunk as Buffer).length;
        options.onProgress?.(received, total);
      }
    } catch (err) {
      // A reader that left (`--file - | head`) ends the download quietly, like any pipeline.
      if (err instanceof CarectlError || isBrokenPipe(err)) throw err;
      const message = `download from ${url.origin} broke off after ${received} bytes: ${describe(err)}`;
      throw received > 0 && 'stdout' in options.target ? new StdoutStarted(message) : new TransientDownloadError(message, undefined, undefined);
    }
    if (total !== undefined && received !== total) {
      throw new TransientDownloadError(`download from ${url.origin} ended after ${received} of ${total} bytes`, undefined, undefined);
    }
    await sink.commit();
    return received;
  } catch (err) {
    await sink.discard();
    throw err;
  }
}

interface Sink {
  write(chunk: Buffer): Promise<void>;
  /** Makes the bytes final (the file appears at PATH). */
  commit(): Promise<void>;
  /** Ends a failed attempt (a file's bytes stay until the next attempt empties it, or discard). */
  discard(): Promise<void>;
}

/** Temporary files of downloads in progress, for removePartialFiles(). */
const partialFiles = new Set<string>();

/**
 * Removes the temporary files of unfinished downloads, synchronously: for a process that must
 * end at once (a second Ctrl-C) and cannot wait for the download to clean up after itself.
 */
export function removePartialFiles(): void {
  for (const file of partialFiles) {
    try {
      rmSync(file, { force: true });
    } catch {
      // Ending at once matters more than one file that cannot be removed.
    }
  }
  partialFiles.clear();
}

/**
 * The temporary file a download is written into: `NAME.partial-<random>` in the destination's
 * folder, so the final rename stays on one file system. It is created before any request, so a
 * destination that cannot be written is found before a report is requested and waited for; its
 * owner discards it however the command ends (a no-op once committed), and removePartialFiles()
 * covers a forced stop.
 */
export class PartialFile {
  #offset = 0;
  #closed = false;
  #done = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /** Rejects with the system's error when the folder cannot be written. */
  static async create(folder: string, name: string): Promise<PartialFile> {
    const path = join(folder, `${name}.partial-${randomBytes(6).toString('hex')}`);
    // Registered first: a forced stop while open() runs still finds the file.
    partialFiles.add(path);
    try {
      return new PartialFile(path, await open(path, 'wx'));
    } catch (err) {
      partialFiles.delete(path);
      throw err;
    }
  }

  /** Empties the file for a fresh attempt. */
  async restart(): Promise<void> {
    await this.handle.truncate(0);
    this.#offset = 0;
  }

  async write(chunk: Buffer): Promise<void> {
    // At an explicit offset: truncate() does not move the file position back.
    await this.handle.write(chunk, 0, chunk.length, this.#offset);
    this.#offset += chunk.length;
  }

  /** Flushes to disk and renames the file to `to`. */
  async commit(to: string): Promise<void> {
    await this.handle.sync();
    await this.#close();
    await rename(this.path, to);
    this.#done = true;
    partialFiles.delete(this.path);
  }

  /** Removes the file (nothing once committed or discarded). */
  async discard(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#close().catch(() => undefined);
    await rm(this.path, { force: true });
    partialFiles.delete(this.path);
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.handle.close();
  }
}

/** One attempt's writes into the partial file; errors name PATH, which is what the user gave. */
async function fileSink(partial: PartialFile, path: string): Promise<Sink> {
  const failed = (err: unknown): never => {
    throw new CarectlError(`cannot write ${path}: ${describe(err)}`);
  };
  await partial.restart().catch(failed);
  return {
    write: (chunk) => partial.write(chunk).catch(failed),
    commit: () => partial.commit(path).catch(failed),
    discard: async () => undefined,
  };
}

function stdoutSink(stream: Writable): Sink {
  const sink = new StreamSink(stream);
  return {
    // StreamSink hands the chunk to stream.write unchanged, which takes bytes as well as text.
    write: (chunk) => sink.write(chunk as unknown as string),
    commit: () => sink.end(),
    discard: async () => undefined,
  };
}

/** Waits before another attempt; resolves to the milliseconds waited. */
async function waitBeforeRetry(attempt: number, waitedMs: number, err: TransientDownloadError, options: DownloadOptions): Promise<number> {
  const random = options.random ?? Math.random;
  const delay = retryDelayMs({ attempt, retryAfter: err.retryAfter, now: options.now(), capMs: options.maxRetryWaitMs, random, retries: options.retries, waitedMs });
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

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return code && e?.message && !e.message.includes(code) ? `${code} (${e.message})` : (e?.message ?? String(err));
}

/**
 * A byte progress bar on a terminal (`[#####-----]  48%  1.2 MB / 2.5 MB`), redrawn at most
 * every 100 ms and cleared when done. Off a terminal or with --quiet: nothing.
 */
export function createByteProgress(stderr: OutStream, quiet: boolean, label: string, now: () => number): { update(received: number, total: number | undefined): void; finish(): void } {
  if (quiet || !stderr.isTTY) return { update: () => undefined, finish: () => undefined };
  const BAR_WIDTH = 24;
  let lastDraw = -Infinity;
  let drawn = false;
  return {
    update(received, total) {
      const complete = total !== undefined && received >= total;
      if (!complete && now() - lastDraw < 100) return;
      lastDraw = now();
      drawn = true;
      let text = `${label} ${formatBytes(received)}`;
      if (total !== undefined && total > 0) {
        const ratio = Math.min(1, received / total);
        const filled = Math.round(ratio * BAR_WIDTH);
        text = `${label} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%  ${formatBytes(received)} / ${formatBytes(total)}`;
      }
      stderr.stream.write(`\r\x1b[2K${text}`);
    },
    finish() {
      if (drawn) stderr.stream.write('\r\x1b[2K');
    },
  };
}

/** 512 B, 12.3 KB, 4.5 MB (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
