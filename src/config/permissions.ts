/**
 * Whom the config file trusts, as ssh does for its own files. carectl writes the folder 0700 and
 * the file 0600, so a looser mode means someone changed it:
 *
 * - A folder or file that others can write (a group or other write bit, or another owner than
 *   this user or root) is refused for reading and for writing: whoever can write it can point
 *   the stored address at a host of theirs and collect the credentials sent there (or plant a
 *   config.json in a writable folder). As ssh refuses a ~/.ssh/config that others can write.
 * - A file that holds a password and that others can read (any group or other bit) is refused
 *   for reading, as ssh refuses a private key others can read: the password may have leaked
 *   already, and using it silently would hide that. Writing it (config set, login, logout)
 *   tightens it to 0600 first, as before, which is the fix.
 *
 * Each refusal is one line (a UsageError, exit 2, as for a corrupt config file: the
 * configuration is bad and nothing was sent) with the command that fixes it.
 */
import { statSync, type Stats } from 'node:fs';
import { userInfo } from 'node:os';
import { UsageError } from '../core/errors.js';
import { shellWord } from '../core/shell.js';

const WRITABLE_BY_OTHERS = 0o022;
const ANY_ACCESS_BY_OTHERS = 0o077;
const CHMOD = { folder: '700', file: '600' } as const;

const ELSEWHERE = 'move it away, or use another config folder with XDG_CONFIG_HOME';
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Mode bits and owners mean nothing on Windows (and getuid does not exist there). */
const checked = process.platform !== 'win32' && typeof process.getuid === 'function';

/**
 * Refuses a folder or file that others can change, and a config file that is not a regular file
 * (a FIFO would block every command on opening it, a device never end) or is over 1 MiB;
 * answers its stat (undefined when it does not exist, or on Windows).
 */
export function refuseWritableByOthers(target: string, kind: 'folder' | 'file'): Stats | undefined {
  let stats: Stats;
  try {
    stats = statSync(target);
  } catch (err) {
    // Only a path that is not there is no configuration: a symlink loop is not an empty one.
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read ${target}: ${(err as { code?: string }).code ?? String(err)}; ${ELSEWHERE}`);
  }
  if (kind === 'file' ? !stats.isFile() : !stats.isDirectory()) {
    throw new UsageError(
      `${target} is not a ${kind === 'file' ? 'regular file' : 'folder'} (${fileType(stats)}); carectl reads its configuration only from one: ${ELSEWHERE}`,
    );
  }
  // A config file holds a few settings: a huge one would hold the process for seconds and gigabytes.
  if (kind === 'file' && stats.size > MAX_CONFIG_BYTES) throw new UsageError(`${target} is larger than 1 MiB, which no configuration is; ${ELSEWHERE}`);
  if (!checked) return undefined;
  const uid = process.getuid?.();
  if (stats.uid !== uid && stats.uid !== 0) {
    throw new UsageError(
      `${target} belongs to another user (uid ${stats.uid}), who can change it; run: sudo chown ${ownName()} ${shellWord(target)} (or use a config folder of your own with XDG_CONFIG_HOME)`,
    );
  }
  if ((stats.mode & WRITABLE_BY_OTHERS) !== 0) {
    throw new UsageError(`${target} is writable by others; run: chmod ${CHMOD[kind]} ${shellWord(target)}`);
  }
  return stats;
}

/** Refuses to read a stored password from a file that others can read. */
export function refuseExposedPassword(file: string, stats: Stats | undefined, profiles: Record<string, { password?: string }> | undefined): void {
  if (stats === undefined || (stats.mode & ANY_ACCESS_BY_OTHERS) === 0) return;
  if (!Object.values(profiles ?? {}).some((profile) => profile?.password !== undefined)) return;
  throw new UsageError(`${file} holds a password and is readable by others; run: chmod ${CHMOD.file} ${shellWord(file)}`);
}

export function fileType(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return stats.isDirectory() ? 'a folder' : 'a file';
}

function ownName(): string {
  try {
    return shellWord(userInfo().username);
  } catch {
    return String(process.getuid?.());
  }
}
