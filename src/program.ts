/**
 * The command tree: global options, then every command group, then the repeat rules over all of
 * them. It sits above every folder, so that commands, completion and the man page are given the
 * tree rather than importing it. Also carectl's own documentation, rendered from the tree:
 * scripts/gen-man.js writes the man page to man/carectl.1 and the docs test compares that file
 * with carectlManPage().
 */
import { PassThrough, Readable } from 'node:stream';
import { Option, type Command } from 'commander';
import { checkRepeats } from './cli/repeats.js';
import { realSleep, type Io } from './core/io.js';
import { FORMATS, sanitizeForTerminal } from './output/index.js';
import { VERSION } from './core/version.js';
import { RESOURCES, VERSIONS } from './catalogue/index.js';
import { makeAction, type Action } from './cli/action.js';
import { addExamples, addHelpCommand, addVersionCommand, CarectlCommand, HELP_CONFIGURATION } from './cli/help.js';
import { addReadVerbs, type OwnGroup } from './commands/resources.js';
import { conversationsGroup } from './commands/conversations/index.js';
import { reportsGroup } from './commands/reports/index.js';
import { deferVerbs, wholeTree } from './cli/deferred-verbs.js';
import { addApiCommand } from './commands/api.js';
import { addSandboxCommand } from './commands/sandbox.js';
import { addCompletionCommand } from './commands/completion.js';
import { addConfigCommands } from './commands/config/index.js';
import { renderManPage } from './docs/man.js';
import { describeCommand, type CommandDoc } from './docs/tree.js';

/** Resource groups with verbs beyond list and get, by resource name. */
const OWN_GROUPS: Readonly<Record<string, OwnGroup>> = { conversations: conversationsGroup, reports: reportsGroup };

/** commander's refusals as carectl words them elsewhere: the flag or verb first, then what it takes. */
const COMMANDER_WORDS: ReadonlyArray<[RegExp, string]> = [
  // `-o, --output <format>`: the long name.
  [/^option '(?:-\w, )?(--?[\w-]+) <[^>]+>' argument missing$/, '$1: needs a value'],
  [/^too many arguments for '([^']+)'\. Expected 0 arguments but got (\d+)\.$/, '$1: takes no arguments (got $2)'],
  [/^too many arguments for '([^']+)'\. Expected (\d+) arguments? but got (\d+)\.$/, '$1: takes at most $2 (got $3)'],
  [/^command-argument value '(.*)' is invalid for argument '([^']+)'\. Allowed choices are (.*)\.$/, '$2: "$1" is not one of $3'],
];

function inHouseWords(text: string): string {
  // One line: commander puts its "(Did you mean …?)" on a line of its own.
  const line = text
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean/, ' (did you mean')
    .trimEnd();
  for (const [pattern, words] of COMMANDER_WORDS) if (pattern.test(line)) return line.replace(pattern, words);
  return line;
}

/**
 * The tree for `io`. commander's own output (help, --version) goes through `writeOut`: the caller
 * waits for those writes, so that a write error ends the command like any other output's.
 */
