/**
 * `--unzip`: the real service delivers large report files as ZIP archives. One holding a single
 * file is extracted into place; anything else is refused before a byte is written: several
 * members, a member with a path (it would name a place of its own), an encrypted one, one packed
 * by a method carectl cannot inflate (only stored and deflate are), or one past the 4 GiB carectl
 * writes (checked against the archive's figures and again while inflating, since those can lie).
 * A member whose bytes do not match its CRC-32 is refused once inflated, before it is renamed into
 * place. yauzl reads the central directory, validates names and sizes; it checks no CRC.
 */
import { once } from 'node:events';
import type { Entry, ZipFile } from 'yauzl';
import { crc32Function } from '../core/crc32.js';
import { CarectlError, InterruptedError, LastingError } from '../core/errors.js';
import type { PartialFile } from './partial-file.js';
import { formatLimit } from './reply.js';

/** An archive --unzip will not extract: the same file is refused again, while saving it as it is works. */
export class UnzipRefusal extends LastingError {}

/** The largest member extracted (the download cap, for the file it unpacks to). */
export const MAX_UNZIPPED_BYTES = 4 * 1024 ** 3;

/** The methods of APPNOTE 4.4.5 that archivers write and carectl cannot inflate, by name. */
const METHOD_NAMES: ReadonlyMap<number, string> = new Map([
  [9, 'Deflate64'],
  [12, 'bzip2'],
  [14, 'LZMA'],
  [20, 'zstd'],
  [93, 'zstd'],
  [95, 'xz'],
  [98, 'PPMd'],
]);

function methodName(method: number): string {
  const name = METHOD_NAMES.get(method);
  return name === undefined ? `compression method ${method}` : `${name} (compression method ${method})`;
}

export interface ExtractOptions {
  /** The largest member written (MAX_UNZIPPED_BYTES). */
  maxBytes?: number;
  /** Hears the member's name before a byte of it is written (a failed write then names where it was going). */
  onMember?: (name: string) => void;
  /** A stop (Ctrl-C, SIGTERM): the extraction ends at once with an InterruptedError. */
  signal?: AbortSignal;
}

/**
 * Writes the one member of the archive at `zipPath` into `into`; resolves to its name and size.
 * `what` names the archive in errors (the report's file). Folder entries (`sub/`, as `zip -r`
 * makes) are not members.
 */
export async function extractSingleMember(
  zipPath: string,
  into: PartialFile,
  what: string,
  options: ExtractOptions = {},
): Promise<{ name: string; bytes: number }> {
  const yauzl = await import('yauzl');
  const refuse = (why: string): CarectlError => new UnzipRefusal(`--unzip: ${what} ${why}`);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true });
  } catch (err) {
    throw refuse(`is not a ZIP archive carectl can read (${(err as Error).message})`);
  }
  // Past the entries (read with once(), which hears their errors), yauzl's one error is closing the file: not the report's.
  zip.on('error', () => undefined);
  try {
    const entry = checkedMember(await members(zip, refuse), refuse, options.maxBytes ?? MAX_UNZIPPED_BYTES);
    options.onMember?.(entry.fileName);
    const bytes = await inflateInto(zip, entry, into, refuse, options);
    return { name: entry.fileName, bytes };
  } finally {
    zip.close();
  }
}

type Refuse = (why: string) => CarectlError;

/** The archive's file entries, read one at a time (events.once leaves no listener behind per entry). */
async function members(zip: ZipFile, refuse: Refuse): Promise<Entry[]> {
  const files: Entry[] = [];
  for (let read = 0; read < zip.entryCount; read++) {
    const arrived = once(zip, 'entry') as Promise<[Entry]>;
    zip.readEntry();
    const [next] = await arrived.catch((err: unknown) => {
      throw err instanceof CarectlError ? err : refuse(`has a member carectl will not extract (${(err as Error).message})`);
    });
    if (!next.fileName.endsWith('/')) files.push(next);
  }
  return files;
}

/** The one member, if it is one carectl extracts. */
function checkedMember(files: Entry[], refuse: Refuse, maxBytes: number): Entry {
  if (files.length !== 1) throw refuse(`holds ${files.length} members; --unzip extracts an archive of one file (save it without --unzip)`);
  const entry = files[0]!;
  const name = entry.fileName;
  if (/[\\/]/.test(name) || name === '' || name === '.' || name === '..')
    throw refuse(`has a member with a path (${JSON.stringify(name)}); --unzip extracts a single plain file`);
  if (entry.isEncrypted()) throw refuse(`has an encrypted member (${name})`);
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    throw refuse(`has a member packed with ${methodName(entry.compressionMethod)}, which carectl cannot inflate (only stored and deflate)`);
  if (entry.uncompressedSize > maxBytes) throw refuse(`has a member of ${entry.uncompressedSize} bytes, more than the ${formatLimit(maxBytes)} carectl writes`);
  return entry;
}

/** Inflates the member into `into`, checking its size as it grows and its CRC-32 at the end; resolves to its size. */
async function inflateInto(zip: ZipFile, entry: Entry, into: PartialFile, refuse: Refuse, options: ExtractOptions): Promise<number> {
  const maxBytes = options.maxBytes ?? MAX_UNZIPPED_BYTES;
  const { signal } = options;
  const crc32 = await crc32Function();
  if (signal?.aborted) throw new InterruptedError();
  // A broken local header is found here, not in the central directory: the archive's fault too.
  const stream = await zip.openReadStreamPromise(entry).catch((err: Error) => {
    throw refuse(`could not be extracted (${err.message})`);
  });
  // A stop ends the read at once, even while it waits for the disk or the inflater.
  const stop = (): void => void stream.destroy(new InterruptedError());
  signal?.addEventListener('abort', stop, { once: true });
  let bytes = 0;
  let crc = 0;
  try {
    for await (const chunk of stream) {
      if (signal?.aborted) throw new InterruptedError();
      bytes += (chunk as Buffer).length;
      if (bytes > maxBytes) throw refuse(`inflates past the ${formatLimit(maxBytes)} carectl writes`);
      crc = crc32(chunk as Buffer, crc);
      await into.write(chunk as Buffer);
    }
  } catch (err) {
    stream.destroy();
    if (err instanceof CarectlError) throw err;
    const e = err as NodeJS.ErrnoException;
    // A write that failed (a full disk) is the disk's, not the archive's.
    if (e.syscall !== undefined) throw err;
    throw refuse(`could not be extracted (${e.message})`);
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (crc !== entry.crc32) throw refuse(`is damaged: ${entry.fileName} has CRC-32 ${hex(crc)}, the archive records ${hex(entry.crc32)}`);
  return bytes;
}

const hex = (crc: number): string => crc.toString(16).padStart(8, '0');
