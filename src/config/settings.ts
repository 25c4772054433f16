/**
 * Connection and output settings, resolved with the contract's precedence:
 * flag > environment variable > profile in the config file > built-in default.
 * The config file is only read when neither a flag nor the environment answers, so cron jobs
 * that pass everything in the environment never load conf.
 *
 * Stored credentials belong to the stored address: with a --base-url or CARECTL_BASE_URL of
 * another origin, the profile's user and password are not used, so they never reach that host.
 * The stored password also belongs to the stored user: with another --user or CARECTL_USER, it
 * is not used either.
 */
import { existsSync } from 'node:fs';
import type { Io } from '../core/io.js';
import { sameOrigin } from './base-url.js';
import { ENVIRONMENT, type ProfileValues, type SettingKey } from './keys.js';
import { checkProfileName, configFilePath } from './paths.js';

/**
 * What a profile stores for its base address alone, never used with another one given by a flag
 * or the environment: its credentials always; its api/1 address (where they go too) once the
 * profile has a base address (one set before it goes with whichever address is given).
 */
const BOUND_TO_BASE_URL: ReadonlyMap<SettingKey, 'always' | 'once-set'> = new Map([
  ['user', 'always'],
  ['password', 'always'],
  ['annotations-url', 'once-set'],
]);

export interface SettingSources {
  io: Io;
  /** Values given as flags (password never is). */
  flags: ProfileValues;
  profileName: string | undefined;
}

export class Settings {
  private profile: Promise<ProfileValues> | undefined;

  constructor(private readonly sources: SettingSources) {}

  /** The profile in use, checked whether or not a config file exists (an empty CARECTL_PROFILE is unset). */
  get profileName(): string {
    const fromFlag = this.sources.profileName;
    if (fromFlag !== undefined) return checkProfileName(fromFlag, '--profile');
    const fromEnv = this.sources.io.env.CARECTL_PROFILE;
    return fromEnv ? checkProfileName(fromEnv, 'CARECTL_PROFILE') : 'default';
  }

  async get(key: SettingKey): Promise<string | undefined> {
    return (await this.lookup(key))?.value;
  }

  /** The value and where it came from (`--output`, `CARECTL_OUTPUT`, `profile "default"`), for messages. */
  async lookup(key: SettingKey): Promise<{ value: string; source: string } | undefined> {
    const fromFlag = this.sources.flags[key];
    if (fromFlag !== undefined) return { value: fromFlag, source: `--${key}` };
    const fromEnv = this.sources.io.env[ENVIRONMENT[key]];
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: ENVIRONMENT[key] };
    const profile = await this.loadProfile();
    const bound = BOUND_TO_BASE_URL.get(key);
    const holdsAddress = bound === 'always' || (bound === 'once-set' && profile['base-url'] !== undefined);
    if (holdsAddress && !sameOrigin(profile['base-url'], await this.get('base-url'))) return undefined;
    // A stored password is the stored user's: never sent under a user name given another way.
    if (key === 'password' && (await this.get('user')) !== profile.user) return undefined;
    const value = profile[key];
    return value === undefined ? undefined : { value, source: `profile "${this.profileName}"` };
  }

  private loadProfile(): Promise<ProfileValues> {
    // Without a config file there is nothing to read: skip loading conf altogether.
    const file = configFilePath(this.sources.io.env);
    this.profile ??=
      file !== undefined && existsSync(file)
        ? import('./store.js').then(({ openConfig }) => openConfig(this.sources.io).profile(this.profileName))
        : Promise.resolve({});
    return this.profile;
  }
}
