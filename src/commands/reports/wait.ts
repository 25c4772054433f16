/** `reports wait ID`, and the wait (then download) that create --wait shares with it. */
import type { ApiClient } from '../../api/client.js';
import type { Version } from '../../catalogue/index.js';
import type { Context } from '../../cli/context.js';
import type { Printer } from '../../output/printer.js';
import { checkedDestination, type Destination } from './destination.js';
import { saveReport } from './download.js';
import { createWaitProgress, waitForReport } from './polling.js';
import { shellWord } from '../../core/shell.js';
import { fetchReport, printReport, reportAddress, reportId, reportsVersion, timeoutOf } from './shared.js';

export interface WaitOptions {
  id: string;
  download: string | undefined;
  timeout: string | undefined;
  unzip: boolean;
}

export async function waitCommand(ctx: Context, opts: WaitOptions): Promise<void> {
  const id = reportId(opts.id);
  const downloadTo = await checkedDestination(ctx, opts.download, '--download', opts.unzip);
  const timeoutMs = timeoutOf(opts.timeout);
  const printer = await ctx.printer();
  const version = await reportsVersion(ctx);
  await waitAndDownload(ctx, await ctx.api(), version, id, { timeoutMs, downloadTo, printer });
}

export interface WaitPlan {
  timeoutMs: number;
  downloadTo: Destination | undefined;
  printer: Printer;
  /** The format asked for (create --format), which the file must be. */
  format?: string | undefined;
}

export async function waitAndDownload(ctx: Context, api: ApiClient, version: Version, id: string, plan: WaitPlan): Promise<void> {
  const to = plan.downloadTo;
  const resume = `carectl reports wait ${shellWord(id)}${to ? ` --download ${shellWord(to.shown)}${'unzip' in to && to.unzip ? ' --unzip' : ''}` : ''}`;
  const record = await waitForReport({
    reportId: id,
    fetch: (deadline) => fetchReport(api, version, id, deadline),
    now: ctx.io.now,
    sleep: ctx.io.sleep,
    signal: ctx.io.signal,
    timeoutMs: plan.timeoutMs,
    resumeCommand: resume,
    progress: createWaitProgress(ctx.liveStderr, ctx.globals.quiet === true, id),
  });
  // A download's notice names the report (silenced by --quiet): a cron job's stdout stays empty.
  if (plan.downloadTo) await saveReport(ctx, { id, record, readFrom: reportAddress(api, version, id), format: plan.format }, plan.downloadTo, resume);
  else await printReport(ctx, plan.printer, record);
}
