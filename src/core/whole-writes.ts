/**
 * Writes that are checked to the last byte. A disk that fills up may take part of a write and
 * report no error (libuv returns the bytes it wrote before ENOSPC), and Node's stream onto a
 * regular file (stdout redirected, `> out.csv`) drops that count: the output ended short, exit 0.
 */
import { write } from 'node:fs';
import { Writable } from 'node:stream';

/** What writeWhole writes through: a FileHandle, or a descriptor's writes (descriptorWrites). */
export interface Writes {
  write(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
}

/**
 * Writes all of `chunk` at `position` (null: at the file's current position, for a device or a
 * FIFO), resolving to the position after it. A write that takes fewer bytes than given is
 * continued, and one that takes none (a full disk that reports no error) fails with ENOSPC:
 * a short write is never taken for a whole one.
 */
export async function writeWhole(handle: Writes, chunk: Buffer, position: number | null): Promise<number> {
  let at = position ?? 0;
  for (let done = 0; done < chunk.length;) {
    const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, position === null ? null : at);
    if (bytesWritten <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
    done += bytesWritten;
    at += bytesWritten;
  }
  return at;
}

/** An open file descriptor's writes, for writeWhole. */
export function descriptorWrites(fd: number): Writes {
  return {
    write: (buffer, offset, length, position) =>
      new Promise((resolve, reject) => write(fd, buffer, offset, length, position, (err, bytesWritten) => (err ? reject(err) : resolve({ bytesWritten })))),
  };
}

/** A stream onto an open regular file (stdout redirected) whose every write is whole or fails. */
export function wholeWritesStream(handle: Writes): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeWhole(handle, chunk, null).then(() => done(), done);
    },
  });
}
