/**
 * The composition root: runs the command tree on argv, and is the one place where failures
 * become exit codes and stderr lines.
 */
import { CommanderError } from 'commander';
import { keepDashValuesWithOptions } from './cli/argv.js';
import { buildProgram } from './program.js';
import { CarectlError, ExitCode, isBrokenPipe, ListStoppedError, resumeAdvice } from './core/errors.js';
import type { Io } from './core/io.js';
import { redact } from './http/redact.js';
import { sanitizeForTerminal, terminalMessage, writeText } from './output/index.js';

export async function run(argv: string[], io: Io): Promise<number> {
  // Help and --version, written as any output is: a full disk is an error, a closed pipe is not.
  const helpWrites: Array<Promise<void>> = [];
  const program = buildProgram(io, (text) => {
    const written = writeText(io.stdout.stream, text, io.signal);
    // Awaited below: not an unhandled rejection in the meantime.
    written.catch(() => undefined);
    helpWrites.push(written);
  });
  try {
    try {
      await program.parseAsync(keepDashValuesWithOptions(program, argv), { from: 'user' });
    } finally {
      await Promise.all(helpWrites);
    }
    return ExitCode.ok;
  } catch (err) {
    return reportFailure(io, err, argv.includes('--verbose'));
  }
}

/** Exit code for a failure, with one line on stderr (nothing at all for a closed pipe). */
export function reportFailure(io: Io, err: unknown, verbose: boolean): number {
  if (err instanceof CommanderError) {
    // help and --version arrive here too; commander already printed its message
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  if (isBrokenPipe(err)) return ExitCode.ok;
  if (err instanceof CarectlError) {
    // Part of the error, not a notice: --quiet cron jobs must still learn how to continue.
    const token = err instanceof ListStoppedError ? err.resumeToken : undefined;
    const message = token === undefined ? err.message : `${err.message}: ${resumeAdvice(token)}`;
    io.stderr.stream.write(`${terminalMessage(`carectl: ${sanitizeForTerminal(redact(message))}`, io.stderr)}\n`);
    return err.exitCode;
  }
  const detail = verbose && err instanceof Error && err.stack ? err.stack : String((err as Error)?.message ?? err);
  io.stderr.stream.write(`carectl: unexpected error: ${sanitizeForTerminal(detail)}\n`);
  return ExitCode.failure;
}
