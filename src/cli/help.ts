/**
 * carectl's help, laid out by commander's Help with a formatHelp of its own: a command's
 * subcommands first, its own options, one line about the global options (all of them in the root
 * help's summary and in `carectl help options`), and examples, all wrapped to the terminal's width.
 * `carectl` and `carectl GROUP` print the help on stdout and succeed: asking for the list of
 * commands is not a mistake.
 */
import { Command, Help, type ErrorOptions, type HelpContext, type Option } from 'commander';
import { UsageError } from '../core/errors.js';
import { writeText } from '../output/index.js';
import { hangingLines, wrapText } from '../output/text-width.js';
import { TOPICS, topicText, type Topic } from './topics.js';
import { COLUMN_SETS, columnsHelp, type ColumnSet } from './columns.js';
import type { Action } from './action.js';
import { withVerbs } from './deferred-verbs.js';

/** Commander wraps a description only when at least this much room is left beside its term. */
const MIN_WIDTH_TO_WRAP = 24;
const INDENT = '  ';
/** Lines of a usage after the first start under its command: `Usage: `. */
const USAGE_INDENT = ' '.repeat('Usage: '.length);

export class CarectlCommand extends Command {
  override createCommand(name?: string): Command {
    // One help command, carectl's own (`carectl help conversations list`): none per group.
    return new CarectlCommand(name).helpCommand(false);
  }

  /** Commander shows a group's help on stderr, as a failure, when no verb is given: carectl on stdout. */
  override help(context?: HelpContext): never;
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    return typeof context === 'function' ? super.help(context) : super.help({ ...context, error: false });
  }

  /**
   * `--columns help` asks for help, which needs no argument (`tags get --columns help`): commander's
   * "missing required argument" is let pass (the one error that returns), and the action prints the
   * columns, or refuses --columns where the command does not take it, before reading any argument.
   */
  override error(message: string, options?: ErrorOptions): never {
    if (options?.code !== 'commander.missingArgument') return super.error(message, options);
    if ((this.optsWithGlobals() as { columns?: string }).columns?.trim() === 'help') return undefined as never;
    // Ids have one form everywhere (src/cli/ids.ts): a script that piped none learns the other.
    return super.error(message.endsWith("argument 'ids'") ? `${message}: give ids, or - to read them from standard input` : message, options);
  }
}

const EXAMPLES = new WeakMap<Command, readonly string[]>();

/** Command lines shown under "Examples:" in the command's help (and in the man page). */
export function addExamples(command: Command, examples: readonly string[] | undefined): void {
  if (examples?.length) EXAMPLES.set(command, [...examplesOf(command), ...examples]);
}

export function examplesOf(command: Command): readonly string[] {
  return EXAMPLES.get(command) ?? [];
}

/** The help settings for commander's configureHelp. */
export const HELP_CONFIGURATION: Partial<Help> = {
  sortSubcommands: false,
  showGlobalOptions: false,
  minWidthToWrap: MIN_WIDTH_TO_WRAP,
  formatHelp: (command, helper) => formatHelp(command, helper),
  // Every alias in the description (commander's term shows only the first, and widens the column).
  subcommandTerm(this: Help, command: Command): string {
    return Help.prototype.subcommandTerm.call(this, command).replace(/^([^ |]+)\|[^ ]+/, '$1');
  },
  commandUsage(this: Help, command: Command): string {
    let usage = Help.prototype.commandUsage.call(this, command);
    for (let at: Command | null = command; at; at = at.parent) {
      const [alias] = at.aliases();
      if (alias !== undefined) usage = usage.replace(`${at.name()}|${alias}`, at.name());
    }
    return usage;
  },
  subcommandDescription(this: Help, command: Command): string {
    const description = Help.prototype.subcommandDescription.call(this, command);
    return command.aliases().length === 0 ? description : `${description} (also ${command.aliases().join(', ')})`;
  },
};

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

/** -h/--help and -V/--version: options of the help, not settings of a command. */
function isHelpOrVersion(option: Option): boolean {
  return option.long === '--help' || option.long === '--version';
}

function section(heading: string, lines: readonly string[]): string[] {
  return lines.length === 0 ? [] : [heading, ...lines, ''];
}

