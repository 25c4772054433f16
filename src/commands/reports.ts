/**
 * `reports create`, `reports wait` and `reports download`: from the request to the file on disk
 * in one command, with every way of stopping part-way (failure, timeout, Ctrl-C) naming the
 * report and the command that picks it up again.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CarectlError, InterruptedError, NetworkError, ReportFailedError, UsageError, systemReason } from '../errors.js';
import { createByteProgress, download, formatBytes, PartialFile, type DownloadTarget } from '../http/download.js';
import type { Transport } from '../http/transport.js';
import { proxyFromEnv } from '../http/proxy.js';
import { writeText, type Format } from '../output/index.js';
import { parseDate, parseDuration, parseEnum } from '../parse.js';
import { createWaitProgress, REPORT_STATE_FIELDS, reportState, waitForReport } from '../reports/wait.js';
import { resourceByName, unwrapSingle, type Version } from '../resources.js';
import { VERSION } from '../version.js';
import type { Action, Options } from './action.js';
import { addExamples, fetchSingle, requireId } from './resource.js';

const reports = resourceByName('reports');
export const DATE_TYPES = ['created_date', 'updated_date'] as const;
export const REPORT_FORMATS = ['xlsx', 'csv', 'json'] as const;
const DEFAULT_TIMEOUT = '30m';
const MAX_RETRY_WAIT_MS = 60_000;

export function addReportCommands(program: Command, action: Action): void {
  const group = program.commands.find((c) => c.name() === 'reports') as Command;
  group.description('read, create, wait for and download reports');

  const create = group
    .command('create')
    .description('request a report; prints its id, or waits for it and downloads it')
    .option('--account <id>', 'report on this account (or --channel)')
    .option('--channel <id>', 'report on this channel (or --account)')
    .option('--from <date>', 'first day of the range, included (YYYY-MM-DD, today, yesterday, Nd, Nw; UTC)')
    .option('--to <date>', 'last day of the range, included')
    .option('--date-type <type>', `which date of the content is matched: ${DATE_TYPES.join(' or ')} (default: created_date)`)
    .option('--format <format>', `file format: ${REPORT_FORMATS.join(', ')} (default: the service's)`)
    .option('--wait', 'wait until the report is generated (exit 5 if it fails)')
    .option('--download <path>', 'wait, then save the file to PATH (a folder: report-ID.EXT in it; - : stdout)')
    .option('--timeout <duration>', `how long to wait (default: ${DEFAULT_TIMEOUT}; exit 6 when it runs out)`);
  addExamples(create, [
    'carectl reports create --account 1001 --from 7d --to yesterday',
    'carectl reports create --channel 202 --from 2026-06-01 --to 2026-06-30 --format csv --download june.csv',
    'carectl --quiet reports create --account 1001 --from yesterday --to yesterday --format json --download - | jq .rows',
  ]);
  create.action(action((ctx, opts) => createReport(ctx, opts)));

  const wait = group
    .command('wait <id>')
    .description('wait until a report is generated (exit 5 if it fails, 6 on timeout)')
    .option('--download <path>', 'then save the file to PATH (a folder: report-ID.EXT in it; - : stdout)')
    .option('--timeout <duration>', `how long to wait (default: ${DEFAULT_TIMEOUT})`);
  addExamples(wait, ['carectl reports wait 60003', 'carectl reports wait 60003 --timeout 10m --download reports/']);
  wait.action(action((ctx, opts, args) => waitCommand(ctx, opts, args[0] as string)));

  const downloadCommand = group
    .command('download <id>')
    .description("save a generated report's file")
    .option('--file <path>', 'where to save it (default: report-ID.EXT in the current folder; a folder: report-ID.EXT in it; - : stdout)');
  addExamples(downloadCommand, ['carectl reports download 60001', 'carectl reports download 60001 --file - | head -5']);
  downloadCommand.action(action((ctx, opts, args) => downloadReport(ctx, opts, args[0] as string)));
}

// ---- the commands ----

interface CreateRequest {
  body: Record<string, unknown>;
  /** For the hint after an unclear POST outcome. */
  listCommand: string;
}

async function createReport(ctx: Context, opts: Options): Promise<void> {
  const request = createRequest(ctx, opts);
  const downloadTo = await checkedDestination(ctx, opts.download as string | undefined, '--download');
  const waits = opts.wait === true || downloadTo !== undefined;
  if (!waits && opts.timeout !== undefined) throw new UsageError('--timeout limits the wait: use it with --wait or --download');
  const timeoutMs = timeoutOf(opts);
  const format = await ctx.outputFormat();
  const version = await reportsVersion(ctx);

  const transport = await ctx.transport();
  const created = await postReport(transport, version, request);
  if (!waits) return printReport(ctx, format, created);
  await waitAndDownload(ctx, transport, version, String(created.id), { timeoutMs, downloadTo, format });
}

