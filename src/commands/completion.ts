/**
 * `carectl completion bash|zsh|fish`: a completion script generated from the command tree; and
 * the hidden `carectl __complete profiles` that the scripts run for the profile names of the
 * config file at the moment of completing.
 */
import { Argument, type Command } from 'commander';
import { completionScript, SHELLS, type Shell } from '../docs/completion.js';
import { writeText } from '../output/index.js';
import type { Action } from '../cli/action.js';
import type { Context } from '../cli/context.js';
import { addExamples } from '../cli/help.js';
import { wholeTree } from '../cli/deferred-verbs.js';

export function addCompletionCommand(program: Command, action: Action): void {
  const command = program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    // choices() also tells the completion scripts which words the argument can be
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS));
  // The folders may not exist yet on a fresh account.
  addExamples(command, [
    'mkdir -p ~/.local/share/bash-completion/completions',
    'carectl completion bash > ~/.local/share/bash-completion/completions/carectl',
    'mkdir -p ~/.zfunc',
    'carectl completion zsh > ~/.zfunc/_carectl',
    'mkdir -p ~/.config/fish/completions',
    'carectl completion fish > ~/.config/fish/completions/carectl.fish',
  ]);
  // The script is made when asked for, so it covers every command of the tree by then.
  command.action(
    action(
      (_raw, args) => args[0] as Shell,
      async (ctx, shell) => writeText(ctx.io.stdout.stream, completionScript(shell, wholeTree(program)), ctx.io.signal),
    ),
  );

  program
    .command('__complete <what> [resource]', { hidden: true })
    .description(
      'words for the completion scripts: profiles (of the config file), names RESOURCE and ids RESOURCE (from the service, cached), close-reasons (accepted before)',
    )
    .action(action((_raw, args) => ({ what: args[0] as string, resource: args[1] as string | undefined }), completeWords));
}

/** One word a line; nothing at all rather than an error, which a shell would print mid-line. */
async function completeWords(ctx: Context, request: { what: string; resource: string | undefined }): Promise<void> {
  const words = await wordsFor(ctx, request).catch(() => []);
  if (words.length > 0) await writeText(ctx.io.stdout.stream, `${words.join('\n')}\n`, ctx.io.signal);
}

async function wordsFor(ctx: Context, { what, resource }: { what: string; resource: string | undefined }): Promise<string[]> {
  if (what === 'profiles') {
    const { openConfig } = await import('../config/store.js');
    return Object.keys(await openConfig(ctx.io).list());
  }
  const { serviceWords } = await import('./completion-words.js');
  if (what === 'close-reasons') return serviceWords(ctx, { list: what });
  if ((what === 'names' || what === 'ids') && resource !== undefined) return serviceWords(ctx, { list: `${what} ${resource}`, resource, field: what });
  return [];
}
