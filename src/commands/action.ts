/**
 * Wraps a command's implementation for commander: builds its Context from the global and local
 * options, runs it, and always releases what it opened (connections, the in-process sandbox).
 */
import type { Command } from 'commander';
import { Context, type GlobalOptions } from '../context.js';
import type { Io } from '../io.js';

export type Options = Record<string, unknown>;
export type CommandBody = (ctx: Context, opts: Options, args: unknown[]) => Promise<void>;
export type Action = (body: CommandBody) => (...commanderArgs: unknown[]) => Promise<void>;

export function makeAction(io: Io): Action {
  return (body) =>
    async (...commanderArgs) => {
      // commander passes the positional arguments, then the options, then the command itself
      const command = commanderArgs[commanderArgs.length - 1] as Command;
      const ctx = new Context(io, command.optsWithGlobals() as GlobalOptions);
      try {
        ctx.checkGlobals();
        await body(ctx, command.opts(), commanderArgs.slice(0, -2));
      } finally {
        await ctx.close();
      }
    };
}