async function waitCommand(ctx: Context, opts: Options, rawId: string): Promise<void> {
  const id = requireId(rawId, reports);
  const downloadTo = await checkedDestination(ctx, opts.download as string | undefined, '--download');
  const timeoutMs = timeoutOf(opts);
  const format = await ctx.outputFormat();
  const version = await reportsVersion(ctx);
  await waitAndDownload(ctx, await ctx.transport(), version, id, { timeoutMs, downloadTo, format });
}

async function downloadReport(ctx: Context, opts: Options, rawId: string): Promise<void> {
  const id = requireId(rawId, reports);
  const given = await checkedDestination(ctx, opts.file as string | undefined, '--file');
  const destination = given ?? (await withPartialFile(ctx, { kind: 'folder', path: ctx.io.cwd, shown: '' }, '--file'));
  const version = await reportsVersion(ctx);
  const record = await fetchReport(await ctx.transport(), version, id);
  const state = reportState(record);
  if (state === 'failed') throw new ReportFailedError(`report ${id} failed: ${String(record.failure)}`);
  const resume = `carectl reports download ${id}${given ? ` --file ${shellWord(given.shown)}` : ''}`;
  if (state !== 'generated') {
    throw new CarectlError(`report ${id} is still ${state}; wait for it with: carectl reports wait ${id} --download ${shellWord(given?.shown ?? '.')}`);
  }
  await saveReport(ctx, id, record, destination, resume);
}

// ---- create ----

/** The POST body from the flags; every mistake is a UsageError before anything is sent. */
function createRequest(ctx: Context, opts: Options): CreateRequest {
  const account = nonEmpty(opts.account, '--account');
  const channel = nonEmpty(opts.channel, '--channel');
  if ((account === undefined) === (channel === undefined)) throw new UsageError('give exactly one of --account ID or --channel ID');
  if (opts.from === undefined || opts.to === undefined) throw new UsageError('--from DATE and --to DATE are both required');
  const from = parseDate(opts.from as string, '--from', ctx.io.now());
  const to = parseDate(opts.to as string, '--to', ctx.io.now());
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  const dateType = parseEnum((opts.dateType as string | undefined) ?? 'created_date', '--date-type', DATE_TYPES);
  const format = opts.format === undefined ? undefined : parseEnum(opts.format as string, '--format', REPORT_FORMATS);
  const target = account !== undefined ? { account: accountId(account) } : { channel };
  return {
    body: { ...target, date_from: from, date_to: to, date_type: dateType, ...(format && { format }) },
    listCommand: account !== undefined ? `carectl reports list --account ${shellWord(account)}` : `carectl reports list --channel ${shellWord(channel!)}`,
  };
}

function nonEmpty(value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const text = (value as string).trim();
  if (text === '') throw new UsageError(`${flag}: needs an id`);
  return text;
}

/** Account ids are numbers in the service's replies; a numeric one is sent as a number too. */
function accountId(id: string): string | number {
  return /^\d+$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : id;
}

/** POST once (never retried once it may have arrived): a duplicate report is worse than an error. */
async function postReport(transport: Transport, version: Version, request: CreateRequest): Promise<Record<string, unknown>> {
  let reply: unknown;
  try {
    reply = await transport.request('POST', transport.url(`${version}/${reports.path}`), { body: request.body, idempotent: false });
  } catch (err) {
    if (err instanceof NetworkError && err.maybeSent) {
      throw new CarectlError(`${err.message}; the report may have been created all the same: look with ${request.listCommand} before trying again`);
    }
    throw err;
  }
  const record = reply === null ? undefined : unwrapSingle(reports, reply);
  if (record?.id === undefined || record.id === null || record.id === '') {
    throw new CarectlError(`the service accepted the report but its reply named no report id; look with ${request.listCommand}`);
  }
  return record;
}

// ---- wait and download ----

type FileDestination =
  /** A file path; `shown` is what the user typed, for messages and resume commands. */
  | { kind: 'file'; path: string; shown: string }
  /** report-ID.EXT goes into this folder. */
  | { kind: 'folder'; path: string; shown: string };
type Destination = (FileDestination & { partial: PartialFile }) | { kind: 'stdout'; shown: '-' };

/**
 * Resolves PATH against the current folder and creates the download's temporary file there,
 * before any request: a destination that cannot be written must not cost a report and its wait.
 */
