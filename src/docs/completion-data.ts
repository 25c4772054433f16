/** What the completion scripts of every shell need to know about a command and its options. */
import type { CommandDoc, OptionDoc } from './tree.js';

/** The command's words after `carectl`, as the scripts' walkers spell them ('' for carectl). */
export function pathKey(command: CommandDoc): string {
  return command.path.join(' ');
}

/** What an option's value can be: its words, a file name, or any text. */
export type ValueKind = { kind: 'words'; words: readonly string[] } | { kind: 'path' } | { kind: 'text' };

export function valueKind(option: OptionDoc): ValueKind | undefined {
  if (option.valueName === undefined) return undefined;
  if (option.values) return { kind: 'words', words: option.values };
  return option.isPath ? { kind: 'path' } : { kind: 'text' };
}

/** The words of the first positional argument that has a fixed set. */
export function argumentWords(command: CommandDoc): readonly string[] {
  return command.arguments.find((argument) => argument.values)?.values ?? [];
}

/** One line of help, for the shells that show descriptions. */
export function summary(description: string): string {
  return description.split('\n')[0]!.replace(/\s+/g, ' ').trim();
}

/** A command's options to complete. -h/--help of carectl itself applies below it too, so it is listed once. */
export function completedOptions(command: CommandDoc): OptionDoc[] {
  return command.path.length === 0 ? command.options : command.options.filter((option) => !option.names.includes('--help'));
}
