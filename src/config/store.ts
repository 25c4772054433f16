/**
 * The profile file: `$XDG_CONFIG_HOME/carectl/config.json` (default `~/.config/carectl/`), a
 * JSON object `{profiles: {<name>: {base-url, annotations-url, user, password, output, api-version, parallel}}}`.
 *
 * It holds a password, so the folder is 0700 and the file 0600 whatever the umask; a looser one
 * is refused or tightened as permissions.ts says. Reading never writes: a missing file is an
 * empty configuration, and a corrupt or invalid file is a UsageError naming the path, left as it
 * is for the user to repair. Reading is JSON.parse and a check of the keys carectl knows
 * (checkConfig); conf, with ajv ~200 KB of bundle, loads only for a write (issue 47: a logged-in
 * lookup paid ~45 ms for it).
 *
 * Writers take a lock beside the file (lock.ts) around read-modify-write, so carectl runs that
 * change the file at once keep each other's changes; conf writes it atomically, schema-checked.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import type { default as Conf, Schema } from 'conf';
import { CarectlError, UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { FORMATS } from '../output/types.js';
import { VERSIONS } from '../catalogue/index.js';
import type { ProfileValues, SettingKey } from './keys.js';
import { CONFIG_FILE_NAME, PROFILE_NAME, checkProfileName, requireConfigDirectory } from './paths.js';
import { withLock } from './lock.js';
import { refuseExposedPassword, refuseWritableByOthers } from './permissions.js';

interface ConfigData {
  profiles?: Record<string, ProfileValues>;
}

export interface ConfigStore {
  /** The file's absolute path (it may not exist yet). */
  readonly path: string;
  /** The stored values of one profile ({} when the file or the profile does not exist). */
  profile(name: string): Promise<ProfileValues>;
  /** Every profile by name. */
  list(): Promise<Record<string, ProfileValues>>;
  /**
   * Stores values in a profile (creating file, folder and profile as needed); a key given as
   * undefined is removed in the same write. Given a function, it is called with the profile's
   * stored values, read under the write lock, and answers the values to store: a change that
   * depends on what is stored sees what another carectl run stored just before.
   */
  set(name: string, values: ProfileValues | ((stored: ProfileValues) => ProfileValues)): Promise<void>;
  /** Removes keys from a profile (under the write lock); answers which of them were stored. */
  unset(name: string, keys: readonly SettingKey[]): Promise<SettingKey[]>;
}

const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

const PROFILE_PROPERTIES = {
  'base-url': { type: 'string', minLength: 1 },
  user: { type: 'string', minLength: 1 },
  password: { type: 'string', minLength: 1 },
  output: { enum: [...FORMATS] },
  'api-version': { enum: [...VERSIONS] },
  'annotations-url': { type: 'string', minLength: 1 },
  // A number as text, checked (1-32) where it is used, naming the profile.
  parallel: { type: 'string', pattern: '^[0-9]+$' },
} satisfies Record<SettingKey, ValueRule>;

/** Unknown keys are errors rather than silently ignored typos (`baseurl`). */
const SCHEMA: Schema<ConfigData> = {
  profiles: {
    type: 'object',
    propertyNames: { pattern: PROFILE_NAME.source },
    additionalProperties: { type: 'object', additionalProperties: false, properties: PROFILE_PROPERTIES },
  },
};

export function openConfig(io: Io): ConfigStore {
  return new FileConfigStore(requireConfigDirectory(io.env), io.signal);
}

class FileConfigStore implements ConfigStore {
  readonly path: string;

  constructor(
    private readonly folder: string,
    private readonly signal: AbortSignal,
  ) {
    this.path = path.join(folder, CONFIG_FILE_NAME);
  }

  profile(name: string): Promise<ProfileValues> {
    return settle(() => {
      checkProfileName(name);
      return { ...this.read().profiles?.[name] };
    });
  }

  list(): Promise<Record<string, ProfileValues>> {
    return settle(() => ({ ...this.read().profiles }));
  }

  async set(name: string, values: ProfileValues | ((stored: ProfileValues) => ProfileValues)): Promise<void> {
    checkProfileName(name);
    await this.update((profiles) => {
      const changes = typeof values === 'function' ? values({ ...profiles[name] }) : values;
      const profile: ProfileValues = { ...profiles[name], ...changes };
      for (const key of Object.keys(profile) as SettingKey[]) if (profile[key] === undefined) delete profile[key];
      if (Object.keys(profile).length === 0) delete profiles[name];
      else profiles[name] = profile;
    });
  }

