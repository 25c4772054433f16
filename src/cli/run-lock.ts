/**
 * A lock held for a whole run (`--state FILE`: `FILE.lock`), not for the milliseconds of a config
 * write (src/config/lock.ts): a run lasts minutes, so a lock's age says nothing of its holder.
 * The lock file names its holder's process; one whose process is gone (on this host) was left by a
 * run that was killed and is taken over. Another waits for it, up to a minute, then says who holds it.
 */
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { CarectlError, InterruptedError, systemReason, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';

export const RUN_LOCK_WAIT_MS = 60_000;
const POLL_MS = 500;

/** Holds `${path}.lock` (`shown`: as the user named the file); resolves to its release. */
export async function holdRunLock(io: Io, path: string, shown: string, flag: string): Promise<() => Promise<void>> {
  const lock = `${path}.lock`;
  const holder = `${process.pid}@${hostname()} ${io.now()} ${Math.random().toString(36).slice(2)}\n`;
  const deadline = io.now() + RUN_LOCK_WAIT_MS;
  for (;;) {
    if (await create(lock, holder, shown, flag)) break;
    const other = await readFile(lock, 'utf8').catch(() => '');
    if (other === '' || (await takeOverLeft(lock, other))) continue;
    if (io.now() >= deadline) {
      throw new CarectlError(
        `${flag}: another carectl run (${other.split(' ')[0]}) holds ${shown} (${shown}.lock) for over ${RUN_LOCK_WAIT_MS / 1000}s; try again later`,
      );
    }
    await io.sleep(POLL_MS, io.signal).catch(() => {
      throw new InterruptedError();
    });
  }
  return async () => {
    if ((await readFile(lock, 'utf8').catch(() => '')) === holder) await unlink(lock).catch(() => undefined);
  };
}

async function create(lock: string, holder: string, shown: string, flag: string): Promise<boolean> {
  const handle = await open(lock, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST') return undefined;
    throw new UsageError(`${flag}: cannot lock ${shown}: ${systemReason(err)}`);
  });
  if (!handle) return false;
  try {
    await handle.writeFile(holder);
  } catch (err) {
    await handle.close();
    await unlink(lock).catch(() => undefined);
    throw new CarectlError(`${flag}: cannot lock ${shown}: ${systemReason(err as Error)}`);
  }
  await handle.close();
  return true;
}

/**
 * A lock whose holder was a process of this host that is gone: moved aside (checked to be the one
 * judged, so two runs that both find it cannot both remove a fresh one) and removed.
 */
async function takeOverLeft(lock: string, judged: string): Promise<boolean> {
  const match = /^(\d+)@(\S+) /.exec(judged);
  if (!match || match[2] !== hostname() || alive(Number(match[1]))) return false;
  const aside = `${lock}.left-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await rename(lock, aside);
  } catch {
    return true; // gone already: another run took it over
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  // Another run's fresh lock, taken over meanwhile: put back (unless yet another exists).
  if (moved !== judged) await link(aside, lock).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user holds that id.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
