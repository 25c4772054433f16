/**
 * `reports create --reuse`: the report this profile created before with the same parameters,
 * from the ledger (config/report-ledger.ts) and checked on the service (gone or failed: none);
 * and, after a POST whose outcome is unknown, the report it may have made, looked for in the
 * target's list before the POST is sent again.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ApiClient, ApiRecord } from '../../api/client.js';
import { REPORT_STATE_FIELDS, reportState, type Version } from '../../api/catalogue/index.js';
import type { Context } from '../../cli/context.js';
import { ApiError } from '../../core/errors.js';
import { idText, isObject } from '../../core/exact-json.js';
import { openReportLedger, reportKey, type ReportLedger } from '../../config/report-ledger.js';
import { fetchReport, reports } from './shared.js';

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
 * generated; where an earlier POST's outcome is unknown, the report it may have made.
 */
export async function reusableReport(ctx: Context, api: ApiClient, version: Version, scope: ReuseScope): Promise<Obtained | undefined> {
  for (const id of scope.ledger.find(scope).slice(0, MAX_CANDIDATES)) {
    if (id === '') {
      const found = await reportAfterUnclearPost(ctx, api, version, scope);
      if (found === undefined) continue;
      await remember(ctx, scope, found.id);
      return found;
    }
    const record = await fetchReport(api, version, id).catch((err: unknown) => {
      if (err instanceof ApiError && (err.status === 404 || err.status === 410)) return undefined;
      throw err;
    });
    if (record === undefined) continue;
    const state = reportState(record);
    if (state === 'failed') continue;
    ctx.notice(`report ${id} (${state}) was created before with the same parameters: reusing it (--reuse)`);
    return { id, record };
  }
  return undefined;
}

/**
 * After a POST that may have created the report: the newest report of the target's list that
 * carries its dates and that the ledger does not hold already (those are other parameters').
 */
export async function reportAfterUnclearPost(ctx: Context, api: ApiClient, version: Version, scope: ReuseScope): Promise<Obtained | undefined> {
  const known = scope.ledger.known(scope);
  known.delete('');
  const ids = (await listedIds(api, version, scope.parameters.target)).filter((id) => !known.has(id));
  for (const id of ids.slice(0, MAX_CANDIDATES)) {
    const record = await api.fetchRecord(reports, version, id, MATCH_QUERY);
    if (!sameReport(record, scope.parameters)) continue;
    ctx.notice(`report ${id} (${reportState(record)}) has the parameters of the POST that failed: using it rather than sending again (--reuse)`);
    return { id, record };
  }
  return undefined;
}

/** The ids of the target's reports, newest first (by number when they are all numbers, else last listed first). */
async function listedIds(api: ApiClient, version: Version, target: ReportParameters['target']): Promise<string[]> {
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
  if (ids.every((id) => /^\d{1,30}$/.test(id))) return ids.sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : BigInt(b) < BigInt(a) ? -1 : 0));
  return ids.reverse();
}

function sameReport(record: ApiRecord, parameters: ReportParameters): boolean {
  const target = record[parameters.target.kind];
  return record.date_from === parameters.date_from && record.date_to === parameters.date_to && isObject(target) && idText(target.id) === parameters.target.id;
}

/** Notes a report ('': a POST's unknown outcome) in the ledger; one that cannot be written is said, not fatal. */
export async function remember(ctx: Context, scope: ReuseScope, id: string): Promise<void> {
  await scope.ledger.record({ profile: scope.profile, base: scope.base, key: scope.key, id }).catch((err: Error) => {
    ctx.notice(`${id === '' ? 'the POST' : `report ${id}`}: cannot note it in ${scope.ledger.path} (${err.message}); a later --reuse will not find it`);
  });
}

/**
 * Without --reuse: a POST whose outcome is unknown is noted all the same, so that a --reuse run
 * looks for the report before sending again; answers whether it was. Quietly not where the
 * folder meant to hold carectl's (XDG_CONFIG_HOME, ~/.config) is not there: a run without --reuse
 * makes no folders of its own.
 */
export async function rememberUnclearPost(ctx: Context, parameters: ReportParameters): Promise<boolean> {
  const scope = await reuseScope(ctx, parameters).catch(() => undefined);
  if (scope === undefined || !existsSync(dirname(dirname(scope.ledger.path)))) return false;
  return scope.ledger.record({ profile: scope.profile, base: scope.base, key: scope.key, id: '' }).then(
    () => true,
    () => false,
  );
}
