/** Reports (v1.1): listing, the time-driven lifecycle, creation and the downloadable file. */
import { type Collection } from './collection.js';
import { type RequestContext, ref, resourceUrl } from './context.js';
import { DAY_MS, formatDate, formatDateTime, parseIsoDay } from './dates.js';
import { FIXTURES } from './fixtures.js';
import { downloadToken } from './generate.js';
import { HttpProblem, parseJsonObject } from './http.js';
import { REPORT_FORMATS, type ReportFormat, type ReportRecord, type ReportTarget, type SandboxData } from './model.js';
import { Random, hash32 } from './random.js';
import { FAILURE_MESSAGES, INBOUND_TEXTS, REPLY_TEXTS, fillNumber } from './words.js';

export type ReportState = 'queued' | 'generating' | 'generated' | 'failed';

export function reportState(report: ReportRecord, nowMs: number): ReportState {
  if (report.settled) return report.outcome;
  if (nowMs < report.startMs) return 'queued';
  if (nowMs < report.doneMs) return 'generating';
  return report.outcome;
}

/** A download address under this prefix answers 302 to the same path without it. */
export const REDIRECT_PREFIX = '/redirect';

export function downloadPath(report: ReportRecord): string {
  return `/downloads/${report.download_token}/${report.id}.${report.format}`;
}

function reportWire(report: ReportRecord, ctx: RequestContext): Record<string, unknown> {
  const wire: Record<string, unknown> = {
    id: report.id,
    url: resourceUrl(ctx, 'reports', report.id),
    name: report.name,
    date_from: report.date_from,
    date_to: report.date_to,
    generated_by: { id: report.generated_by, url: `${ctx.runtime.baseUrl}/v1.1/moderators/${report.generated_by}` },
    [report.target.kind]: ref(ctx, report.target.kind === 'account' ? 'accounts' : 'channels', report.target.id),
  };
  const state = reportState(report, ctx.now);
  if (state === 'queued') return wire;
  wire['generation_start_date'] = formatDateTime(report.startMs);
  wire['generated_date'] = state === 'generated' ? formatDateTime(report.doneMs) : '';
  if (state === 'generated')
    wire['download'] = `${ctx.runtime.downloadBaseUrl}${ctx.runtime.redirectDownloads() ? REDIRECT_PREFIX : ''}${downloadPath(report)}`;
  if (state === 'failed') wire['failure'] = report.failure;
  return wire;
}

const REPORT_FIELDS = [
  'id',
  'url',
  'name',
  'date_from',
  'date_to',
  'generated_by',
  'account',
  'channel',
  'generation_start_date',
  'generated_date',
  'download',
  'failure',
];
export const reports: Collection<ReportRecord> = {
  versions: ['v1.1'],
  table: 'reports',
  plural: 'reports',
  singular: 'report',
  listFields: REPORT_FIELDS,
  paging: 'skip',
  defaultOutput: 'reference',
  select(ctx) {
    const account = ctx.query.get('account');
    const channel = ctx.query.get('channel');
    const matches = (target: ReportTarget, kind: ReportTarget['kind'], wanted: string | null): boolean =>
      wanted === null || (target.kind === kind && String(target.id) === wanted);
    return ctx.runtime.data.reports.filter((report) => matches(report.target, 'account', account) && matches(report.target, 'channel', channel));
  },
  wire: reportWire,
  create: {
    versions: ['v1.1'],
    run: (ctx, body) => {
      const report = createReport(ctx, body);
      return { report: { id: report.id, url: resourceUrl(ctx, 'reports', report.id) } };
    },
  },
};

function readTarget(data: SandboxData, input: Record<string, unknown>): { target: ReportTarget; name: string; fails: boolean } {
  const given = (key: string): boolean => input[key] !== undefined && input[key] !== null;
  if (given('account') === given('channel')) throw new HttpProblem(400, 'Exactly one of account or channel must be given');
  const key = given('account') ? 'account' : 'channel';
  const value = input[key];
  const id = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  if (key === 'account') {
    const account = data.byId.accounts.get(id);
    if (!account) throw new HttpProblem(400, `Unknown account '${String(value)}'`);
    return { target: { kind: 'account', id: account.id }, name: account.name, fails: false };
  }
  const channel = data.byId.channels.get(id);
  if (!channel) throw new HttpProblem(400, `Unknown channel '${String(value)}'`);
  return { target: { kind: 'channel', id: channel.id }, name: channel.name, fails: channel.reports_always_fail };
}

