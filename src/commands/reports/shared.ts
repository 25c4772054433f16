/** What the report verbs share: the resource, its version, reading one report, printing it. */
import type { ApiClient, ApiRecord } from '../../api/client.js';
import type { QueryParams } from '../../http/transport.js';
import { requireId } from '../../cli/ids.js';
import { REPORT_STATE_FIELDS, resourceByName, type Version } from '../../catalogue/index.js';
import type { Context } from '../../cli/context.js';
import { parseDuration } from '../../core/parse.js';
import { writeText } from '../../output/index.js';
import type { Printer } from '../../output/printer.js';

export const reports = resourceByName('reports');
export const DEFAULT_TIMEOUT = '30m';
export const MAX_RETRY_WAIT_MS = 60_000;

export function reportId(raw: string): string {
  return requireId(raw, reports);
}

const STATE_QUERY: QueryParams = [['fields', REPORT_STATE_FIELDS.join(',')]];

/** The report with the fields that tell its state; by `deadline` (on the injected clock) when given. */
export function fetchReport(api: ApiClient, version: Version, id: string, deadline?: number): Promise<ApiRecord> {
  return api.fetchRecord(reports, version, id, STATE_QUERY, { ...(deadline !== undefined && { deadline }) });
}

/** The address fetchReport reads the report from: a relative download address in it is relative to this. */
export function reportAddress(api: ApiClient, version: Version, id: string): URL {
  return api.recordUrl(reports, version, id, STATE_QUERY);
}

/** The id alone for table/csv/tsv (`id=$(carectl reports create …)`); the whole record for json/ndjson. */
export async function printReport(ctx: Context, printer: Printer, record: ApiRecord): Promise<void> {
  if (!printer.wholeRecords) return writeText(ctx.io.stdout.stream, `${String(record.id)}\n`, ctx.io.signal);
  const writer = printer.writer('single', []);
  await writer.write(record);
  await writer.end();
}

export function timeoutOf(timeout: string | undefined): number {
  return parseDuration(timeout ?? DEFAULT_TIMEOUT, '--timeout');
}

export function reportsVersion(ctx: Context): Promise<Version> {
  return ctx.apiVersion(reports.versions, 'v1.1');
}
