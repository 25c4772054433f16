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
 * relative XDG_CONFIG_HOME is to be ignored.
 */
export function configDirectory(env: Io['env']): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'carectl');
}

export const CONFIG_FILE_NAME = 'config.json';

export function configFilePath(env: Io['env']): string {
  return join(configDirectory(env), CONFIG_FILE_NAME);
}