/** `-o <format>`, `--columns <list>`: how an option is typed, shortest form first. */
function optionWord(option: Option): string {
  const value = /[<[][^>\]]+[>\]]/.exec(option.flags)?.[0];
  return [option.short ?? option.long, value].filter(Boolean).join(' ');
}

/**
 * `  term  description`, the description wrapped at word boundaries in its own column; where that
 * column would be narrower than MIN_WIDTH_TO_WRAP, the description goes under the term instead.
 */
function formatItem(term: string, termWidth: number, description: string, width: number): string {
  if (description === '') return INDENT + term;
  const column = INDENT.length + termWidth + 2;
  if (width - column >= MIN_WIDTH_TO_WRAP) return hangingLines(`${INDENT}${term.padEnd(termWidth)}  `, description, width, column).join('\n');
  return [INDENT + term, ...paragraph(description, width, INDENT.repeat(3))].join('\n');
}

/** Text wrapped to the help's width, each line indented. */
function paragraph(text: string, width: number, indent = ''): string[] {
  return wrapText(text, width - indent.length).map((line) => indent + line);
}

/**
 * A shell line in lines of at most `width` columns: a line too long goes on under a backslash, so
 * it can still be copied into a shell as it is. Words in quotes stay whole.
 */
export function continuedLines(text: string, width: number, first: string, next: string): string[] {
  const words = text.match(/(?:[^\s'"]+|'[^']*'|"(?:\\.|[^"\\])*")+/g) ?? [text];
  const lines: string[] = [];
  let line = first;
  for (const word of words) {
    const empty = line === first || line === next;
    // room for ' \' at the end of a line that goes on
    if (!empty && line.length + 1 + word.length + 2 > width) {
      lines.push(`${line} \\`);
      line = next + word;
    } else {
      line += (empty ? '' : ' ') + word;
    }
  }
  return [...lines, line];
}

/** An example command line in the help, `  $ carectl …`, continued under a backslash where too long. */
export function exampleLines(example: string, width: number): string[] {
  return continuedLines(example, width, `${INDENT}$ `, `${INDENT}    `);
}

function formatHelp(command: Command, helper: Help): string {
  const width = helper.helpWidth ?? 80;
  const root = rootOf(command);
  const isRoot = command === root;
  const own = helper.visibleOptions(command).filter((option) => !isRoot || isHelpOrVersion(option));
  const termWidth = Math.max(
    helper.longestSubcommandTermLength(command, helper),
    helper.longestArgumentTermLength(command, helper),
    ...own.map((option) => helper.optionTerm(option).length),
  );
  const item = (term: string, description: string): string => formatItem(term, termWidth, description, width);
  const usage = wrapText(`Usage: ${helper.commandUsage(command)}`, width - USAGE_INDENT.length, { firstWidth: width }).map((line, index) =>
    index === 0 ? line : USAGE_INDENT + line,
  );
  const description = helper.commandDescription(command);
  const examples = examplesOf(command);
  return [
    ...usage,
    '',
    ...(description ? [...paragraph(description, width), ''] : []),
    ...section(
      'Commands:',
      helper.visibleCommands(command).map((sub) => item(helper.subcommandTerm(sub), helper.subcommandDescription(sub))),
    ),
    ...section(
      'Arguments:',
      helper.visibleArguments(command).map((argument) => item(helper.argumentTerm(argument), helper.argumentDescription(argument))),
    ),
    ...section(
      'Options:',
      own.map((option) => item(helper.optionTerm(option), helper.optionDescription(option))),
    ),
    ...globalOptionsNote(root, isRoot, helper, width),
    ...section(
      'Examples:',
      examples.flatMap((example) => exampleLines(example, width)),
    ),
  ].join('\n');
}

/** Root: every global option by name, once. Elsewhere: one line saying where they are. */
function globalOptionsNote(root: Command, isRoot: boolean, helper: Help, width: number): string[] {
  const globals = helper.visibleOptions(root).filter((option) => !isHelpOrVersion(option));
  if (globals.length === 0) return [];
  if (!isRoot) {
    const some = globals.slice(0, 3).map(optionWord).join(', ');
    return [...paragraph(`Global options (${some}, …) apply here too: carectl help options lists them.`, width), ''];
  }
  // An option and its value stay on one line.
  const words = globals.map((option) => optionWord(option).replaceAll(' ', '\u00a0')).join(', ');
  return [
    ...paragraph('Global options (carectl help options describes each):', width),
    ...paragraph(words, width, INDENT).map((line) => line.replaceAll('\u00a0', ' ')),
    '',
  ];
}

/** `carectl help options`: every global option with its description. */
function globalOptionsHelp(root: Command): string {
  const helper = root.createHelp();
  helper.prepareContext({ helpWidth: helpWidth(root) });
  const width = helper.helpWidth ?? 80;
  const options = helper.visibleOptions(root);
  const termWidth = Math.max(...options.map((option) => helper.optionTerm(option).length));
  return [
    ...paragraph('Global options: they apply to every command, given before or after its words (carectl -o json tags list, carectl tags list -o json).', width),
    '',
    ...options.map((option) => formatItem(helper.optionTerm(option), termWidth, helper.optionDescription(option), width)),
    '',
  ].join('\n');
}

/** The commands that `words` name from the root, or a usage error naming the first unknown one. */
function commandAt(root: Command, words: readonly string[]): Command {
  let command = root;
  for (const [index, word] of words.entries()) {
    const next = command.commands.find((sub) => sub.name() === word || sub.aliases().includes(word));
    if (!next) throw new UsageError(`help: no command "${['carectl', ...words.slice(0, index + 1)].join(' ')}"; carectl help lists the commands`);
    command = withVerbs(next);
  }
  return command;
}

/** The width help is wrapped to: the terminal's, else 80. */
function helpWidth(root: Command): number {
  return root.configureOutput().getOutHelpWidth?.() ?? 80;
}

/** The set `help columns RESOURCE` names: a resource group by its name or an alias (as its commands are), or `content`. */
function columnSetNamed(program: Command, words: readonly string[]): ColumnSet {
  const accepted = `accepted: ${[...COLUMN_SETS.keys()].join(', ')}`;
  if (words.length !== 1) throw new UsageError(`help columns: name one resource; ${accepted}`);
  const [word = ''] = words;
  const group = program.commands.find((command) => command.name() === word || command.aliases().includes(word));
  const set = COLUMN_SETS.get(group?.name() ?? word);
  if (!set) throw new UsageError(`help columns: no resource "${word}"; ${accepted}`);
  return set;
}

/** `carectl help [COMMAND…]`, `carectl help options` and the topics of the man page's sections. */
export function addHelpCommand(program: Command, action: Action): void {
  const help = program
    .command('help [command...]')
    .description(
      `show the help of carectl or of a command (help conversations list), or a topic: options (every global option), ${TOPICS.join(', ')}, columns RESOURCE (what --columns takes)`,
    );
  addExamples(help, ['carectl help conversations list', 'carectl help options', 'carectl help dates', 'carectl help columns content']);
  help.action(
    action(
      (_raw, args) => (args[0] as string[] | undefined) ?? [],
      async (ctx, words) => {
        const [word] = words;
        if (words.length === 1 && word === 'options') return writeText(ctx.io.stdout.stream, globalOptionsHelp(program), ctx.io.signal);
        if (words.length === 1 && (TOPICS as readonly string[]).includes(word!)) {
          return writeText(ctx.io.stdout.stream, topicText(word as Topic, helpWidth(program)), ctx.io.signal);
        }
        if (word === 'columns') return writeText(ctx.io.stdout.stream, columnsHelp(columnSetNamed(program, words.slice(1)), helpWidth(program)), ctx.io.signal);
        commandAt(program, words).outputHelp();
      },
    ),
  );
}

/** `carectl version`: the version, as --version prints it. */
export function addVersionCommand(program: Command, action: Action, version: string): void {
  const command = program.command('version').description('print the version (as --version)');
  addExamples(command, ['carectl version', 'carectl --version']);
  command.action(
    action(
      () => undefined,
      async (ctx) => writeText(ctx.io.stdout.stream, `${version}\n`, ctx.io.signal),
    ),
  );
}
