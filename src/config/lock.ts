/**
 * One writer of the config file at a time: a lock file beside it (`config.json.lock`), created
 * with O_EXCL, so that a read-modify-write (`config set`, `login`, `logout`) never overwrites
 * what another carectl stored between its read and its write.
 *
 * Why a lock and not "re-read just before the atomic rename": rename replaces the file
 * unconditionally, so between the re-read and the rename another writer can still land its
 * change, which the rename then throws away. Only mutual exclusion closes that window. conf's
 * atomic write (a temporary file renamed into place) stays: readers, which take no lock, never
 * see a half-written file.
 *
 * - Waiting: short sleeps with jitter, so fifty writers at once take turns without spinning.
 * - A lock whose file is older than STALE_MS was left by a writer that died (a hold lasts
 *   milliseconds: read, validate, write, all synchronous): it is taken over. The takeover moves
 *   the lock aside first and checks that what it moved is the stale file it judged, so two
 *   writers that both find a stale lock cannot both remove a fresh one.
 * - Always released: the body runs synchronously between acquire and release, in try/finally, and
 *   the lock file is removed only while it still holds this process's token.
 */
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { hostname } from 'node:os';
import { CarectlError, InterruptedError, UsageError, systemReason } from '../core/errors.js';
import { realSleep } from '../core/io.js';

export const STALE_MS = 10_000;
const TIMEOUT_MS = 30_000;
const SLEEP_MS = 5;
const JITTER_MS = 20;

export interface LockOptions {
  /** Aborted by Ctrl-C: a writer waiting for the lock stops (exit 130) without writing. */
  signal: AbortSignal;
}

/**
 * Runs `body` while holding `${file}.lock`. The body is synchronous on purpose: nothing else in
 * this process runs while the lock is held, and no await can leave it held across a signal.
 */
export async function withLock<T>(file: string, options: LockOptions, body: () => T): Promise<T> {
  const lock = `${file}.lock`;
  const token = await acquire(file, lock, options.signal);
  try {
    return body();
  } finally {
    release(lock, token);
  }
}

async function acquire(file: string, lock: string, signal: AbortSignal): Promise<string> {
  // Unique to this acquisition: release removes the lock only while it is still this one.
  const token = `${process.pid}@${hostname()} ${Date.now()} ${Math.random().toString(36).slice(2)}\n`;
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    if (signal.aborted) throw new InterruptedError();
    if (create(file, lock, token)) return token;
    if (takeOverStale(lock)) continue;
    if (Date.now() > deadline) {
      throw new CarectlError(`cannot write ${file}: other carectl runs kept it locked for ${TIMEOUT_MS / 1000}s (${lock}); try again`);
    }
    try {
      await realSleep(SLEEP_MS + Math.random() * JITTER_MS, signal);
    } catch {
      throw new InterruptedError();
    }
  }
}

/** True when the lock file was created (and so is ours); false when another one exists. */
function create(file: string, lock: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(lock, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new UsageError(`cannot lock ${file}: ${systemReason(err as Error)}`);
  }
  try {
    writeSync(fd, token);
  } catch (err) {
    // A full disk makes the file but not its token: removed, or the next write would wait for it to go stale.
    closeSync(fd);
    unlinkSync(lock);
    throw new CarectlError(`cannot write ${file}: ${systemReason(err as Error)}`);
  }
  closeSync(fd);
  return true;
}

/**
 * Removes a lock older than STALE_MS; true when there is no lock left to wait for (taken over, or
 * released meanwhile), so the caller tries again at once.
 */
function takeOverStale(lock: string): boolean {
  const judged = statOrUndefined(lock);
  if (judged === undefined) return true;
  if (Date.now() - judged.mtimeMs < STALE_MS) return false;
  // Between the stat and now, another writer may have taken over the stale lock and made a fresh
  // one: move whatever is there aside (atomic), then look at what was moved.
  const aside = `${lock}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(lock, aside);
  } catch {
    return true;
  }
  const moved = statOrUndefined(aside);
  const wasStale = moved !== undefined && moved.ino === judged.ino && moved.mtimeMs === judged.mtimeMs;
  if (!wasStale) {
    // A live writer's fresh lock: put it back, unless yet another writer holds the lock by now.
    try {
      linkSync(aside, lock);
    } catch {
      // that writer's lock stays
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // already gone
  }
  return wasStale;
}

function release(lock: string, token: string): void {
  try {
    if (readFileSync(lock, 'utf8') === token) unlinkSync(lock);
  } catch {
    // gone already: nothing to release
  }
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
