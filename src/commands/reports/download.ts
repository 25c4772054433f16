/** `reports download ID`, and saving a generated report's file (also for wait --download). */
import { constants, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { basename, join } from 'node:path';
import type { ApiRecord } from '../../api/client.js';
import { failureText, reportState } from '../../catalogue/index.js';
import type { Context } from '../../cli/context.js';
import { CarectlError, InterruptedError, LastingError, OutputError, ReportFailedError, systemReason } from '../../core/errors.js';
import { shellWord } from '../../core/shell.js';
import { VERSION } from '../../core/version.js';
import { download, formatOfType, type DownloadTarget, type PartialFile, type Unzipping } from '../../http/download.js';
import { UnzipRefusal } from '../../http/unzip.js';
import { formatBytes } from '../../core/bytes.js';
import { createByteProgress } from '../../output/download-progress.js';
import { checkedDestination, withPartialFile, type Destination } from './destination.js';
import { fetchReport, MAX_RETRY_WAIT_MS, reportAddress, reportId, reportsVersion } from './shared.js';

export interface DownloadOptions {
  id: string;
  file: string | undefined;
  unzip: boolean;
}

export async function downloadReport(ctx: Context, opts: DownloadOptions): Promise<void> {
  const id = reportId(opts.id);
  const given = await checkedDestination(ctx, opts.file, '--file', opts.unzip && opts.file !== undefined);
  const destination = given ?? (await withPartialFile(ctx, { kind: 'folder', path: ctx.io.cwd, shown: '', unzip: opts.unzip }, '--file'));
  const version = await reportsVersion(ctx);
  const record = await fetchReport(await ctx.api(), version, id);
  const state = reportState(record);
  if (state === 'failed') throw new ReportFailedError(`report ${id} failed: ${failureText(record.failure)}`);
  const resume = `carectl reports download ${shellWord(id)}${given ? ` --file ${shellWord(given.shown)}` : ''}${opts.unzip ? ' --unzip' : ''}`;
  if (state !== 'generated') {
    throw new CarectlError(
      `report ${id} is still ${state}; wait for it with: carectl reports wait ${shellWord(id)} --download ${shellWord(given?.shown ?? '.')}`,
    );
  }
  await saveReport(ctx, { id, record, readFrom: reportAddress(await ctx.api(), version, id) }, destination, resume);
}

/** A generated report: its record, the address it was read from, and the format asked for (create --format). */
export interface GeneratedReport {
  id: string;
  record: ApiRecord;
  readFrom: URL;
  format?: string | undefined;
}

export async function saveReport(ctx: Context, report: GeneratedReport, destination: Destination, resume: string): Promise<void> {
  const { id, format } = report;
  const given = report.record.download;
  if (typeof given !== 'string' || given === '') throw new CarectlError(`report ${id} is generated but has no download address`);
  // A relative address is resolved against the report's own, as any HTTP client does (no credentials go with it either).
  const url = URL.canParse(given, report.readFrom.href) ? new URL(given, report.readFrom).href : given;
  const { target, device, named } = await openTarget(ctx, { id, url, format }, destination, resume);
  const bar = createByteProgress(ctx.liveStderr, ctx.globals.quiet === true, `report ${id}`, ctx.io.now);
  // Bytes already on stdout cannot be taken back (and are never repeated by a retry), so a
  // failure after them must say the output is incomplete rather than that nothing was saved.
  let onStdout = 0;
  let bytes: number;
  try {
    bytes = await download({
      url,
      target,
      userAgent: `carectl/${VERSION}`,
      idleTimeoutMs: ctx.requestTimeoutMs,
      retries: ctx.retries,
      maxRetryWaitMs: MAX_RETRY_WAIT_MS,
      proxy: ctx.proxy(),
      now: ctx.io.now,
      sleep: ctx.io.sleep,
      signal: ctx.io.signal,
      onProgress: (received, total) => {
        if ('stdout' in target) onStdout = received;
        bar.update(received, total);
      },
      ...(ctx.trace && { trace: ctx.trace }),
      ...(format !== undefined && { format }),
      shared: await (await ctx.transport()).sharedConnections(),
    });
  } catch (err) {
    // A device counts what it took: bytes handed to its stream may wait there (node 24 takes more at once, /dev/full none).
    const landed = device ? device.bytesWritten : onStdout;
    device?.destroy();
    const outcome = landed > 0 ? `the output on ${device ? destination.shown : 'stdout'} is incomplete (${landed} bytes)` : 'nothing was saved';
    if (err instanceof InterruptedError) throw new InterruptedError(`interrupted while downloading report ${id}; ${outcome}; start again with: ${resume}`);
    // Asking again meets the same failure: an archive --unzip refuses can still be saved as it is.
    if (err instanceof UnzipRefusal)
      throw new CarectlError(`${err.message}; ${outcome}; to save the file as it is: ${resume.replace(/ --unzip$/, '')}`, err.exitCode);
    if (err instanceof LastingError) throw new CarectlError(`${err.message}; ${outcome}`, err.exitCode);
    // A device that takes no more (/dev/full) is named, and would refuse the same bytes again.
    if (device && err instanceof OutputError) throw new CarectlError(`cannot write ${destination.shown}: ${err.reason}; ${outcome}`, err.exitCode);
    if (err instanceof CarectlError) throw new CarectlError(`${err.message}; ${outcome}; try again with: ${resume}`, err.exitCode);
    throw err;
  } finally {
    bar.finish();
  }
  if (device)
    await finished(device.end()).catch((err: Error) => {
      throw new CarectlError(`cannot write ${destination.shown}: ${systemReason(err)}; try again with: ${resume}`);
    });
  tellSaved(ctx, id, destination, 'file' in target ? { path: named(), unzip: target.unzip } : undefined, bytes);
}

/**
 * Where the bytes go: stdout, a device written in place, or a file through its partial file;
 * `named()`: the file's path, once the reply named it (in a folder: report-ID.EXT).
 */
async function openTarget(
  ctx: Context,
  report: { id: string; url: string; format: string | undefined },
  destination: Destination,
  resume: string,
): Promise<{ target: DownloadTarget; device: WriteStream | undefined; named: () => string }> {
  const { id, url, format } = report;
  let path = destination.kind === 'stdout' ? '' : destination.path;
  // Opened without O_CREAT or O_TRUNC: a device or FIFO is written into, never made or replaced.
  const device =
    destination.kind === 'device'
      ? (
          await open(destination.path, constants.O_WRONLY).catch((err: Error) => {
            throw new CarectlError(`cannot write ${destination.shown}: ${systemReason(err)}; nothing was saved; try again with: ${resume}`);
          })
        ).createWriteStream()
      : undefined;
  const target: DownloadTarget =
    destination.kind === 'stdout'
      ? { stdout: ctx.io.stdout.stream }
      : device
        ? { stdout: device }
        : {
            file: destination.kind === 'folder' ? (type) => (path = join(destination.path, defaultFileName(id, url, type, format))) : destination.path,
            partial: (destination as { partial: PartialFile }).partial,
            ...('unzip' in destination && destination.unzip && { unzip: unzipping(id, destination) }),
          };
  return { target, device, named: () => path };
}

/** The notice of what was saved where (the member unzipped, or the file as sent); none for stdout. */
function tellSaved(ctx: Context, id: string, destination: Destination, file: { path: string; unzip?: Unzipping | undefined } | undefined, bytes: number): void {
  const unzipped = file?.unzip?.saved;
  if (unzipped) {
    const shown = destination.kind === 'folder' ? join(destination.shown, basename(unzipped.path)) : destination.shown;
    return ctx.notice(`report ${id}: saved ${formatBytes(unzipped.bytes)} to ${shown} (${unzipped.member}, unzipped from ${formatBytes(bytes)})`);
  }
  if (destination.kind !== 'stdout')
    ctx.notice(
      `report ${id}: saved ${formatBytes(bytes)} to ${file && destination.kind === 'folder' ? join(destination.shown, basename(file.path)) : destination.shown}`,
    );
}

/** --unzip into a file: that file; into a folder: report-ID.EXT, the extension the member's. */
function unzipping(id: string, destination: { kind: 'file' | 'folder'; path: string }): Unzipping {
  return {
    what: `the file of report ${id}`,
    finalPath: (member) => (destination.kind === 'file' ? destination.path : join(destination.path, defaultFileName(id, `file:///${member}`))),
  };
}

/**
 * `report-ID.EXT` (the record names no format): the extension of the format the reply's
 * Content-Type names, else the download address's, else the format asked for, else bin.
 */
export function defaultFileName(id: string, downloadUrl: string, contentType?: string, asked?: string): string {
  const pathname = URL.canParse(downloadUrl) ? new URL(downloadUrl).pathname : '';
  const extension = formatOfType(contentType) ?? /\.([A-Za-z0-9]{1,8})$/.exec(pathname)?.[1]?.toLowerCase() ?? asked ?? 'bin';
  return `report-${id.replace(/[^A-Za-z0-9_-]/g, '_')}.${extension}`;
}