  async unset(name: string, keys: readonly SettingKey[]): Promise<SettingKey[]> {
    checkProfileName(name);
    // No file: nothing to remove, and the file is not created.
    if (!existsSync(this.path)) return [];
    let removed: SettingKey[] = [];
    await this.update((profiles) => {
      const profile: ProfileValues = { ...profiles[name] };
      removed = keys.filter((key) => profile[key] !== undefined);
      for (const key of removed) delete profile[key];
      if (Object.keys(profile).length === 0) delete profiles[name];
      else profiles[name] = profile;
    });
    return removed;
  }

  private read(): ConfigData {
    // existsSync is false for a path it cannot stat (a symlink loop): refuseWritableByOthers says why.
    if (!existsSync(this.path) && !lstatOk(this.path)) return {};
    refuseWritableByOthers(this.folder, 'folder');
    const stats = refuseWritableByOthers(this.path, 'file');
    const data = readConfig(this.path);
    refuseExposedPassword(this.path, stats, data.profiles);
    return data;
  }

  /**
   * Read-modify-write under the lock: the file is read after the lock is taken and written before
   * it is released. A change that changes nothing writes nothing. conf is set up (and its schema
   * compiled, the slow part) before the lock, so the lock is held for milliseconds.
   */
  private async update(change: (profiles: Record<string, ProfileValues>) => void): Promise<void> {
    this.prepareFolder();
    this.tightenFile();
    // A broken file is named as a read names it, before conf's own words for the same fault.
    if (existsSync(this.path)) readConfig(this.path);
    const conf = await this.open();
    await withLock(this.path, { signal: this.signal }, () => {
      // conf reads and checks the file again on each read of store: what is there now
      const data = structuredClone(readStore(conf, this.path));
      const profiles = structuredClone({ ...data.profiles });
      change(profiles);
      if (isDeepStrictEqual(profiles, { ...data.profiles })) return;
      try {
        // validated against the schema, then written atomically with FILE_MODE
        conf.store = { ...data, profiles };
      } catch (err) {
        // The disk's failure (ENOSPC, EIO) is no mistake in the command line: exit 1.
        const Failure = (err as NodeJS.ErrnoException).code === undefined ? UsageError : CarectlError;
        throw new Failure(`cannot write ${this.path}: ${describe(err)}`);
      }
    });
  }

  /**
   * The folder is 0700 and an existing file 0600 before anything is written, even when they
   * existed before or the umask would loosen them. conf's atomic write sets the file's mode, but
   * its other writes (under a Snap, where SNAP is set) keep an existing file's mode. The folder
   * comes first: the lock file is made in it. A folder or file that others can write is refused
   * rather than tightened (permissions.ts): what it holds may not be the user's.
   */
  private prepareFolder(): void {
    this.prepare(() => {
      mkdirSync(path.dirname(this.folder), { recursive: true });
      mkdirSync(this.folder, { recursive: true, mode: FOLDER_MODE });
    });
    refuseWritableByOthers(this.folder, 'folder');
    this.prepare(() => {
      if ((statSync(this.folder).mode & 0o777) !== FOLDER_MODE) chmodSync(this.folder, FOLDER_MODE);
    });
  }

  private tightenFile(): void {
    refuseWritableByOthers(this.path, 'file');
    this.prepare(() => {
      if (existsSync(this.path) && (statSync(this.path).mode & 0o777) !== FILE_MODE) chmodSync(this.path, FILE_MODE);
    });
  }

  private prepare(step: () => void): void {
    try {
      step();
    } catch (err) {
      throw new UsageError(`cannot prepare ${this.path}: ${describe(err)}`);
    }
  }

  /** conf reads and schema-checks the file on opening; it writes nothing when the file is valid. */
  private async open(): Promise<Conf<ConfigData>> {
    const { default: Conf } = await importConf();
    try {
      return new Conf<ConfigData>({
        cwd: this.folder,
        // conf appends the extension itself
        configName: path.basename(CONFIG_FILE_NAME, '.json'),
        schema: SCHEMA,
        rootSchema: { additionalProperties: false },
        clearInvalidConfig: false,
        accessPropertiesByDotNotation: false,
        configFileMode: FILE_MODE,
      });
    } catch (err) {
      throw invalidFile(this.path, err);
    }
  }
}

/** A read's answer or its error as a promise, as the interface's callers take both. */
const settle = <T>(read: () => T): Promise<T> => new Promise((resolve) => resolve(read()));

