/**
 * The reports this carectl created (`reports.json` beside the config file), for `reports create
 * --reuse`: by profile and base address, the parameters of each report and its id, newest last.
 *
 * The service's report record names no format or date_type, so carectl cannot tell from it alone
 * which report a re-run would make again: this ledger can. It is a cache: a file that cannot be
 * read is taken as empty (and replaced by the next write), never a failure of the command.
 * Written like the config file: under its lock, to a temporary file renamed into place (a reader
 * never sees half of it), mode 0600 in a 0700 folder; bounded to the newest MAX_ENTRIES.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { Io } from '../core/io.js';
import { withLock } from './lock.js';
import { requireConfigDirectory } from './paths.js';
import { fileType } from './permissions.js';

export const LEDGER_FILE_NAME = 'reports.json';
/** A nightly job per profile and address for years is far fewer reuses than this. */
export const MAX_ENTRIES = 500;

export interface LedgerEntry {
  /** The profile that created the report. */
  profile: string;
  /** The base address it was created at (its href). */
  base: string;
  /** The parameters the report was made from, in one canonical text (reportKey). */
  key: string;
  /** '' for a POST whose outcome is unknown: a report may exist, to be looked for. */
  id: string;
  /** With id '': the ids the target's list held before that POST (absent: not known), none of which it made. */
  before?: string[];
}

export interface ReportLedger {
  readonly path: string;
  /** The entries of these parameters, newest first (id '' where a POST's outcome is unknown). */
  find(where: Omit<LedgerEntry, 'id' | 'before'>): LedgerEntry[];
  /** The ids created by this profile at this address, whatever their parameters. */
  known(where: Pick<LedgerEntry, 'profile' | 'base'>): Set<string>;
  /**
   * Adds (or moves to the newest place) an entry, in place of an unknown outcome ('') with the
   * same parameters; throws the system's error when it cannot be written.
   */
  record(entry: LedgerEntry): Promise<void>;
  /** Makes the ledger's folder (mode 0700), for a lock beside it. */
  makeFolder(): void;
}

/** The parameters as one text: the same parameters give the same text, whatever their order. */
export function reportKey(parameters: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(parameters)
      .sort()
      .map((name) => [name, parameters[name] ?? null]),
  );
}

export function openReportLedger(io: Io): ReportLedger {
  const folder = requireConfigDirectory(io.env);
  const path = join(folder, LEDGER_FILE_NAME);
  refuseIrregular(path);
  const same = (a: Pick<LedgerEntry, 'profile' | 'base'>, b: Pick<LedgerEntry, 'profile' | 'base'>): boolean => a.profile === b.profile && a.base === b.base;
  const makeFolder = (): void => {
    mkdirSync(dirname(folder), { recursive: true });
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  };
  return {
    path,
    makeFolder,
    find: (where) =>
      readEntries(path)
        .filter((entry) => same(entry, where) && entry.key === where.key)
        .reverse(),
    known: (where) =>
      new Set(
        readEntries(path)
          .filter((entry) => same(entry, where))
          .map((entry) => entry.id),
      ),
    record: async (entry) => {
      makeFolder();
      await withLock(path, { signal: io.signal }, () => {
        const kept = readEntries(path).filter((one) => !(same(one, entry) && (one.id === entry.id || (one.key === entry.key && one.id === ''))));
        writeAtomically(path, JSON.stringify({ reports: [...kept, entry].slice(-MAX_ENTRIES) }, null, 1) + '\n');
      });
    },
  };
}

/**
 * What is at `path` when it is there but not a regular file (a FIFO would block the read, a device
 * never end it, a rename would replace it), found without opening it; undefined otherwise.
 */
export function irregularFile(path: string): string | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? undefined : fileType(stats);
  } catch {
    return undefined; // not there (or not to be looked at): read as empty, as before
  }
}

/** The ledger decides what is sent: one that is not a regular file is refused, not taken as empty. */
function refuseIrregular(path: string): void {
  const kind = irregularFile(path);
  if (kind !== undefined) throw new UsageError(`${path} is not a regular file (${kind}); carectl keeps the reports --reuse picks up only in one: move it away`);
}

function readEntries(path: string): LedgerEntry[] {
  refuseIrregular(path);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
  const list = (data as { reports?: unknown } | null)?.reports;
  return Array.isArray(list) ? list.filter(isEntry) : [];
}

function isEntry(value: unknown): value is LedgerEntry {
  const entry = value as Partial<LedgerEntry> | null;
  const before = entry?.before;
  const listed = before === undefined || (Array.isArray(before) && before.every((id) => typeof id === 'string'));
  return listed && ['profile', 'base', 'key', 'id'].every((name) => typeof entry?.[name as keyof LedgerEntry] === 'string');
}

/** Writes the whole file or nothing: a temporary file of mode 0600 renamed into place. */
export function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}`;
  try {
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    // The mode given at creation is narrowed by the umask only: 0600 is what it is either way.
    if ((statSync(temporary).mode & 0o777) !== 0o600) chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}