function readDay(input: Record<string, unknown>, key: string): number {
  const ms = parseIsoDay(input[key]);
  if (ms === undefined) throw new HttpProblem(400, `${key} is required and must be an ISO date (YYYY-MM-DD)`);
  return ms;
}

/**
 * POST reports: validates the body and queues the report. It starts generating after half of
 * reportDelayMs and reaches its final state after reportDelayMs, measured on the injected clock.
 */
export function createReport(ctx: RequestContext, body: string): ReportRecord {
  const { data, reportDelayMs } = ctx.runtime;
  const input = parseJsonObject(body);
  const { target, name, fails } = readTarget(data, input);
  const fromMs = readDay(input, 'date_from');
  const toMs = readDay(input, 'date_to');
  if (fromMs > toMs) throw new HttpProblem(400, 'date_from must not be after date_to');
  const dateType = input['date_type'];
  if (dateType !== 'created_date' && dateType !== 'updated_date') {
    throw new HttpProblem(400, 'date_type is required and must be created_date or updated_date');
  }
  const format = input['format'] ?? 'xlsx';
  if (!REPORT_FORMATS.includes(format as ReportFormat)) throw new HttpProblem(400, `format must be one of ${REPORT_FORMATS.join(', ')}`);
  const id = String(Math.max(...data.reports.map((report) => Number(report.id))) + 1);
  const report: ReportRecord = {
    id,
    name: `${name} ${formatDate(fromMs)}..${formatDate(toMs)}`,
    date_from: formatDate(fromMs),
    date_to: formatDate(toMs),
    date_type: dateType,
    format: format as ReportFormat,
    generated_by: FIXTURES.userId,
    target,
    startMs: ctx.now + Math.floor(reportDelayMs / 2),
    doneMs: ctx.now + reportDelayMs,
    outcome: fails ? 'failed' : 'generated',
    failure: fails ? FAILURE_MESSAGES[0]! : null,
    settled: false,
    download_token: downloadToken(data.seed, id),
  };
  data.reports.push(report);
  data.byId.reports.set(id, report);
  data.revision++;
  return report;
}

export const CONTENT_TYPES: Readonly<Record<ReportFormat, string>> = {
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
};

const FILE_ROWS = 2400;
const XLSX_BYTES = 160_000;
const fileCache = new WeakMap<ReportRecord, Map<ReportFormat, Buffer>>();

function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The exact bytes the download listener serves for a report: large enough (hundreds of KB) to
 * show progress, and derived only from the report record, so tests can compare byte for byte.
 * xlsx is not a real workbook: deterministic bytes behind the ZIP signature.
 */
export function reportFileContent(report: ReportRecord, format: ReportFormat): Buffer {
  let cached = fileCache.get(report);
  if (!cached) fileCache.set(report, (cached = new Map()));
  const hit = cached.get(format);
  if (hit) return hit;
  const random = new Random(hash32('report-file', report.id, report.date_from, report.date_to, report.date_type));
  let bytes: Buffer;
  if (format === 'xlsx') {
    bytes = Buffer.alloc(XLSX_BYTES);
    bytes.write('PK\x03\x04', 'latin1');
    for (let index = 4; index < XLSX_BYTES; index++) bytes[index] = random.int(0, 255);
  } else {
    const fromMs = Date.parse(`${report.date_from}T00:00:00Z`);
    const spanSeconds = (Date.parse(`${report.date_to}T00:00:00Z`) + DAY_MS - fromMs) / 1000;
    const rows = Array.from({ length: FILE_ROWS }, (_, index) => ({
      date: formatDateTime(fromMs + random.int(0, spanSeconds - 1) * 1000),
      conversation: String(500001 + random.int(0, 9999)),
      type: random.chance(0.5) ? 'inbound' : 'outbound',
      sentiment: Math.round((random.next() * 2 - 1) * 100) / 100,
      text: fillNumber(random.pick(index % 2 === 0 ? INBOUND_TEXTS : REPLY_TEXTS), random.int(2, 99_999)),
    }));
    const text =
      format === 'json'
        ? JSON.stringify({
            report: { id: report.id, name: report.name, date_from: report.date_from, date_to: report.date_to, date_type: report.date_type },
            rows,
          })
        : ['date,conversation,type,sentiment,text', ...rows.map((row) => Object.values(row).map(csvCell).join(','))].join('\r\n') + '\r\n';
    bytes = Buffer.from(text, 'utf8');
  }
  cached.set(format, bytes);
  return bytes;
}
