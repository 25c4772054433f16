/** Help text additions shared by every command. */
import type { Command } from 'commander';

export function addExamples(command: Command, examples: readonly string[] | undefined): void {
  if (examples?.length) command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}
