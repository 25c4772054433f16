/**
 * What the completion scripts offer from the service (`completion.json` beside the config file),
 * by profile and base address: the names and ids of tags and channels as last read, and the close
 * reasons the service accepted. It sits beside the config file, not under XDG_CACHE_HOME, because
 * the close reasons are not re-readable from the service: losing them loses what a TAB can offer.
 *
 * Every word is checked by `offerable` when written and again when read (the file may have been
 * written by an older carectl, or by hand).
 *
 * A cache: a file that cannot be read is taken as empty (and replaced by the next write), never a
 * failure. Written under the lock like the config file: to a temporary file renamed into place,
 * mode 0600 in a 0700 folder.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Io } from '../core/io.js';
import { offerable } from '../core/shell.js';
import { withLock } from './lock.js';
import { requireConfigDirectory } from './paths.js';
import { irregularFile, writeAtomically } from './report-ledger.js';

export const COMPLETION_FILE_NAME = 'completion.json';
/** A list older than this is read again (and offered as it is while that read is under way). */
export const FRESH_FOR_MS = 10 * 60_000;
/** Close reasons kept per profile and address, the newest. */
const MAX_REASONS = 50;
/** A read started in the background is not started again for this long (unless it ends first). */
export const FILL_FOR_MS = 60_000;

/** Whose words: a profile at a base address. */
export interface CacheScope {
  profile: string;
  base: string;
}

export interface CachedWords {
  words: string[];
  /** Read within FRESH_FOR_MS. */
  fresh: boolean;
}

interface ScopeData {
  /** By list name ('names tags'): when read (ms since the epoch) and the words. */
  lists: Record<string, { at: number; words: string[] }>;
  closeReasons: string[];
  /** By list name: when a read in the background began. */
  filling: Record<string, number>;
}

export interface CompletionCache {
  readonly path: string;
  words(scope: CacheScope, list: string): CachedWords | undefined;
  storeWords(scope: CacheScope, list: string, words: readonly string[]): Promise<void>;
  closeReasons(scope: CacheScope): string[];
  /** A close reason the service accepted, newest last. */
  addCloseReason(scope: CacheScope, reason: string): Promise<void>;
  /** Whether a read of `list` in the background may begin now (none began within FILL_FOR_MS); if so, it has. */
  startFill(scope: CacheScope, list: string): Promise<boolean>;
}

/**
 * `createFolder`: whether a write may make carectl's folder. A TAB may; an update run from cron with
 * its credentials in the environment leaves a home without one as it found it (the close reason is
 * then not kept).
 */
export function openCompletionCache(io: Pick<Io, 'env' | 'now' | 'signal'> & { createFolder: boolean }): CompletionCache {
  const folder = requireConfigDirectory(io.env);
  const path = join(folder, COMPLETION_FILE_NAME);
  const key = (scope: CacheScope): string => JSON.stringify([scope.profile, scope.base]);
  const update = async (scope: CacheScope, change: (data: ScopeData) => boolean | void): Promise<boolean> => {
    // A cache that is not a regular file is ignored, never replaced.
    if ((!existsSync(folder) && !io.createFolder) || irregularFile(path) !== undefined) return false;
    mkdirSync(dirname(folder), { recursive: true });
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    return withLock(path, { signal: io.signal }, () => {
      const all = readAll(path);
      const data = scopeData(all[key(scope)]);
      if (change(data) === false) return false;
      all[key(scope)] = data;
      writeAtomically(path, JSON.stringify({ scopes: all }) + '\n');
      return true;
    });
  };
  return {
    path,
    words: (scope, list) => {
      const entry = scopeData(readAll(path)[key(scope)]).lists[list];
      if (!entry || typeof entry.at !== 'number' || !isWords(entry.words)) return undefined;
      const age = io.now() - entry.at;
      return { words: entry.words.filter(offerable), fresh: age >= 0 && age < FRESH_FOR_MS };
    },
    storeWords: async (scope, list, words) => {
      await update(scope, (data) => {
        data.lists[list] = { at: io.now(), words: words.filter(offerable) };
        delete data.filling[list];
      });
    },
    closeReasons: (scope) => scopeData(readAll(path)[key(scope)]).closeReasons.filter(offerable),
    addCloseReason: async (scope, reason) => {
      if (!offerable(reason)) return;
      await update(scope, (data) => {
        data.closeReasons = [...data.closeReasons.filter((one) => one !== reason), reason].slice(-MAX_REASONS);
      });
    },
    startFill: (scope, list) =>
      update(scope, (data) => {
        const began = data.filling[list];
        const age = typeof began === 'number' ? io.now() - began : Infinity;
        if (age >= 0 && age < FILL_FOR_MS) return false;
        data.filling[list] = io.now();
      }),
  };
}

function readAll(path: string): Record<string, unknown> {
  if (irregularFile(path) !== undefined) return {};
  try {
    const scopes = (JSON.parse(readFileSync(path, 'utf8')) as { scopes?: unknown } | null)?.scopes;
    return isObject(scopes) ? scopes : {};
  } catch {
    return {};
  }
}

/** A scope's data as far as it is well formed; the rest as if never written. */
function scopeData(value: unknown): ScopeData {
  const data = isObject(value) ? value : {};
  return {
    lists: isObject(data.lists) ? (data.lists as ScopeData['lists']) : {},
    closeReasons: isWords(data.closeReasons) ? data.closeReasons : [],
    filling: isObject(data.filling) ? (data.filling as ScopeData['filling']) : {},
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isWords(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((word) => typeof word === 'string');
}
