/**
 * Wraps a command's implementation for commander: builds its Context from the global and local
 * options, runs it, and always releases what it opened (connections, the in-process sandbox).
 */
import type { Command } from 'commander';
import { Context, type GlobalOptions } from './context.js';
import { CarectlError, ListStoppedError, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { redactError } from '../http/redact.js';
import { openOutputFile } from './output-file.js';
import { checkResumeFile, settleResumeFile } from './resume-file.js';
import { refuseSharedFiles } from './file-options.js';
import { columnsHelp, columnsOf } from './columns.js';
import type { ListOutcome } from './list-pipeline.js';
import { writeText } from '../output/index.js';

/** Commander's parsed options of one command, before a verb reads them. */
export type RawOptions = Readonly<Record<string, unknown>>;
/** Reads commander's options and positional arguments into a verb's own typed options, once. */
export type OptionReader<O> = (raw: RawOptions, args: readonly unknown[]) => O;
/** A command's work; a list's says how it ended, for --resume-file. */
export type CommandBody<O> = (ctx: Context, opts: O) => Promise<ListOutcome | void>;
/**
 * Global options that only some commands act on. A command names those it takes; given to any
 * other, they are a usage error rather than silently ignored (`tags get 7001 --resume T`).
 */
export type GlobalUse = 'limit' | 'page-size' | 'resume' | 'resume-file' | 'columns' | 'parallel' | 'output-file' | 'state' | 'watch' | 'query';
/** What a command names of them: --columns it takes by having columns (offerColumns), so that `--columns help` lists them wherever it is taken. */
export type NamedUse = Exclude<GlobalUse, 'columns'>;
export type Action = <O>(read: OptionReader<O>, body: CommandBody<O>, takes?: readonly NamedUse[]) => (...commanderArgs: unknown[]) => Promise<void>;

/** For verbs that take no options or arguments of their own. */
export const noOptions: OptionReader<undefined> = () => undefined;

/** What a list of records takes: all of them (a resource's own list also --state and --watch). */
export const LIST_USES: readonly NamedUse[] = ['limit', 'page-size', 'resume', 'resume-file', 'parallel', 'output-file', 'query'];

const GIVEN: Readonly<Record<GlobalUse, (globals: GlobalOptions) => boolean>> = {
  limit: (globals) => globals.limit !== undefined,
  'page-size': (globals) => globals.pageSize !== undefined,
  resume: (globals) => globals.resume !== undefined,
  'resume-file': (globals) => globals.resumeFile !== undefined,
  columns: (globals) => globals.columns !== undefined,
  parallel: (globals) => globals.parallel !== undefined,
  'output-file': (globals) => globals.outputFile !== undefined,
  state: (globals) => globals.state !== undefined,
  watch: (globals) => globals.watch === true || globals.interval !== undefined,
  query: (globals) => globals.query !== undefined,
};

function checkUses(command: Command, globals: GlobalOptions, takes: readonly GlobalUse[]): void {
  for (const use of Object.keys(GIVEN) as GlobalUse[]) {
    if (!GIVEN[use](globals) || takes.includes(use)) continue;
    const path: string[] = [];
    for (let at: Command | null = command; at?.parent; at = at.parent) path.unshift(at.name());
    throw new UsageError(`--${use}: \`carectl ${path.join(' ')}\` does not take it`);
  }
}

/** The --resume-file of a command that takes one: the flag's, else CARECTL_RESUME_FILE's, with the name it was given by. */
function resumeFileNamed(io: Io, globals: GlobalOptions, takes: readonly GlobalUse[]): { flag: string; given: string } | undefined {
  const given = takes.includes('resume-file') ? (globals.resumeFile ?? (io.env.CARECTL_RESUME_FILE || undefined)) : undefined;
  return given === undefined ? undefined : { flag: globals.resumeFile === undefined ? 'CARECTL_RESUME_FILE' : '--resume-file', given };
}

function failIfSaid(failure: string | undefined): void {
  if (failure !== undefined) throw new CarectlError(failure);
}

/** --resume-file once the command succeeded: a list stopped at --limit leaves its token there, a whole one removes its own. */
function settleAfter(io: Io, resumeFile: string, list: ListOutcome | void): string | undefined {
  return list ? settleResumeFile(io, resumeFile, list.ended === 'limit' ? list.token : undefined, list.owns) : settleResumeFile(io, resumeFile, undefined);
}

/** Beside the list's own error, which decides the exit code. */
function sayIfSaid(failure: string | undefined, say: (message: string) => void): void {
  if (failure !== undefined) say(failure);
}

/** The global options a command acts on: those it names, and --columns where it has columns. */
function takenBy(uses: readonly NamedUse[], hasColumns: boolean): readonly GlobalUse[] {
  return hasColumns ? [...uses, 'columns'] : uses;
}

export function makeAction(io: Io): Action {
  return (read, body, uses = []) => {
    return async (...commanderArgs) => {
      // commander passes the positional arguments, then the options, then the command itself
      const command = commanderArgs[commanderArgs.length - 1] as Command;
      const columns = columnsOf(command);
      const takes = takenBy(uses, columns !== undefined);
      const globals = command.optsWithGlobals() as GlobalOptions;
      checkUses(command, globals, takes);
      // Help, as `help columns` gives it: on stdout, exit 0, nothing read or sent.
      if (columns && globals.columns?.trim() === 'help') return writeText(io.stdout.stream, columnsHelp(columns, io.stdout.columns ?? 80), io.signal);
      const resumeNamed = resumeFileNamed(io, globals, takes);
      const resumeFile = resumeNamed?.given;
      await refuseSharedFiles(io, [
        globals.outputFile === undefined ? undefined : { flag: '-O/--output-file', given: globals.outputFile },
        globals.state === undefined ? undefined : { flag: '--state', given: globals.state },
        resumeNamed,
      ]);
      // -O and --resume-file: before anything is sent, so a folder that cannot be written costs nothing.
      if (resumeNamed !== undefined) await checkResumeFile(io, resumeNamed.given, resumeNamed.flag);
      const file = globals.outputFile === undefined ? undefined : await openOutputFile(io, globals.outputFile);
      const ctx = new Context(file?.io ?? io, globals);
      ctx.resumeFile = resumeNamed;
      const sayToStderr = (message: string): void => void io.stderr.stream.write(`carectl: ${message}\n`);
      try {
        ctx.checkGlobals();
        await ctx.query();
        const list = await body(ctx, read(command.opts(), commanderArgs.slice(0, -2)));
        await file?.commit();
        // Only now is the output whole and in place: --state may record that it was delivered.
        await ctx.outputDone();
        // A script reads FILE's absence as "complete": a token not written (or ours not removed) is a failure.
        if (resumeFile !== undefined) failIfSaid(settleAfter(io, resumeFile, list));
      } catch (err) {
        // An early stop that can be continued: the token where scripts look (an earlier one is kept otherwise).
        if (resumeFile !== undefined && err instanceof ListStoppedError && err.resumeToken !== undefined)
          sayIfSaid(settleResumeFile(io, resumeFile, err.resumeToken), sayToStderr);
        // Messages may carry what the service or a proxy echoed: never a credential.
        throw redactError(file ? file.explain(err) : err, ctx.secrets());
      } finally {
        await file?.discard();
        await ctx.close();
      }
    };
  };
}