export function buildProgram(io: Io, writeOut: (text: string) => void = (text) => io.stdout.stream.write(text)): Command {
  const program = new CarectlCommand('carectl')
    .description('Query and update the social customer-care platform from the terminal and from scripts.')
    .version(VERSION, '-V, --version', 'print the version')
    .usage('[global options] <resource> <verb> [arguments] [options]')
    .exitOverride()
    .configureOutput({
      writeOut,
      writeErr: (text) => io.stderr.stream.write(text),
      // One line: commander puts its "(Did you mean …?)" on a line of its own.
      // Arguments may come from data ($(…)): their control characters are shown, not acted on.
      outputError: (text, write) => write(`carectl: ${sanitizeForTerminal(inHouseWords(text))}\n`),
      // Help fits the terminal it is read on; 80 columns elsewhere.
      getOutHelpWidth: () => io.stdout.columns ?? 80,
      getErrHelpWidth: () => io.stderr.columns ?? 80,
    })
    .configureHelp(HELP_CONFIGURATION)
    .showSuggestionAfterError(true);

  program
    .addOption(new Option('-o, --output <format>', `output format: ${FORMATS.join(', ')} (default: table on a terminal, tsv otherwise)`))
    .option(
      '--columns <list>',
      'columns to show, comma-separated; dotted paths allowed (author.id, tags.name); json/ndjson keep only these keys; --columns help lists those of the command',
    )
    .option('--no-header', 'csv/tsv/table without the header row')
    .option('--no-escape-formulas', "csv: do not prefix cells starting with = + - @ with '")
    .option(
      '--placeholders <mode>',
      'null: write the microblog placeholders (created_date 1970-01-01T00:00:00, the this-info-is-unavailable link) as null, an empty cell in csv/tsv (default: as the service sent them)',
    )
    .option('--query <expr>', "JMESPath over what -o json would print (a list: its one array); prints JSON, e.g. --query '[?is_active].name'")
    .option('--limit <n>', 'stop after N records in all (across pages)')
    .option('--page-size <n>', 'records per request, 1-50 (default: 50)')
    .option('--resume <token>', 'continue a list from the token it printed (csv/tsv: without the header, for >>)')
    .option('--resume-file <file>', 'lists: on an early stop, write the --resume token to FILE; a list that completes removes FILE (also CARECTL_RESUME_FILE)')
    .option('-O, --output-file <file>', 'lists and api: write the output to FILE, renamed into place once whole (a failed run leaves FILE as it was)')
    .option(
      '--state <file>',
      'lists: incremental (conversations: by newest_sort_date); FILE records where the list ended, replaced once the output is whole, and the next run lists only records new or moved since, each once; not with --limit or --resume',
    )
    .option(
      '--watch',
      'lists: after the list, poll every --interval and print each record that appears or whose sort date moves, once; Ctrl-C ends it; not with -o json or -O',
    )
    .option('--interval <duration>', '--watch: time between polls, at least 5s (default: 30s)')
    .option('--api-version <v>', `version segment: ${VERSIONS.join(', ')}; must be one the resource exists in (default: its newest)`)
    .option('--request-timeout <duration>', 'time limit of each request (default: 30s)')
    .option('--retries <n>', 'retries of a failed idempotent request (default: 3)')
    .option('--parallel <n>', 'most requests in flight at once for lists and update batches, 1-32 (CARECTL_PARALLEL; default: adaptive, up to 8)')
    .option('--verbose', 'trace HTTP requests on stderr (credentials redacted)')
    .option('--quiet', 'no progress or notices on stderr')
    .option('--color', 'force colour on')
    .option('--no-color', 'force colour off (also NO_COLOR, CLICOLOR=0; TERM=dumb gets none)')
    .option('--insecure-http', 'allow a plain-http base address on a non-loopback host')
    .option('--base-url <url>', 'API base address, without a version segment (CARECTL_BASE_URL)')
    .option(
      '--annotations-url <url>',
      'base address of the api/1 form (annotation types, annotations) when it has a host of its own (CARECTL_ANNOTATIONS_URL; default: the base address)',
    )
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
  addResourceGroups(program, action);
  addConfigCommands(program, action);
  addApiCommand(program, action);
  addSandboxCommand(program, action);
  addCompletionCommand(program, action);
  addHelpCommand(program, action);
  addVersionCommand(program, action, VERSION);
  addAliases(program);
  // Last, so that it covers every option of every command.
  checkRepeats(program);
  return program;
}

/** One group per resource, in the catalogue's order, its verbs added when the command line reaches it. */
function addResourceGroups(program: Command, action: Action): void {
  for (const spec of RESOURCES) {
    const own = OWN_GROUPS[spec.name];
    const group = program.command(spec.name).description(own?.description ?? `read ${spec.noun}s`);
    deferVerbs(group, () => {
      if (own) own.addVerbs(group, action);
      else addReadVerbs(group, spec, action);
      group.commands.find((verb) => verb.name() === 'list')?.alias('ls');
    });
  }
}

/**
 * What kubectl and gh users type: each resource group's singular (`tag`, `report`) and the
 * catalogue's own aliases (`conv`); `ls` for every `list` comes with the verbs.
 */
function addAliases(program: Command): void {
  for (const spec of RESOURCES) {
    const group = program.commands.find((command) => command.name() === spec.name);
    const singular = spec.name.replace(/s$/, '');
    group?.aliases([...(singular === spec.name ? [] : [singular]), ...(spec.aliases ?? [])]);
  }
}

export function carectlManPage(): string {
  return renderManPage(wholeTree(buildProgram(unusedIo())), VERSION);
}

export function carectlTree(): CommandDoc {
  return describeCommand(wholeTree(buildProgram(unusedIo())));
}

/** No command runs while the tree is read; an empty environment keeps the page the same everywhere. */
function unusedIo(): Io {
  return {
    stdout: { stream: new PassThrough(), isTTY: false },
    stderr: { stream: new PassThrough(), isTTY: false },
    stdin: { stream: Readable.from([]), isTTY: false },
    env: {},
    cwd: '/',
    now: () => 0,
    sleep: realSleep,
    signal: new AbortController().signal,
  };
}
