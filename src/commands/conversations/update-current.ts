/**
 * What `conversations update` reads of a conversation before its PATCH: its tags (kept unless
 * --tags), and without --status its status and close reason, which it then keeps. The service's
 * PATCH needs a status and takes only on_hold and closing, closing with a close reason (spec:
 * PATCH body), so only a conversation already in one of those can keep its own.
 */
import type { ApiClient } from '../../api/client.js';
import { inOrder, type Scheduler } from '../../api/scheduler.js';
import { resourceByName, UPDATE_STATUSES, type Version } from '../../catalogue/index.js';
import { BadReplyError, CarectlError, InterruptedError, UsageError } from '../../core/errors.js';
import type { Throttle } from '../../http/transport.js';
import { BatchStop } from './update-results.js';

const conversations = resourceByName('conversations');

export type UpdateStatus = (typeof UPDATE_STATUSES)[number];

/** What a PATCH takes from a conversation as read: `tags` when they are kept, `status` (with its close reason) when it is. */
export interface Wanted {
  tags: boolean;
  status: boolean;
}

export interface Current {
  tags?: string[];
  /** Names the service sent with those tags, by id (the spec's single reply needs only id and url). */
  tagNames?: ReadonlyMap<string, string>;
  /** As the service sent it; undefined where it sent none (or not a string). */
  status?: string;
  /** A non-empty string the service sent; undefined otherwise (its shape is not in the spec). */
  closeReason?: string;
}

/** The status a PATCH sends and the close reason with it. */
export interface SentStatus {
  status: UpdateStatus;
  closeReason: string | undefined;
}

/** One GET of what `wanted` names (none when nothing is). */
export async function readCurrent(api: ApiClient, version: Version, id: string, wanted: Wanted, throttle?: Throttle): Promise<Current> {
  const fields = [...(wanted.tags ? ['tags'] : []), ...(wanted.status ? ['status', 'close_reason'] : [])];
  if (fields.length === 0) return {};
  const record = await api.fetchRecord(conversations, version, id, [['fields', fields.join(',')]], { ...(throttle && { throttle }) });
  const { status, close_reason: closeReason } = record;
  return {
    ...(wanted.tags && { tags: tagIdsOf(id, record.tags), tagNames: namesOf(record.tags as Array<{ id: string; name?: unknown }>) }),
    ...(typeof status === 'string' && { status }),
    ...(typeof closeReason === 'string' && closeReason.trim() !== '' && { closeReason }),
  };
}

/** The current tags, as ids (the single reply carries {id, url} references). */
function tagIdsOf(id: string, tags: unknown): string[] {
  // tag_ids replaces the whole list: guessing at a reply we cannot read would wipe the tags.
  const usable = Array.isArray(tags) && tags.every((tag) => typeof (tag as { id?: unknown } | null)?.id === 'string' && (tag as { id: string }).id !== '');
  if (!usable) {
    throw new BadReplyError(
      `the service sent no usable tags list for conversation ${id} (tags: ${describeValue(tags)}); nothing was sent, so its tags are kept: set the list explicitly with --tags LIST`,
    );
  }
  return (tags as Array<{ id: string }>).map((tag) => tag.id);
}

function namesOf(tags: ReadonlyArray<{ id: string; name?: unknown }>): ReadonlyMap<string, string> {
  return new Map(tags.flatMap((tag) => (typeof tag.name === 'string' && tag.name !== '' ? [[tag.id, tag.name] as const] : [])));
}

/** A short description of an unexpected value, for messages (never the whole value). */
function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list with entries that have no string id';
  return `a ${typeof value}`;
}

/** Without --status: the status a conversation keeps, with --close-reason or else its own, or why it cannot keep one. */
export function keptStatus(current: Current, closeReason: string | undefined): SentStatus | { refused: string } {
  const status = UPDATE_STATUSES.find((candidate) => candidate === current.status);
  if (status === undefined) return { refused: current.status === undefined ? 'has no status carectl could read' : `is ${current.status}` };
  const sent = closeReason ?? (status === 'closing' ? current.closeReason : undefined);
  if (status === 'closing' && sent === undefined) return { refused: 'is closing with no close reason carectl could read (--close-reason R gives one)' };
  return { status, closeReason: sent };
}

/** How many conversations the exit-2 message names. */
const NAMED_UNKEPT = 5;

/**
 * Without --status, every id's status is read first, and one that cannot be kept is exit 2 with
 * nothing sent (what exit 2 promises a script), naming them. An id that cannot be read is left
 * to its own row (its PATCH reads it again); a service unreachable for the reads stops `stop`
 * before any id, so every id comes as a row (as does one stopped already).
 */
export async function checkKeptStatuses(
  api: ApiClient,
  version: Version,
  ids: readonly string[],
  closeReason: string | undefined,
  scheduler: Scheduler,
  stop: BatchStop,
  signal: AbortSignal,
): Promise<void> {
  // Stopped already: the tags list could not be read.
  if (stop.reason !== undefined) return;
  const reads = new BatchStop();
  const unkept: string[] = [];
  const read = (id: string, throttle: Throttle | undefined): Promise<Current | undefined> =>
    readCurrent(api, version, id, { tags: false, status: true }, throttle).then(
      (current) => (reads.see(undefined), current),
      (err: unknown) => {
        if (!(err instanceof CarectlError) || err instanceof InterruptedError) throw err;
        reads.see(err);
        return undefined;
      },
    );
  await inOrder(
    scheduler,
    ids,
    async (id, slot) => ({ id, current: await reads.admit(() => read(id, slot.throttle), signal) }),
    ({ id, current }) => {
      const kept = current && keptStatus(current, closeReason);
      if (kept && 'refused' in kept) unkept.push(`${id} ${kept.refused}`);
      return Promise.resolve();
    },
    { stop: signal },
  );
  if (signal.aborted) throw new InterruptedError('interrupted while the conversations were read: nothing was sent');
  if (reads.reason !== undefined && reads.cause) return stop.nothingSent(`the conversations could not be read: ${reads.reason}`, reads.cause);
  if (unkept.length === 0) return;
  const named = unkept.slice(0, NAMED_UNKEPT).join(', ') + (unkept.length > NAMED_UNKEPT ? ` and ${unkept.length - NAMED_UNKEPT} more` : '');
  throw new UsageError(
    `--status not given: ${named}; only a conversation already ${UPDATE_STATUSES.join(' or ')} keeps its status (the service sets no other): give --status on_hold, or --status closing --close-reason R; nothing was sent`,
  );
}
