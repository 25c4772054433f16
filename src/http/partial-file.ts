/**
 * The temporary file a download is written into, renamed into place only when complete, and the
 * list of those in progress that a forced stop removes.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { lstat, open, readlink, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { writeWhole } from '../core/whole-writes.js';

/** Temporary files of downloads in progress, for removePartialFiles(). */
const partialFiles = new Set<string>();

/**
 * Removes the temporary files of unfinished downloads, synchronously: for a process that must
 * end at once (a second Ctrl-C) and cannot wait for the download to clean up after itself.
 */
export function removePartialFiles(): void {
  for (const file of partialFiles) {
    try {
      rmSync(file, { force: true });
    } catch {
      // Ending at once matters more than one file that cannot be removed.
    }
  }
  partialFiles.clear();
}

/**
 * The temporary file a download is written into: `NAME.partial-<random>` in the destination's
 * folder, so the final rename stays on one file system. NAME is cut to its first 32 bytes: a
 * destination name that is long but valid (up to 255 bytes) must not fail for the temporary one. It is created before any request, so a
 * destination that cannot be written is found before a report is requested and waited for; its
 * owner discards it however the command ends (a no-op once committed), and removePartialFiles()
 * covers a forced stop.
 */
export class PartialFile {
  #offset = 0;
  #closed = false;
  #done = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /** Rejects with the system's error when the folder cannot be written. */
  static async create(folder: string, name: string): Promise<PartialFile> {
    const path = join(folder, `${shortened(name)}.partial-${randomBytes(6).toString('hex')}`);
    // Registered first: a forced stop while open() runs still finds the file.
    partialFiles.add(path);
    try {
      // Readable too: a commit onto a device or FIFO copies from it.
      return new PartialFile(path, await open(path, 'wx+'));
    } catch (err) {
      partialFiles.delete(path);
      throw err;
    }
  }

  /** Empties the file for a fresh attempt. */
  async restart(): Promise<void> {
    await this.handle.truncate(0);
    this.#offset = 0;
  }

  async write(chunk: Buffer): Promise<void> {
    // At an explicit offset: truncate() does not move the file position back.
    this.#offset = await writeWhole(this.handle, chunk, this.#offset);
  }

  /**
   * Flushes to disk and renames the file to `to`, or to the file a symbolic link at `to` points
   * to (the link stays). Anything at `to` that is not a regular file (a device, a FIFO) is never
   * replaced: the bytes are written into it instead.
   */
  async commit(to: string): Promise<void> {
    await this.handle.sync();
    const target = await linkTarget(to);
    const existing = await lstat(target).catch(() => undefined);
    if (existing && !existing.isFile()) {
      await this.#copyInto(target);
      await this.discard();
      return;
    }
    await this.#close();
    try {
      await rename(this.path, target);
    } catch (err) {
      // A link to another file system: the bytes are copied there, not renamed.
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await this.#copyInto(target);
      await this.discard();
      return;
    }
    this.#done = true;
    partialFiles.delete(this.path);
  }

  /** Writes the whole file into `target`, which is opened without being replaced. */
  async #copyInto(target: string): Promise<void> {
    const source = this.#closed ? await open(this.path, 'r') : this.handle;
    const into = await open(target, 'w');
    try {
      const buffer = Buffer.allocUnsafe(1024 * 1024);
      for (let position = 0; ;) {
        const { bytesRead } = await source.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break;
        await writeWhole(into, buffer.subarray(0, bytesRead), null);
        position += bytesRead;
      }
      // A device or FIFO has nothing to flush; a regular file reached through a link has.
      if ((await into.stat()).isFile()) await into.sync();
    } finally {
      await into.close();
      if (source !== this.handle) await source.close();
    }
  }

  /** Removes the file (nothing once committed or discarded). */
  async discard(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#close().catch(() => undefined);
    await rm(this.path, { force: true });
    partialFiles.delete(this.path);
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.handle.close();
  }
}

/** The start of `name`, whole characters up to 32 bytes. */
function shortened(name: string): string {
  let start = '';
  for (const character of name) {
    if (Buffer.byteLength(start + character) > 32) break;
    start += character;
  }
  return start;
}

/**
 * The path a chain of symbolic links at `path` ends at (itself when it is not a link); a link
 * to a file not there yet ends at the path it names. Past 40 links (a loop), `path` is kept and
 * opening it fails as the system says.
 */
export async function linkTarget(path: string): Promise<string> {
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    const stats = await lstat(current).catch(() => undefined);
    if (!stats?.isSymbolicLink()) return current;
    current = resolve(dirname(current), await readlink(current));
  }
  return path;
}
