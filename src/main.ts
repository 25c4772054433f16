/**
 * The command tree and the one place where failures become exit codes and stderr lines.
 */
import { Command, CommanderError, Option } from 'commander';
import { keepDashValuesWithOptions } from './argv.js';
import { checkRepeats } from './repeats.js';
import { CarectlError, ExitCode, isBrokenPipe } from './errors.js';
import type { Io } from './io.js';
import { FORMATS, sanitizeForTerminal } from './output/index.js';
import { VERSION } from './version.js';
import { VERSIONS } from './resources.js';
import { makeAction } from './commands/action.js';
import { addExamples, addResourceCommands } from './commands/resource.js';
import { addConversationCommands } from './commands/conversations.js';
import { addUpdateCommand } from './commands/update.js';
import { addReportCommands } from './commands/reports.js';
import { addApiCommand } from './commands/api.js';
import { addSandboxCommand } from './commands/sandbox.js';
import { addCompletionCommand } from './commands/completion.js';
import { addConfigCommands } from './config/commands.js';

export function buildProgram(io: Io): Command {
  const program = new Command('carectl')
    .description('Query and update the social customer-care platform from the terminal and from scripts.')
    .version(VERSION, '-V, --version', 'print the version')
    .usage('[global options] <resource> <verb> [arguments] [options]')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.stream.write(text),
      writeErr: (text) => io.stderr.stream.write(text),
      // One line: commander puts its "(Did you mean …?)" on a line of its own.
      // Arguments may come from data ($(…)): their control characters are shown, not acted on.
      outputError: (text, write) => write(`carectl: ${sanitizeForTerminal(text.replace(/^error: /, '').replace(/\n\(Did you mean/, ' (did you mean').trimEnd())}\n`),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showSuggestionAfterError(true);

  program
    .addOption(new Option('-o, --output <format>', `output format: ${FORMATS.join(', ')} (default: table on a terminal, tsv otherwise)`))
    .option('--columns <list>', 'columns for table/csv/tsv, comma-separated; dotted paths allowed (author.id, tags.name)')
    .option('--no-header', 'csv/tsv/table without the header row')
    .option('--no-escape-formulas', "csv: do not prefix cells starting with = + - @ with '")
    .option('--limit <n>', 'stop after N records in all (across pages)')
    .option('--page-size <n>', 'records per request, 1-50 (default: 50)')
    .option('--resume <token>', 'continue a list from the token it printed (csv/tsv: without the header, for >>)')
    .option('--api-version <v>', `version segment: ${VERSIONS.join(', ')}; must be one the resource exists in (default: its newest)`)
    .option('--request-timeout <duration>', 'time limit of each request (default: 30s)')
    .option('--retries <n>', 'retries of a failed idempotent request (default: 3)')
    .option('--verbose', 'trace HTTP requests on stderr (credentials redacted)')
    .option('--quiet', 'no progress or notices on stderr')
    .option('--color', 'force colour on')
    .option('--no-color', 'force colour off (also NO_COLOR)')
    .option('--insecure-http', 'allow a plain-http base address on a non-loopback host')
    .option('--base-url <url>', 'API base address, without a version segment (CARECTL_BASE_URL)')
    .option('--user <name>', 'user name or API key (CARECTL_USER)')
    .option('--profile <name>', 'configuration profile (CARECTL_PROFILE; default: default)')
    .option('--sandbox', 'start the embedded sandbox on a free loopback port and use it');
  // --color and --no-color share one attribute: undefined unless given.
  program.setOptionValueWithSource('color', undefined, 'default');

  addExamples(program, [
    'carectl --sandbox conversations list --status unread',
    'carectl conversations get 500002 --include content -o json',
    'carectl conversations list --priority --newest 7d..today -o csv > urgent.csv',
    'carectl reports create --account 1001 --from yesterday --to yesterday --download nightly.xlsx',
  ]);

  const action = makeAction(io);
  addResourceCommands(program, action);
  addConversationCommands(program, action);
  addUpdateCommand(program, action);
  addReportCommands(program, action);
  addConfigCommands(program, action);
  addApiCommand(program, action);
  addSandboxCommand(program, action);
  addCompletionCommand(program, action);
  // Last, so that it covers every option of every command.
  checkRepeats(program);
  return program;
}

export async function run(argv: string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(keepDashValuesWithOptions(program, argv), { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    return reportFailure(io, err, argv.includes('--verbose'));
  }
}

/** Exit code for a failure, with one line on stderr (nothing at all for a closed pipe). */
export function reportFailure(io: Io, err: unknown, verbose: boolean): number {
  if (err instanceof CommanderError) {
    // help and --version arrive here too; commander already printed its message
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  if (isBrokenPipe(err)) return ExitCode.ok;
  if (err instanceof CarectlError) {
    io.stderr.stream.write(`carectl: ${sanitizeForTerminal(err.message)}\n`);
    return err.exitCode;
  }
  const detail = verbose && err instanceof Error && err.stack ? err.stack : String((err as Error)?.message ?? err);
  io.stderr.stream.write(`carectl: unexpected error: ${sanitizeForTerminal(detail)}\n`);
  return ExitCode.failure;
}