async function checkedDestination(ctx: Context, given: string | undefined, flag: string): Promise<Destination | undefined> {
  if (given === undefined) return undefined;
  if (given === '-') return { kind: 'stdout', shown: '-' };
  if (given.trim() === '') throw new UsageError(`${flag}: needs a path (or - for standard output)`);
  const path = resolve(ctx.io.cwd, given);
  if ((await stat(path).catch(() => undefined))?.isDirectory()) return withPartialFile(ctx, { kind: 'folder', path, shown: given }, flag);
  const folder = await stat(dirname(path)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new UsageError(`${flag}: the folder ${dirname(given) || '.'} does not exist`);
  return withPartialFile(ctx, { kind: 'file', path, shown: given }, flag);
}

/** The destination with its temporary file, removed when the command ends unless it was renamed into place. */
async function withPartialFile(ctx: Context, destination: FileDestination, flag: string): Promise<Destination> {
  const [folder, name] = destination.kind === 'folder' ? [destination.path, 'report'] : [dirname(destination.path), basename(destination.path)];
  const partial = await PartialFile.create(folder, name).catch((err: Error) => {
    const reason = systemReason(err);
    // No PATH given: the current folder is the default, and the flag is the way out.
    if (destination.shown === '') throw new UsageError(`cannot write to the current folder (${folder}): ${reason}; choose another with ${flag} PATH`);
    throw new UsageError(`${flag}: cannot write to ${destination.kind === 'file' ? destination.shown : `the folder ${destination.shown}`}: ${reason}`);
  });
  ctx.onClose(() => partial.discard());
  return { ...destination, partial };
}

interface WaitPlan {
  timeoutMs: number;
  downloadTo: Destination | undefined;
  format: Format;
}

async function waitAndDownload(ctx: Context, transport: Transport, version: Version, id: string, plan: WaitPlan): Promise<void> {
  const resume = `carectl reports wait ${id}${plan.downloadTo ? ` --download ${shellWord(plan.downloadTo.shown)}` : ''}`;
  const record = await waitForReport({
    reportId: id,
    fetch: () => fetchReport(transport, version, id),
    now: ctx.io.now,
    sleep: ctx.io.sleep,
    signal: ctx.io.signal,
    timeoutMs: plan.timeoutMs,
    resumeCommand: resume,
    progress: createWaitProgress(ctx.io.stderr, ctx.globals.quiet === true, id),
  });
  if (plan.downloadTo) await saveReport(ctx, id, record, plan.downloadTo, resume);
  if (plan.downloadTo?.kind !== 'stdout') await printReport(ctx, plan.format, record);
}

function fetchReport(transport: Transport, version: Version, id: string): Promise<Record<string, unknown>> {
  return fetchSingle(transport, reports, version, id, [['fields', REPORT_STATE_FIELDS.join(',')]]);
}

/** The id alone for table/csv/tsv (`id=$(carectl reports create …)`); the record for json/ndjson. */
async function printReport(ctx: Context, format: Format, record: Record<string, unknown>): Promise<void> {
  if (format !== 'json' && format !== 'ndjson') return writeText(ctx.io.stdout.stream, `${String(record.id)}\n`);
  const writer = ctx.writer(format, 'single', []);
  await writer.write(record);
  await writer.end();
}

async function saveReport(ctx: Context, id: string, record: Record<string, unknown>, destination: Destination, resume: string): Promise<void> {
  const url = record.download;
  if (typeof url !== 'string' || url === '') throw new CarectlError(`report ${id} is generated but has no download address`);
  const target: DownloadTarget =
    destination.kind === 'stdout'
      ? { stdout: ctx.io.stdout.stream }
      : { file: destination.kind === 'folder' ? join(destination.path, defaultFileName(id, url)) : destination.path, partial: destination.partial };
  const bar = createByteProgress(ctx.io.stderr, ctx.globals.quiet === true, `report ${id}`, ctx.io.now);
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
      now: ctx.io.now,
      sleep: ctx.io.sleep,
      signal: ctx.io.signal,
      proxy: proxyFromEnv(ctx.io.env),
      onProgress: (received, total) => {
        if ('stdout' in target) onStdout = received;
        bar.update(received, total);
      },
      ...(ctx.trace && { trace: ctx.trace }),
    });
  } catch (err) {
    const outcome = onStdout > 0 ? `the output on stdout is incomplete (${onStdout} bytes)` : 'nothing was saved';
    if (err instanceof InterruptedError) throw new InterruptedError(`interrupted while downloading report ${id}; ${outcome}; start again with: ${resume}`);
    if (err instanceof CarectlError) throw new CarectlError(`${err.message}; ${outcome}; try again with: ${resume}`, err.exitCode);
    throw err;
  } finally {
    bar.finish();
  }
  if ('file' in target) ctx.notice(`report ${id}: saved ${formatBytes(bytes)} to ${destination.kind === 'folder' ? join(destination.shown, basename(target.file)) : destination.shown}`);
}

/** `report-ID.EXT`, the extension taken from the download address (the record names no format). */
export function defaultFileName(id: string, downloadUrl: string): string {
  const pathname = URL.canParse(downloadUrl) ? new URL(downloadUrl).pathname : '';
  const extension = /\.([A-Za-z0-9]{1,8})$/.exec(pathname)?.[1]?.toLowerCase() ?? 'bin';
  return `report-${id.replace(/[^A-Za-z0-9_-]/g, '_')}.${extension}`;
}

function timeoutOf(opts: Options): number {
  return parseDuration((opts.timeout as string | undefined) ?? DEFAULT_TIMEOUT, '--timeout');
}

function reportsVersion(ctx: Context): Promise<Version> {
  return ctx.apiVersion(reports.versions, 'v1.1');
}

/** A word the shell reads back unchanged (for the commands printed in messages). */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
