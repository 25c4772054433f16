/**
 * A profile chosen by name (--profile, CARECTL_PROFILE) that the config file lacks: most likely a
 * typo, worth naming as one where the profile was needed and gave nothing (no base address).
 * Commands that create a profile (login, config set) never ask.
 */
import { existsSync } from 'node:fs';
import { UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { configFilePath } from './paths.js';

/** `source` is where the name came from: `--profile` or `CARECTL_PROFILE`. */
export async function refuseUnknownProfile(io: Io, name: string, source: string): Promise<void> {
  const file = configFilePath(io.env);
  if (file === undefined || !existsSync(file)) return;
  const { openConfig } = await import('./store.js');
  const names = Object.keys(await openConfig(io).list());
  if (names.includes(name)) return;
  throw new UsageError(
    `${source}: profile "${name}" does not exist in ${file}; ${names.length > 0 ? `its profiles: ${names.join(', ')}` : 'it holds no profile'}`,
  );
}
