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
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { UsageError } from './errors.js';
import type { Io } from './io.js';

export const SETTING_KEYS = ['base-url', 'user', 'password', 'output', 'api-version'] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

export const ENVIRONMENT: Record<SettingKey, string> = {
  'base-url': 'CARECTL_BASE_URL',
  user: 'CARECTL_USER',
  password: 'CARECTL_PASSWORD',
  output: 'CARECTL_OUTPUT',
  'api-version': 'CARECTL_API_VERSION',
};

export type ProfileValues = Partial<Record<SettingKey, string>>;

const CREDENTIAL_KEYS: ReadonlySet<SettingKey> = new Set(['user', 'password']);

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
    if (CREDENTIAL_KEYS.has(key) && !sameOrigin(profile['base-url'], await this.get('base-url'))) return undefined;
    // A stored password is the stored user's: never sent under a user name given another way.
    if (key === 'password' && (await this.get('user')) !== profile.user) return undefined;
    const value = profile[key];
    return value === undefined ? undefined : { value, source: `profile "${this.profileName}"` };
  }

  private loadProfile(): Promise<ProfileValues> {
    // Without a config file there is nothing to read: skip loading conf altogether.
    this.profile ??= existsSync(configFilePath(this.sources.io.env))
      ? import('./config/store.js').then(({ openConfig }) => openConfig(this.sources.io).profile(this.profileName))
      : Promise.resolve({});
    return this.profile;
  }
}

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

/**
 * Credentials go over plain http only to this machine, unless the user insists: a password in
 * clear text across a network is the kind of mistake a tool should refuse to make quietly.
 * `source` names where the address came from in messages (`--base-url`, `CARECTL_BASE_URL` …).
 */
export function checkBaseUrl(text: string, insecureHttp: boolean, source = '--base-url'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${source}: "${text}" is not a URL; use https://host[/path]`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${source}: "${text}" must use https:// (or http:// on loopback)`);
  if (url.username || url.password) throw new UsageError(`${source}: put credentials in CARECTL_USER/CARECTL_PASSWORD or \`carectl login\`, not in the URL`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !insecureHttp) {
    throw new UsageError(`${source}: refusing plain http to ${url.host}: credentials would cross the network unencrypted; use https:// or pass --insecure-http`);
  }
  if (url.search || url.hash) throw new UsageError(`${source}: give the address without a query or fragment`);
  if (/\/(v1(\.\d)?|api\/1)\/?$/.test(url.pathname)) {
    throw new UsageError(`${source}: give the address without a version segment (not ${url.pathname.replace(/\/$/, '')}); carectl adds it per resource`);
  }
  return url;
}

/** Whether two addresses share scheme, host and port (false when either is missing or not a URL). */
export function sameOrigin(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  try {
    const origin = new URL(a).origin;
    return origin !== 'null' && origin === new URL(b).origin;
  } catch {
    return false;
  }
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
