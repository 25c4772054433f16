/**
 * The temporary file a download is written into, renamed into place only when complete, and the
 * list of those in progress that a forced stop removes.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

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
 * folder, so the final rename stays on one file system. It is created before any request, so a
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
    const path = join(folder, `${name}.partial-${randomBytes(6).toString('hex')}`);
    // Registered first: a forced stop while open() runs still finds the file.
    partialFiles.add(path);
    try {
      return new PartialFile(path, await open(path, 'wx'));
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
    await this.handle.write(chunk, 0, chunk.length, this.#offset);
    this.#offset += chunk.length;
  }

  /** Flushes to disk and renames the file to `to`. */
  async commit(to: string): Promise<void> {
    await this.handle.sync();
    await this.#close();
    await rename(this.path, to);
    this.#done = true;
    partialFiles.delete(this.path);
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
