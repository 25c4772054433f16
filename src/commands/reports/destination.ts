/**
 * Where a report is saved: a file, a folder (report-ID.EXT in it) or stdout. The temporary file
 * is created before any request, so a destination that cannot be written costs nothing.
 */
import { access, constants, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { Context } from '../../cli/context.js';
import { systemReason, UsageError } from '../../core/errors.js';
import { linkTarget, PartialFile } from '../../http/download.js';

export type FileDestination =
  /** A file path; `shown` is what the user typed, for messages and resume commands. */
  (
    | { kind: 'file'; path: string; shown: string }
    /** report-ID.EXT goes into this folder. */
    | { kind: 'folder'; path: string; shown: string }
  ) & {
    /** --unzip: the file is a ZIP archive of one file, which is what is saved. */
    unzip?: boolean;
  };
export type Destination =
  | (FileDestination & { partial: PartialFile })
  | { kind: 'stdout'; shown: '-' }
  /** A device node or FIFO (`/dev/null`, a named pipe): written straight, never replaced. */
  | { kind: 'device'; path: string; shown: string };

/**
 * Resolves PATH against the current folder and creates the download's temporary file there,
 * before any request: a destination that cannot be written must not cost a report and its wait.
 */
export async function checkedDestination(ctx: Context, given: string | undefined, flag: string, unzip = false): Promise<Destination | undefined> {
  const destination = await checked(ctx, given, flag, unzip);
  if (unzip && (destination === undefined || destination.kind === 'stdout' || destination.kind === 'device')) {
    throw new UsageError(`--unzip: extracts into a file or folder: give ${flag} PATH${destination === undefined ? '' : ` (not ${destination.shown})`}`);
  }
  return destination;
}

async function checked(ctx: Context, given: string | undefined, flag: string, unzip: boolean): Promise<Destination | undefined> {
  if (given === undefined) return undefined;
  if (given === '-') return { kind: 'stdout', shown: '-' };
  if (given.trim() === '') throw new UsageError(`${flag}: needs a path (or - for standard output)`);
  const path = resolve(ctx.io.cwd, given);
  // Only a path not there yet may fail here: a loop of links (ELOOP) or a folder not searchable is found before anything is sent.
  const existing = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
    throw new UsageError(`${flag}: cannot write to ${given}: ${systemReason(err)}`);
  });
  if (existing?.isDirectory()) return withPartialFile(ctx, { kind: 'folder', path, shown: given, unzip }, flag);
  if (existing && !existing.isFile()) {
    await access(path, constants.W_OK).catch((err: Error) => {
      throw new UsageError(`${flag}: cannot write to ${given}: ${systemReason(err)}`);
    });
    return { kind: 'device', path, shown: given };
  }
  const folder = await stat(dirname(path)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new UsageError(`${flag}: the folder ${dirname(given) || '.'} does not exist`);
  // Through a symbolic link to the file it names, whose folder holds the temporary file: the
  // link is kept, and the rename into place stays on the target's file system.
  return withPartialFile(ctx, { kind: 'file', path: await linkTarget(path), shown: given, unzip }, flag);
}

/** The destination with its temporary file, removed when the command ends unless it was renamed into place. */
export async function withPartialFile(ctx: Context, destination: FileDestination, flag: string): Promise<Destination> {
  const [folder, name] = destination.kind === 'folder' ? [destination.path, 'report'] : [dirname(destination.path), basename(destination.path)];
  const partial = await PartialFile.create(folder, name).catch((err: Error) => {
    const reason = systemReason(err);
    // No PATH given: the current folder is the default, and the flag is the way out.
    if (destination.shown === '') throw new UsageError(`cannot write to the current folder (${folder}): ${reason}; choose another with ${flag} PATH`);
    throw new UsageError(`${flag}: cannot write to ${destination.kind === 'file' ? destination.shown : `the folder ${destination.shown}`}: ${reason}`);
  });
  ctx.onClose(() => partial.discard());
  return { ...destination, partial };
}
