/** `reports create`: the POST body from the flags, the POST itself, then the wait if asked. */
import { extname } from 'node:path';
import type { ApiClient, ApiRecord } from '../../api/client.js';
import { idProblem } from '../../cli/ids.js';
import { DATE_TYPES, REPORT_FORMATS, REPORT_REFERENCES, type Version } from '../../catalogue/index.js';
import { NameResolver, type Named } from '../../cli/names.js';
import type { Context } from '../../cli/context.js';
import { BadReplyError, CarectlError, mayHaveBeenApplied, UsageError } from '../../core/errors.js';
import { idText } from '../../core/exact-json.js';
import { parseDay, parseEnum } from '../../core/parse.js';
import { checkedDestination, type Destination } from './destination.js';
import { shellWord } from '../../core/shell.js';
import { printReport, reports, reportsVersion, timeoutOf } from './shared.js';
import { waitAndDownload } from './wait.js';
import {
  holdingLedger,
  listCommand,
  listedBefore,
  remember,
  rememberUnclearPost,
  reportAfterUnclearPost,
  reusableReport,
  reuseScope,
  unclearPostScope,
  type Obtained,
  type ReportParameters,
  type ReuseScope,
} from './reuse.js';

export interface CreateOptions {
  account: string | undefined;
  channel: string | undefined;
  from: string | undefined;
  to: string | undefined;
  dateType: string | undefined;
  format: string | undefined;
  wait: boolean;
  download: string | undefined;
  timeout: string | undefined;
  unzip: boolean;
  reuse: boolean;
}

interface CreateRequest {
  body: Record<string, unknown>;
  /** The format asked for, which the file must be. */
  format: string | undefined;
  /** For the hint when the reply names no usable id. */
  listCommand: string;
  parameters: ReportParameters;
  /** The command that picks up the report an unclear POST may have made (--reuse). */
  reuseCommand: string;
}

/** A POST that failed after it may have reached the service: the report may exist. */
class ReportMayExist extends CarectlError {
  /** A reply came (2xx, or one that cannot be read): the service took the POST, so it is never sent again. */
  readonly answered: boolean;
  constructor(message: string, answered: boolean) {
    super(`${message}; the report may have been created all the same`);
    this.answered = answered;
  }
}

export async function createReport(ctx: Context, opts: CreateOptions): Promise<void> {
  const downloadTo = await checkedDestination(ctx, opts.download, '--download', opts.unzip);
  const given = createRequest(ctx, opts, downloadTo);
  const api = await ctx.api();
  // A channel by name or id: what the service takes, before anything is written (one list request).
  const request = opts.channel === undefined ? given : createRequest(ctx, { ...opts, channel: await channelId(ctx, api, opts.channel) }, downloadTo);
  const waits = opts.wait || downloadTo !== undefined;
  if (!waits && opts.timeout !== undefined) throw new UsageError('--timeout limits the wait: use it with --wait or --download');
  const timeoutMs = timeoutOf(opts.timeout);
  const printer = await ctx.printer();
  const version = await reportsVersion(ctx);
  const scope = opts.reuse ? await reuseScope(ctx, request.parameters) : undefined;
  const created = scope ? await reuseOrCreate(ctx, api, version, request, scope) : await postNoted(ctx, api, version, request);
  if (!waits) return printReport(ctx, printer, { id: created.record.id, url: created.record.url });
  await waitAndDownload(ctx, api, version, created.id, { timeoutMs, downloadTo, printer, format: request.format });
}

/**
 * --reuse: the report made before with these parameters, else a new one, noted in the ledger; all
 * under the ledger's lock. A POST whose outcome is unknown is followed by a look for what it made
 * (a report not listed before it), before it is sent again.
 */
function reuseOrCreate(ctx: Context, api: ApiClient, version: Version, request: CreateRequest, scope: ReuseScope): Promise<Obtained> {
  return holdingLedger(ctx, scope, async () => {
    const reused = await reusableReport(ctx, api, version, scope);
    if (reused) return reused;
    const before = await listedBefore(api, version, request.parameters);
    for (let attempt = 0; ; attempt++) {
      try {
        const created = await postReport(api, version, request);
        await remember(ctx, scope, created.id);
        return created;
      } catch (err) {
        if (!(err instanceof ReportMayExist)) throw err;
        // Noted first: should the look fail too, the next --reuse run looks again.
        await remember(ctx, scope, '', before);
        const found = await reportAfterUnclearPost(ctx, api, version, scope, before);
        if (found) {
          await remember(ctx, scope, found.id);
          return found;
        }
        if (err.answered || attempt >= ctx.retries) throw new CarectlError(`${err.message}: pick it up with: ${request.reuseCommand}`);
        ctx.notice(`${err.message}, but no such report is listed: sending it again (--reuse)`);
      }
    }
  });
}

async function channelId(ctx: Context, api: ApiClient, channel: string): Promise<string> {
  const [named] = await new NameResolver(api, await ctx.scheduler()).resolve('--channel', REPORT_REFERENCES.channel, [channel.trim()]);
  return (named as Named).id;
}

