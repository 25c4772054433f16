/**
 * `reports create --reuse`: the report this profile created before with the same parameters,
 * from the ledger (config/report-ledger.ts) and checked on the service (gone or failed: none);
 * and, after a POST whose outcome is unknown, the report it may have made, looked for in the
 * target's list before the POST is sent again.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ApiClient, ApiRecord } from '../../api/client.js';
import { REPORT_STATE_FIELDS, reportState, type Version } from '../../catalogue/index.js';
import type { Context } from '../../cli/context.js';
import { ApiError, CarectlError, InterruptedError, systemReason, UsageError } from '../../core/errors.js';
import { shellWord } from '../../core/shell.js';
import { holdRunLock } from '../../cli/run-lock.js';
import { idText, isObject } from '../../core/exact-json.js';
import { openReportLedger, reportKey, type ReportLedger } from '../../config/report-ledger.js';
import { reports } from './shared.js';

/** What a report is made from, as the POST body says it. */
export interface ReportParameters {
  target: { kind: 'account' | 'channel'; id: string };
  date_from: string;
  date_to: string;
  date_type: string;
  format: string | undefined;
}

/** The ledger, and where in it this command's reports go: its profile, its base address, its parameters. */
export interface ReuseScope {
  ledger: ReportLedger;
  profile: string;
  base: string;
  key: string;
  parameters: ReportParameters;
}

export interface Obtained {
  id: string;
  record: ApiRecord;
}

/** Pages of the target's list read at most when looking for a report after an unclear POST. */
const MAX_LIST_PAGES = 20;
/** Reports of that list read one by one (newest first) to match their dates. */
const MAX_CANDIDATES = 5;

/** What tells a report's parameters (those the record has: its dates and target) and its state. */
const MATCH_QUERY: [string, string][] = [['fields', [...REPORT_STATE_FIELDS, 'date_from', 'date_to', 'account', 'channel'].join(',')]];

/** Opens the ledger for this command (a usage error with no config folder, before anything is sent). */
export async function reuseScope(ctx: Context, parameters: ReportParameters): Promise<ReuseScope> {
  const ledger = openReportLedger(ctx.io);
  const { baseUrl } = await ctx.connection();
  const { target, ...rest } = parameters;
  return { ledger, profile: ctx.settings.profileName, base: baseUrl.href, key: reportKey({ [target.kind]: target.id, ...rest }), parameters };
}

/**
 * The newest report of the ledger with these parameters that the service still has, pending or
 * generated, and still for these parameters (a service reset gives its ids to other reports);
 * where an earlier POST's outcome is unknown, the report it may have made.
 */
export async function reusableReport(ctx: Context, api: ApiClient, version: Version, scope: ReuseScope): Promise<Obtained | undefined> {
  for (const entry of scope.ledger.find(scope).slice(0, MAX_CANDIDATES)) {
    const { id } = entry;
    if (id === '') {
      const found = await reportAfterUnclearPost(ctx, api, version, scope, entry.before);
      if (found === undefined) continue;
      await remember(ctx, scope, found.id);
      return found;
    }
    const record = await api.fetchRecord(reports, version, id, MATCH_QUERY).catch((err: unknown) => {
      if (err instanceof ApiError && (err.status === 404 || err.status === 410)) return undefined;
      throw err;
    });
    if (record === undefined) continue;
    if (!sameReport(record, scope.parameters)) {
      ctx.notice(`report ${id}, noted for these parameters, is now ${described(record)} at the service (was it reset?): not reusing it (--reuse)`);
      continue;
    }
    const state = reportState(record);
    if (state === 'failed') continue;
    ctx.notice(`report ${id} (${state}) was created before with the same parameters: reusing it (--reuse)`);
    return { id, record };
  }
  return undefined;
}

/**
 * The ids of the target's list before a POST, against which a report it may have made is told
 * from older ones; undefined when the list is longer than carectl reads, or cannot be read (the
 * POST goes all the same: only should its outcome be unknown is that missed, and then said).
 */
export async function listedBefore(api: ApiClient, version: Version, parameters: ReportParameters): Promise<string[] | undefined> {
  const listed = await listedIds(api, version, parameters.target).catch((err: unknown) => {
    if (err instanceof InterruptedError) throw err;
    return undefined;
  });
  return listed?.complete ? listed.ids : undefined;
}

/**
 * After a POST that may have created the report: the newest report of the target's list with its
 * parameters that was not listed `before` it, nor is in the ledger already (those are other
 * parameters'). Without `before`, one with its parameters may be older: carectl cannot tell, and
 * says so (exit 1), noting what is listed now, so that the next --reuse run makes a new one.
 */
