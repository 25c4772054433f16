/** What the completion scripts of every shell need to know about a command and its options. */
import { COLUMN_SETS } from '../cli/columns.js';
import type { CommandDoc, OptionDoc } from './tree.js';

/** What `carectl help columns` takes: the resources, and content. */
export const HELP_COLUMNS_WORDS: readonly string[] = [...COLUMN_SETS.keys()];

/** The command's words after `carectl`, as the scripts' walkers spell them ('' for carectl). */
export function pathKey(command: CommandDoc): string {
  return command.path.join(' ');
}

/**
 * What an option's value can be: one of its words (`list`: a comma-separated list of them), words
 * that `carectl __complete WHAT` prints when completing (profile names, tag names), a file name,
 * or any text.
 */
export type ValueKind =
  { kind: 'words'; words: readonly string[]; list: boolean } | { kind: 'run'; what: string; list: boolean } | { kind: 'path' } | { kind: 'text' };

export function valueKind(option: OptionDoc): ValueKind | undefined {
  if (option.valueName === undefined) return undefined;
  if (option.dynamic !== undefined) return { kind: 'run', what: option.dynamic, list: option.list };
  if (option.values) return { kind: 'words', words: option.values, list: option.list };
  return option.isPath ? { kind: 'path' } : { kind: 'text' };
}

/** A value of an option the command itself does not declare: carectl's --columns, with this command's columns. */
export interface ExtraValue {
  names: readonly string[];
  kind: ValueKind;
}

export function extraValues(command: CommandDoc): ExtraValue[] {
  return command.columns ? [{ names: ['--columns'], kind: { kind: 'words', words: command.columns, list: true } }] : [];
}

/** Every option of the command with a value, its own and the extra ones. */
export function valueOptions(command: CommandDoc): ExtraValue[] {
  const own = completedOptions(command).flatMap((option) => {
    const kind = valueKind(option);
    return kind ? [{ names: option.names, kind }] : [];
  });
  return [...own, ...extraValues(command)];
}

/**
 * The words of a positional argument: at `index` (or any index from it when `variadic`), after an
 * argument `previous` when they depend on it; `run`: read when completing, by `carectl __complete RUN`.
 */
export interface ArgumentWords {
  index: number;
  previous?: string;
  words: readonly string[];
  run?: string;
  variadic?: boolean;
}

export function argumentWords(command: CommandDoc): ArgumentWords[] {
  return command.arguments.flatMap((argument, index) => [
    ...(argument.words ? [{ index, words: argument.words }] : []),
    ...(argument.run ? [{ index, words: [], run: argument.run, variadic: argument.variadic }] : []),
    ...Object.entries(argument.after ?? {}).map(([previous, words]) => ({ index, previous, words })),
  ]);
}

/** One line of help, for the shells that show descriptions. */
export function summary(description: string): string {
  return description.split('\n')[0]!.replace(/\s+/g, ' ').trim();
}

/**
 * A command's options to complete. -h/--help of carectl itself applies below it too, so it is
 * listed once; a command the global options do not apply to lists its own.
 */
export function completedOptions(command: CommandDoc): OptionDoc[] {
  return command.path.length === 0 || command.ownOptionsOnly ? command.options : command.options.filter((option) => !option.names.includes('--help'));
}

/** Each alias of a command as [its parent's path, the alias, the command's name]: the walkers read an alias as the name. */
export function aliasesOf(commands: readonly CommandDoc[]): Array<[parent: string, alias: string, name: string]> {
  return commands.flatMap((command) =>
    command.aliases.map((alias): [string, string, string] => [command.path.slice(0, -1).join(' '), alias, command.path[command.path.length - 1] as string]),
  );
}

/**
 * The global options that choose the service and its credentials: typed on the line being
 * completed, they are passed on to `carectl __complete`, so the words offered come from the
 * service the command will talk to (the CARECTL_* variables reach it by inheritance).
 */
export const SERVICE_OPTIONS = { withValue: ['--profile', '--base-url', '--user'], flags: ['--sandbox', '--insecure-http'] } as const;

/**
 * The hidden command the scripts run for words read when completing (src/commands/completion.ts):
 * `what` is one word or two; `service` is how the shell spells the service options typed so far.
 */
export function runCommand(what: string, service: string): string {
  return `carectl ${service} __complete ${what} 2>/dev/null`;
}