/**
 * POST without --reuse; one whose outcome is unknown is noted, with the ids listed before it, for
 * the --reuse line its error gives.
 */
async function postNoted(ctx: Context, api: ApiClient, version: Version, request: CreateRequest): Promise<Obtained> {
  const scope = await unclearPostScope(ctx, request.parameters);
  const before = scope && (await listedBefore(api, version, request.parameters));
  try {
    return await postReport(api, version, request);
  } catch (err) {
    if (!(err instanceof ReportMayExist)) throw err;
    const noted = scope !== undefined && (await rememberUnclearPost(scope, before));
    throw new CarectlError(`${err.message}: ${noted ? `pick it up with: ${request.reuseCommand}` : `look with ${request.listCommand} before trying again`}`);
  }
}

/**
 * The POST body from the flags; every mistake is a UsageError before anything is sent. Without
 * --format, a --download file named .csv, .json or .xlsx asks for that format: the service's own
 * default (xlsx) saved as nightly.csv would be a ZIP archive under a csv name.
 */
function createRequest(ctx: Context, opts: CreateOptions, downloadTo: Destination | undefined): CreateRequest {
  const account = nonEmpty(opts.account, '--account');
  const channel = nonEmpty(opts.channel, '--channel');
  if ((account === undefined) === (channel === undefined)) throw new UsageError('give exactly one of --account ID or --channel ID');
  if (opts.from === undefined || opts.to === undefined) throw new UsageError('--from DATE and --to DATE are both required');
  const from = parseDay(opts.from, '--from', ctx.io.now());
  const to = parseDay(opts.to, '--to', ctx.io.now());
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  const dateType = parseEnum(opts.dateType ?? 'created_date', '--date-type', DATE_TYPES);
  const named = downloadTo?.kind === 'file' && !opts.unzip ? REPORT_FORMATS.find((one) => extname(downloadTo.shown).toLowerCase() === `.${one}`) : undefined;
  const format = opts.format === undefined ? named : parseEnum(opts.format, '--format', REPORT_FORMATS);
  if (named !== undefined && format !== named)
    ctx.notice(`--download ${downloadTo!.shown} is named .${named}, but the file will hold ${format} (--format ${format})`);
  const target = account !== undefined ? { account: accountId(account) } : { channel };
  const parameters: ReportParameters = {
    target: account !== undefined ? { kind: 'account', id: account } : { kind: 'channel', id: channel! },
    date_from: from,
    date_to: to,
    date_type: dateType,
    format,
  };
  return {
    body: { ...target, date_from: from, date_to: to, date_type: dateType, ...(format && { format }) },
    format,
    listCommand: listCommand(parameters),
    parameters,
    reuseCommand: reuseCommand(opts, parameters, downloadTo),
  };
}

/** The same command with --reuse, its dates as sent (a relative date would move by the next day), quoted for a POSIX shell. */
function reuseCommand(opts: CreateOptions, parameters: ReportParameters, downloadTo: Destination | undefined): string {
  const { target, date_from, date_to, date_type, format } = parameters;
  const words = ['carectl reports create', `--${target.kind} ${shellWord(target.id)}`, `--from ${date_from} --to ${date_to} --date-type ${date_type}`];
  if (format !== undefined) words.push(`--format ${format}`);
  if (downloadTo !== undefined) words.push(`--download ${shellWord(downloadTo.shown)}`);
  else if (opts.wait) words.push('--wait');
  if (opts.timeout !== undefined) words.push(`--timeout ${shellWord(opts.timeout)}`);
  if (opts.unzip) words.push('--unzip');
  return [...words, '--reuse'].join(' ');
}

function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') throw new UsageError(`${flag}: needs an id`);
  return text;
}

/** Account ids are numbers in the service's replies; one written as a number is sent as one (01001 is not: it stays as typed). */
function accountId(id: string): string | number {
  return /^(0|[1-9]\d*)$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : id;
}

/**
 * POST once (never retried once it may have arrived): a duplicate report is worse than an error.
 * The id the service names is checked as an id typed by the user is: it goes into paths.
 */
async function postReport(api: ApiClient, version: Version, request: CreateRequest): Promise<{ id: string; record: ApiRecord }> {
  let record: ApiRecord | undefined;
  try {
    record = await api.createRecord(reports, version, request.body);
  } catch (err) {
    // The transport's one rule (a dropped connection after sending, a gateway's 502/503/504): never a reply known to come before sending.
    if (err instanceof CarectlError && mayHaveBeenApplied(err)) throw new ReportMayExist(err.message, err instanceof BadReplyError);
    throw err;
  }
  const id = idText(record?.id);
  if (record === undefined || id === undefined || id === '') throw new ReportMayExist('the service accepted the report but its reply named no report id', true);
  if (id.trim() !== id || idProblem(id, reports) !== undefined) {
    throw new ReportMayExist(`the service accepted the report but named it ${JSON.stringify(id)}, which is not a report id`, true);
  }
  return { id, record };
}
