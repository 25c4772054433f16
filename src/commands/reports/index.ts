/**
 * The reports group: list and get from the catalogue; create, wait and download, from the
 * request to the file on disk in one command, with every way of stopping part-way (failure,
 * timeout, Ctrl-C) naming the report and the command that picks it up again.
 */
import type { Command } from 'commander';
import { DATE_TYPES, REPORT_FORMATS } from '../../catalogue/index.js';
import type { Action, RawOptions } from '../../cli/action.js';
import { addExamples } from '../../cli/help.js';
import { addGetVerb, addListVerb, type OwnGroup } from '../resources.js';
import { createReport, type CreateOptions } from './create.js';
import type { DownloadOptions } from './download.js';
import { downloadReport } from './download.js';
import { DEFAULT_TIMEOUT, reports } from './shared.js';
import { waitCommand, type WaitOptions } from './wait.js';

const readCreateOptions = (raw: RawOptions): CreateOptions => ({
  account: raw.account as string | undefined,
  channel: raw.channel as string | undefined,
  from: raw.from as string | undefined,
  to: raw.to as string | undefined,
  dateType: raw.dateType as string | undefined,
  format: raw.format as string | undefined,
  wait: raw.wait === true,
  download: raw.download as string | undefined,
  timeout: raw.timeout as string | undefined,
  unzip: raw.unzip === true,
  reuse: raw.reuse === true,
});

const UNZIP_HELP = 'the file is a ZIP archive of one file: save that file instead (refuses several members, paths, more than 4 GiB)';

export const reportsGroup: OwnGroup = { description: 'read, create, wait for and download reports', addVerbs: addReportsVerbs };

function addReportsVerbs(group: Command, action: Action): void {
  addListVerb(group, reports, action);
  addGetVerb(group, reports, action);

  const create = group
    .command('create')
    .description('request a report; prints its id, or waits for it and downloads it')
    .option('--account <id>', 'report on this account (or --channel)')
    .option('--channel <id>', 'report on this channel (or --account)')
    .option('--from <date>', 'first day of the range, included (YYYY-MM-DD, today, yesterday, Nd, Nw; UTC)')
    .option('--to <date>', 'last day of the range, included')
    .option('--date-type <type>', `which date of the content is matched: ${DATE_TYPES.join(' or ')} (default: created_date)`)
    .option('--format <format>', `file format: ${REPORT_FORMATS.join(', ')} (default: --download's extension, else the service's)`)
    .option('--wait', 'wait until the report is generated (exit 5 if it fails)')
    .option('--download <path>', 'wait, then save the file to PATH (a folder: report-ID.EXT in it; - : stdout)')
    .option('--timeout <duration>', `how long to wait (default: ${DEFAULT_TIMEOUT}; exit 6 when it runs out)`)
    .option('--unzip', UNZIP_HELP)
    .option(
      '--reuse',
      'pick up the report this profile created with the same account/channel, dates, date type and format (pending or generated) instead of making another; noted in reports.json beside the config file',
    );
  addExamples(create, [
    'carectl reports create --account 1001 --from 7d --to yesterday',
    'carectl reports create --channel 202 --from 2026-06-01 --to 2026-06-30 --format csv --download june.csv',
    'carectl --quiet reports create --account 1001 --from yesterday --to yesterday --format json --download - | jq .rows',
    'carectl --quiet reports create --account 1001 --from yesterday --to yesterday --format csv --download nightly.csv --reuse',
  ]);
  create.action(action(readCreateOptions, createReport, ['query']));

  const wait = group
    .command('wait <id>')
    .description('wait until a report is generated (exit 5 if it fails, 6 on timeout)')
    .option('--download <path>', 'then save the file to PATH (a folder: report-ID.EXT in it; - : stdout)')
    .option('--timeout <duration>', `how long to wait (default: ${DEFAULT_TIMEOUT})`)
    .option('--unzip', UNZIP_HELP);
  addExamples(wait, ['carectl reports wait 60003', 'carectl reports wait 60003 --timeout 10m --download reports/']);
  wait.action(
    action(
      (raw, args): WaitOptions => ({
        id: args[0] as string,
        download: raw.download as string | undefined,
        timeout: raw.timeout as string | undefined,
        unzip: raw.unzip === true,
      }),
      waitCommand,
      ['query'],
    ),
  );

  const downloadCommand = group
    .command('download <id>')
    .description("save a generated report's file")
    .option('--file <path>', 'where to save it (default: report-ID.EXT in the current folder; a folder: report-ID.EXT in it; - : stdout)')
    .option('--unzip', UNZIP_HELP);
  addExamples(downloadCommand, ['carectl reports download 60001', 'carectl reports download 60001 --file - | head -5']);
  downloadCommand.action(
    action((raw, args): DownloadOptions => ({ id: args[0] as string, file: raw.file as string | undefined, unzip: raw.unzip === true }), downloadReport),
  );
}
