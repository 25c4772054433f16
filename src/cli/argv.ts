/**
 * commander reads the global options (`-o`) anywhere on the line, before it knows which options
 * the subcommand has; so the value of `--sort -oldest_sort_date` was read as `-o ldest_sort_date`.
 * Joining each value-taking option with a dash-led value (`--sort=-oldest_sort_date`) before
 * parsing keeps the value with its option, whichever command defines it. A group reached on the
 * way gets its deferred verbs (src/cli/deferred-verbs.ts), so that their options are known here
 * and to commander after.
 */
import type { Command, Option } from 'commander';
import { withVerbs } from './deferred-verbs.js';

function findOption(command: Command, flag: string): Option | undefined {
  for (let current: Command | null = command; current; current = current.parent) {
    const option = current.options.find((candidate) => candidate.long === flag || candidate.short === flag);
    if (option) return option;
  }
  return undefined;
}

export function keepDashValuesWithOptions(program: Command, argv: string[]): string[] {
  const result: string[] = [];
  let command = program;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      result.push(...argv.slice(i));
      break;
    }
    const subcommand = arg.startsWith('-') ? undefined : command.commands.find((candidate) => candidate.name() === arg || candidate.aliases().includes(arg));
    if (subcommand) {
      command = withVerbs(subcommand);
      result.push(arg);
      continue;
    }
    const option = arg.startsWith('-') ? findOption(command, arg) : undefined;
    const value = argv[i + 1];
    if (option?.required && value !== undefined) {
      i++;
      const dashLed = value.length > 1 && value.startsWith('-');
      // --long=value, or for a short-only option the attached form -xvalue.
      const joined = option.long ? `${option.long}=${value}` : `${arg}${value}`;
      result.push(...(dashLed ? [joined] : [arg, value]));
      continue;
    }
    result.push(arg);
  }
  return result;
}
