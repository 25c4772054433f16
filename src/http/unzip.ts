/**
 * `--unzip`: the real service delivers large report files as ZIP archives. One holding a single
 * file is extracted into place; anything else is refused before a byte is written: several
 * members, a member with a path (it would name a place of its own), an encrypted one, or one
 * past the 4 GiB carectl writes (checked against the archive's figures and again while inflating,
 * since those can lie). yauzl reads the central directory, validates names and sizes.
 */
import type { Entry, ZipFile } from 'yauzl';
import { CarectlError, LastingError } from '../core/errors.js';
import type { PartialFile } from './partial-file.js';
import { formatLimit } from './reply.js';

/** An archive --unzip will not extract: the same file is refused again, while saving it as it is works. */
export class UnzipRefusal extends LastingError {}

/** The largest member extracted (the download cap, for the file it unpacks to). */
export const MAX_UNZIPPED_BYTES = 4 * 1024 ** 3;

/**
 * Writes the one member of the archive at `zipPath` into `into`; resolves to its name and size.
 * `what` names the archive in errors (the report's file); `onMember` hears the member's name
 * before a byte of it is written (a failed write then names where it was going). Folder entries
 * (`sub/`, as `zip -r` makes) are not members.
 */
export async function extractSingleMember(
  zipPath: string,
  into: PartialFile,
  what: string,
  maxBytes = MAX_UNZIPPED_BYTES,
  onMember?: (name: string) => void,
): Promise<{ name: string; bytes: number }> {
  const yauzl = await import('yauzl');
  const refuse = (why: string): CarectlError => new UnzipRefusal(`--unzip: ${what} ${why}`);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true });
  } catch (err) {
    throw refuse(`is not a ZIP archive carectl can read (${(err as Error).message})`);
  }
  try {
    const files: Entry[] = [];
    for (let read = 0; read < zip.entryCount; read++) {
      const next = await new Promise<Entry>((resolve, reject) => {
        zip.once('entry', resolve).once('error', reject);
        zip.readEntry();
      }).catch((err: unknown) => {
        throw err instanceof CarectlError ? err : refuse(`has a member carectl will not extract (${(err as Error).message})`);
      });
      if (!next.fileName.endsWith('/')) files.push(next);
    }
    if (files.length !== 1) throw refuse(`holds ${files.length} members; --unzip extracts an archive of one file (save it without --unzip)`);
    const entry = files[0]!;
    const name = entry.fileName;
    if (/[\\/]/.test(name) || name === '' || name === '.' || name === '..')
      throw refuse(`has a member with a path (${JSON.stringify(name)}); --unzip extracts a single plain file`);
    if (entry.isEncrypted()) throw refuse(`has an encrypted member (${name})`);
    if (entry.uncompressedSize > maxBytes)
      throw refuse(`has a member of ${entry.uncompressedSize} bytes, more than the ${formatLimit(maxBytes)} carectl writes`);
    onMember?.(name);
    const stream = await zip.openReadStreamPromise(entry);
    let bytes = 0;
    try {
      for await (const chunk of stream) {
        bytes += (chunk as Buffer).length;
        if (bytes > maxBytes) throw refuse(`inflates past the ${formatLimit(maxBytes)} carectl writes`);
        await into.write(chunk as Buffer);
      }
    } catch (err) {
      stream.destroy();
      if (err instanceof CarectlError) throw err;
      const e = err as NodeJS.ErrnoException;
      // A write that failed (a full disk) is the disk's, not the archive's.
      if (e.syscall !== undefined) throw err;
      throw refuse(`could not be extracted (${e.message})`);
    }
    return { name, bytes };
  } finally {
    zip.close();
  }
}
