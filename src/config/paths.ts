/** Where the config file lives, and which profile names it may hold. */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';

/** Names that stay plain object keys (no `__proto__`) and plain words in a shell. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkProfileName(name: string, source = '--profile/CARECTL_PROFILE'): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(`${source}: "${name}" is not a profile name; use letters, digits, '.', '_' and '-' (up to 64, starting with a letter or digit)`);
  }
  return name;
}

/**
 * `$XDG_CONFIG_HOME/carectl` (default `~/.config/carectl`): no `-nodejs` suffix. XDG says a
 * relative XDG_CONFIG_HOME is to be ignored; a home that is empty or relative is no home either
 * (libuv names an empty HOME as the home: the file would land in the current folder). Undefined
 * when no absolute home is known (no HOME, on a uid the system knows no home for).
 */
export function configDirectory(env: Io['env'], systemHome: () => string = homedir): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'carectl');
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : absoluteOrNothing(systemHome);
  return home === undefined ? undefined : join(home, '.config', 'carectl');
}

function absoluteOrNothing(systemHome: () => string): string | undefined {
  try {
    const home = systemHome();
    return isAbsolute(home) ? home : undefined;
  } catch {
    return undefined;
  }
}

/** The config folder, for what must store the file; a usage error saying how to give it one. */
export function requireConfigDirectory(env: Io['env']): string {
  const folder = configDirectory(env);
  if (folder !== undefined) return folder;
  const home = env.HOME;
  const reason =
    home === undefined
      ? 'HOME is not set and the system names no home folder for this user'
      : home === ''
        ? 'HOME is empty and names no folder'
        : `HOME (${home}) is not an absolute path`;
  throw new UsageError(`no folder for the config file: ${reason}; set HOME or XDG_CONFIG_HOME to an absolute path`);
}

export const CONFIG_FILE_NAME = 'config.json';

/** The config file's path; undefined when there is no folder for it (see configDirectory). */
export function configFilePath(env: Io['env']): string | undefined {
  const folder = configDirectory(env);
  return folder === undefined ? undefined : join(folder, CONFIG_FILE_NAME);
}
