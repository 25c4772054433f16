/**
 * The files a list's options name (-O, --state, --resume-file), checked together before anything
 * is sent: two naming one file would have one replace or remove the other's content.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';

/** An option that names a file: its flag as the user gave it, and the path given. */
export interface NamedFile {
  flag: string;
  given: string;
}

/** A usage error when two of `files` are one file: the same path, or (a link, a hard link) the same file. */
export async function refuseSharedFiles(io: Io, files: ReadonlyArray<NamedFile | undefined>): Promise<void> {
  const named = files.filter((file): file is NamedFile => file !== undefined && file.given !== '-' && file.given.trim() !== '');
  const seen: Array<{ file: NamedFile; path: string; id: string | undefined }> = [];
  for (const file of named) {
    const path = resolve(io.cwd, file.given);
    const found = await stat(path).catch(() => undefined);
    const id = found?.isFile() ? `${found.dev}:${found.ino}` : undefined;
    const same = seen.find((other) => other.path === path || (id !== undefined && other.id === id));
    if (same) throw new UsageError(`${file.flag}: names the same file as ${same.file.flag} (${file.given}); give each its own`);
    seen.push({ file, path, id });
  }
}