export async function reportAfterUnclearPost(
  ctx: Context,
  api: ApiClient,
  version: Version,
  scope: ReuseScope,
  before: readonly string[] | undefined,
): Promise<Obtained | undefined> {
  const known = new Set([...scope.ledger.known(scope), ...(before ?? [])]);
  known.delete('');
  const listed = await listedIds(api, version, scope.parameters.target);
  for (const id of listed.ids.filter((one) => !known.has(one)).slice(0, MAX_CANDIDATES)) {
    const record = await api.fetchRecord(reports, version, id, MATCH_QUERY);
    if (!sameReport(record, scope.parameters)) continue;
    if (before === undefined) {
      if (listed.complete) await remember(ctx, scope, '', listed.ids);
      throw new CarectlError(
        `report ${id} has these parameters, but carectl cannot tell whether the POST that failed made it: the report may have been created; look with ${listCommand(scope.parameters)} (the next --reuse run makes a new one)`,
      );
    }
    ctx.notice(`report ${id} (${reportState(record)}) has the parameters of the POST that failed: using it rather than sending again (--reuse)`);
    return { id, record };
  }
  return undefined;
}

/** The command that lists the target's reports. */
export function listCommand(parameters: ReportParameters): string {
  return `carectl reports list --${parameters.target.kind} ${shellWord(parameters.target.id)}`;
}

/** The ids of the target's reports, newest first (by number when they are all numbers, else last listed first); complete: the list's end was read. */
async function listedIds(api: ApiClient, version: Version, target: ReportParameters['target']): Promise<{ ids: string[]; complete: boolean }> {
  const source = api.pages(reports, version);
  const first = `${version}/${reports.path}?${new URLSearchParams({ [target.kind]: target.id, page_size: '50' }).toString()}`;
  const ids: string[] = [];
  let url: string | null = first;
  for (let page = 0; url !== null && page < MAX_LIST_PAGES; page++) {
    const read: Awaited<ReturnType<typeof source.fetch>> = await source.fetch(url, first);
    for (const record of read.records) {
      const id = idText(record.id);
      if (id !== undefined) ids.push(id);
    }
    url = read.next;
  }
  const complete = url === null;
  if (ids.every((id) => /^\d{1,30}$/.test(id))) return { ids: ids.sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : BigInt(b) < BigInt(a) ? -1 : 0)), complete };
  return { ids: ids.reverse(), complete };
}

/** Whether the record is of these parameters: its target and dates, and its date type and format where it names them. */
function sameReport(record: ApiRecord, parameters: ReportParameters): boolean {
  const target = record[parameters.target.kind];
  const named = (field: 'date_type' | 'format'): boolean =>
    record[field] === undefined || parameters[field] === undefined || record[field] === parameters[field];
  return (
    record.date_from === parameters.date_from &&
    record.date_to === parameters.date_to &&
    isObject(target) &&
    idText(target.id) === parameters.target.id &&
    named('date_type') &&
    named('format')
  );
}

/** A report record's target and dates, as a notice names them. */
function described(record: ApiRecord): string {
  const kind = ['account', 'channel'].find((one) => isObject(record[one]));
  const target = kind === undefined ? 'of no account or channel' : `${kind} ${idText((record[kind] as ApiRecord).id) ?? '(no id)'}`;
  return `${target} ${String(record.date_from)}..${String(record.date_to)}`;
}

/** Notes a report ('': a POST's unknown outcome, with the ids listed before it) in the ledger; one that cannot be written is said, not fatal. */
export async function remember(ctx: Context, scope: ReuseScope, id: string, before?: string[]): Promise<void> {
  await scope.ledger.record({ profile: scope.profile, base: scope.base, key: scope.key, id, ...(before && { before }) }).catch((err: Error) => {
    ctx.notice(`${id === '' ? 'the POST' : `report ${id}`}: cannot note it in ${scope.ledger.path} (${err.message}); a later --reuse will not find it`);
  });
}

/**
 * Without --reuse: the ledger this command's unclear POST would be noted in, so that a --reuse run
 * looks for the report before sending again. None where the folder meant to hold carectl's
 * (XDG_CONFIG_HOME, ~/.config) is not there: a run without --reuse makes no folders of its own.
 */
export async function unclearPostScope(ctx: Context, parameters: ReportParameters): Promise<ReuseScope | undefined> {
  const scope = await reuseScope(ctx, parameters).catch(() => undefined);
  return scope === undefined || !existsSync(dirname(dirname(scope.ledger.path))) ? undefined : scope;
}

/** Notes an unclear POST (and the ids listed before it) without --reuse; answers whether it was. */
export function rememberUnclearPost(scope: ReuseScope, before: string[] | undefined): Promise<boolean> {
  return scope.ledger.record({ profile: scope.profile, base: scope.base, key: scope.key, id: '', ...(before && { before }) }).then(
    () => true,
    () => false,
  );
}

/**
 * Runs `body` (look-up, POST, note) holding the ledger's --reuse lock, so that runs at once with
 * the same parameters make one report: the next one finds it noted.
 */
export async function holdingLedger<T>(ctx: Context, scope: ReuseScope, body: () => Promise<T>): Promise<T> {
  try {
    scope.ledger.makeFolder();
  } catch (err) {
    throw new UsageError(`--reuse: cannot make ${dirname(scope.ledger.path)}: ${systemReason(err as Error)}`);
  }
  const release = await holdRunLock(ctx.io, `${scope.ledger.path}.reuse`, `${scope.ledger.path}.reuse`, '--reuse');
  try {
    return await body();
  } finally {
    await release();
  }
}
