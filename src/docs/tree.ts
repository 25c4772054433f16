/**
 * The commander tree as plain data for the man page and the completion scripts, read at run time
 * so that every command, option and example added to the tree shows up in both.
 */
import type { Argument, Command, Option } from 'commander';
import { examplesOf } from '../cli/help.js';
import { argumentValues as valuesOfArguments, dynamicValues, optionValues, OWN_OPTIONS_ONLY, type ArgumentValues } from './values.js';
import { columnsOf } from '../cli/columns.js';
import { TOPICS } from '../cli/topics.js';

export interface OptionDoc {
  /** As declared: '-o, --output <format>'. */
  flags: string;
  /** '-o', '--output', and so on. */
  names: string[];
  /** The value's name when the option takes one ('format'). */
  valueName?: string;
  /** The help text, with commander's additions (defaults, choices). */
  description: string;
  /** The words the value can be, when it is one of a known set. */
  values?: readonly string[];
  /** The value is a comma-separated LIST: each item is one of the words. */
  list: boolean;
  /** Words read when completing: the arguments of `carectl __complete` that prints them ('profiles', 'names tags'). */
  dynamic?: string;
  /** The value names a file or folder, so shells complete file names. */
  isPath: boolean;
}

export interface ArgumentDoc extends ArgumentValues {
  name: string;
  /** It takes any number of words (`<ids...>`). */
  variadic: boolean;
}

export interface CommandDoc {
  /** Words after `carectl`; empty for carectl itself. */
  path: readonly string[];
  /** 'carectl conversations list [options]'. */
  usage: string;
  description: string;
  arguments: ArgumentDoc[];
  /** The command's own options, its help option included; a parent's options apply to it too. */
  options: OptionDoc[];
  commands: CommandDoc[];
  /** The command lines of its help's Examples: section. */
  examples: string[];
  /** The columns the global --columns can name here, for the commands that print records. */
  columns?: readonly string[];
  /** Other names the command answers to (`conv`, `ls`). */
  aliases: readonly string[];
  /** A command none of carectl's global options apply to (sandbox): completion offers its own only. */
  ownOptionsOnly?: boolean;
}

/** Option values named like these are file paths. */
const PATH_VALUE_NAMES = new Set(['path', 'file', 'folder', 'dir']);

export function describeCommand(command: Command, path: readonly string[] = []): CommandDoc {
  const help = command.createHelp();
  const columns = columnsOf(command);
  return {
    path,
    usage: help.commandUsage(command),
    description: help.commandDescription(command),
    aliases: command.aliases(),
    arguments: command.registeredArguments.map((argument, index) => describeArgument(argument, argumentValues(command, path)?.[index])),
    options: help.visibleOptions(command).map((option) => describeOption(path, option, help.optionDescription(option))),
    // hidden commands (what the completion scripts run) are not documented
    commands: help.visibleCommands(command).map((sub) => describeCommand(sub, [...path, sub.name()])),
    examples: [...examplesOf(command)],
    ...(columns && { columns: columns.offered?.() ?? columns.columns }),
    ...(OWN_OPTIONS_ONLY.includes(path.join(' ')) && { ownOptionsOnly: true }),
  };
}

/** Every command of the tree, parents before their subcommands. */
export function allCommands(root: CommandDoc): CommandDoc[] {
  return [root, ...root.commands.flatMap(allCommands)];
}

export function isLeaf(command: CommandDoc): boolean {
  return command.commands.length === 0;
}

function describeOption(path: readonly string[], option: Option, description: string): OptionDoc {
  const valueName = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1]?.replace(/\.\.\.$/, '');
  const values = optionValues(path, option);
  const dynamic = option.long === undefined ? undefined : dynamicValues(path, option.long);
  return {
    flags: option.flags,
    names: [option.short, option.long].filter((name): name is string => name !== undefined),
    ...(valueName !== undefined && { valueName }),
    description,
    ...(values && { values }),
    list: valueName === 'list',
    ...(dynamic && { dynamic }),
    isPath: valueName !== undefined && PATH_VALUE_NAMES.has(valueName.toLowerCase()),
  };
}

/** `carectl help`'s words are the commands beside it and the topics; other commands' come from ARGUMENT_VALUES. */
function argumentValues(command: Command, path: readonly string[]): readonly ArgumentValues[] | undefined {
  if (path.join(' ') !== 'help' || !command.parent) return valuesOfArguments(path);
  const commands = command.parent
    .createHelp()
    .visibleCommands(command.parent)
    .map((sub) => sub.name())
    .filter((name) => name !== 'help');
  return [{ words: [...commands, 'options', ...TOPICS, 'columns'] }];
}

function describeArgument(argument: Argument, values: ArgumentValues | undefined): ArgumentDoc {
  const words = argument.argChoices ?? values?.words;
  return {
    name: argument.name(),
    variadic: argument.variadic,
    ...(words && { words }),
    ...(values?.after && { after: values.after }),
    ...(values?.run && { run: values.run }),
  };
}
