/**
 * Shell completion scripts generated from the command tree: subcommands, options, and the words
 * that option values and arguments can be. The scripts carry the tree as data (case tables) and
 * a small walker that finds which command the words typed so far name.
 */
import type { Command } from 'commander';
import { fishScript } from './completion-fish.js';
import { bashScript, zshScript } from './completion-sh.js';
import { allCommands, describeCommand } from './tree.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export function completionScript(shell: Shell, program: Command): string {
  const commands = allCommands(describeCommand(program));
  switch (shell) {
    case 'bash':
      return bashScript(commands);
    case 'zsh':
      return zshScript(commands);
    case 'fish':
      return fishScript(commands);
  }
}