/** The file's content, parsed and checked as conf's schema would on a write. */
function readConfig(file: string): ConfigData {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw invalidFile(file, err);
  }
  const fault = configFault(data);
  if (fault !== undefined) throw invalidFile(file, new Error(`Config schema violation: ${fault}`));
  return data as ConfigData;
}

/** The first way the data breaks SCHEMA, named by its path (never by a value: it may be the password). */
function configFault(data: unknown): string | undefined {
  if (!isObject(data)) return 'the file is not a JSON object';
  if (Object.keys(data).some((key) => key !== 'profiles')) return 'the top level takes only profiles';
  const { profiles } = data;
  if (profiles === undefined) return undefined;
  if (!isObject(profiles)) return '`profiles` must be an object';
  for (const [name, profile] of Object.entries(profiles)) {
    if (!PROFILE_NAME.test(name)) return `\`profiles\` holds "${name}", which is not a profile name`;
    if (!isObject(profile)) return `\`profiles/${name}\` must be an object`;
    for (const [key, value] of Object.entries(profile)) {
      const rule: ValueRule | undefined = Object.hasOwn(PROFILE_PROPERTIES, key) ? PROFILE_PROPERTIES[key as SettingKey] : undefined;
      if (rule === undefined) return `\`profiles/${name}\` must NOT have additional properties`;
      const fault = valueFault(rule, value);
      if (fault !== undefined) return `\`profiles/${name}/${key}\` ${fault}`;
    }
  }
  return undefined;
}

type ValueRule = { type: 'string'; minLength?: number; pattern?: string } | { enum: readonly string[] };

function valueFault(rule: ValueRule, value: unknown): string | undefined {
  if ('enum' in rule) return rule.enum.includes(value as string) ? undefined : `must be one of ${rule.enum.join(', ')}`;
  if (typeof value !== 'string') return 'must be string';
  if (value.length < (rule.minLength ?? 0)) return 'must not be empty';
  if (rule.pattern !== undefined && !new RegExp(rule.pattern).test(value)) return `must match ${rule.pattern}`;
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** What conf reads from the file now (the getter reads and checks it each time). */
function readStore(conf: Conf<ConfigData>, file: string): ConfigData {
  try {
    return conf.store;
  } catch (err) {
    throw invalidFile(file, err);
  }
}

function invalidFile(file: string, err: unknown): UsageError {
  return new UsageError(`${file}: ${describe(err)}${unknownKeys(file)}; fix or remove the file (carectl leaves it as it is)`);
}

/**
 * conf, without the signal handlers its atomic writer's dependency (when-exit) installs when
 * loaded: on any signal they re-send it to the process, which carectl's stopper would count as
 * a second Ctrl-C and end at once, without the clean stop's message (a report's id, a --resume
 * token). They only clean up temporary files of unfinished writes, and conf writes synchronously.
 */
async function importConf(): Promise<typeof import('conf')> {
  const signals = Object.keys(constants.signals) as NodeJS.Signals[];
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const conf = await import('conf');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)?.has(listener)) process.off(signal, listener);
  }
  return conf;
}

/**
 * The schema's "must NOT have additional properties" does not say which: name the unknown keys
 * (never a value, which may be the password), with the keys a profile takes.
 */
function unknownKeys(file: string): string {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return '';
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return '';
  const unknown = Object.keys(data)
    .filter((key) => key !== 'profiles')
    .map((key) => `${key} (top level)`);
  const profiles = (data as ConfigData).profiles;
  if (profiles !== null && typeof profiles === 'object' && !Array.isArray(profiles)) {
    for (const [name, profile] of Object.entries(profiles)) {
      if (profile === null || typeof profile !== 'object') continue;
      for (const key of Object.keys(profile)) if (!(key in PROFILE_PROPERTIES)) unknown.push(`${key} (profile "${name}")`);
    }
  }
  if (unknown.length === 0) return '';
  return ` (unknown: ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}; a profile takes ${Object.keys(PROFILE_PROPERTIES).join(', ')})`;
}

/**
 * A reason without the file's content: V8's JSON errors quote the text around the fault, and
 * that text may be the password.
 */
function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'SyntaxError') {
    const position = /position (\d+)/.exec(e.message ?? '');
    return `not valid JSON${position ? ` (at character ${position[1]})` : ''}`;
  }
  const message = e?.message ?? String(err);
  if (message.startsWith('Config schema violation: ')) return `not a valid carectl configuration: ${message.slice('Config schema violation: '.length)}`;
  return e?.code ?? message;
}

/** Whether there is something at the path itself (a symlink, even a looping one). */
function lstatOk(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}
