/** `carectl completion bash|zsh|fish`: a completion script generated from the command tree. */
import { Argument, type Command } from 'commander';
import { completionScript, SHELLS, type Shell } from '../docs/completion.js';
import { writeText } from '../output/index.js';
import type { Action } from '../cli/action.js';
import { addExamples } from '../cli/help.js';

export function addCompletionCommand(program: Command, action: Action): void {
  const command = program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    // choices() also tells the completion scripts which words the argument can be
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS));
  addExamples(command, [
    'carectl completion bash > ~/.local/share/bash-completion/completions/carectl',
    'carectl completion zsh > ~/.zfunc/_carectl',
    'carectl completion fish > ~/.config/fish/completions/carectl.fish',
  ]);
  // The script is made when asked for, so it covers every command of the tree by then.
  command.action(action((_raw, args) => args[0] as Shell, async (ctx, shell) => writeText(ctx.io.stdout.stream, completionScript(shell, program))));
}
