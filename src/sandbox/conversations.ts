/**
 * Conversations: the list with its filters, sort, keyset paging and side loading,
 * the single GET, and the v1.3 PATCH.
 */
import { readBoolean, readList } from './collection.js';
import { actionsOf, contentOf, notesOf } from './content.js';
import { type RequestContext, ref, resourceUrl } from './context.js';
import { RANGE_MODIFIERS, type Range, type RangeModifier, formatDateTime, formatDateTimeMillis, inRange, readRange } from './dates.js';
import { type Wire, parseFields, project } from './fields.js';
import { MICROBLOG_PLACEHOLDER_DATE, MICROBLOG_PLACEHOLDER_LINK } from './fixtures.js';
import { HttpProblem, parseJsonObject } from './http.js';
import {
  type ActionRecord,
  CONVERSATION_STATUSES,
  type ContentItemRecord,
  type ConversationRecord,
  type ConversationStatus,
  type NoteRecord,
  type SandboxData,
} from './model.js';
import { firstIndex, keysetPage, skipPage } from './paging.js';

const CONVERSATION_FIELDS = [
  'channels',
  'status',
  'tags',
  'is_priority',
  'contains_private',
  'assigned_to',
  'author',
  'url',
  'handling_times',
  'close_reason',
  'reports',
  'id',
];
const INCLUDES = ['actions', 'notes', 'content'] as const;
type Include = (typeof INCLUDES)[number];
const SORT_FIELDS = ['oldest_sort_date', 'newest_sort_date'] as const;
type SortField = (typeof SORT_FIELDS)[number];
const PATCH_STATUSES: readonly ConversationStatus[] = ['on_hold', 'closing'];
/** Snapshots kept per sandbox; each is an array of references into the conversation list. */
const SNAPSHOT_CACHE_SIZE = 64;

interface SortKey {
  field: SortField;
  descending: boolean;
}

function sortMs(conversation: ConversationRecord, field: SortField): number {
  return field === 'oldest_sort_date' ? conversation.oldestMs : conversation.newestMs;
}

/**
 * Per-sandbox indexes: the conversations pre-sorted by each sort date, and the filtered, sorted
 * id lists of recent queries, so a page costs the same at any depth. Both belong to one revision
 * of the data: a live night adds conversations and moves newest_sort_date.
 */
class ConversationIndex {
  /** Per sort date, the order and the revision of the data it was made for. */
  private readonly ascending = new Map<SortField, { list: ConversationRecord[]; revision: number }>();
  private readonly snapshots = new Map<string, ConversationRecord[]>();

  constructor(private readonly data: SandboxData) {}

  /**
   * Ascending by date, ties by id. After a change the last order is sorted again with the
   * conversations added since (only ever appended) at its end: nearly in order already, which the sort passes over
   * in about one pass (a PATCH between the pages of an export, a live night).
   */
  sorted(field: SortField): ConversationRecord[] {
    const known = this.ascending.get(field);
    if (known?.revision === this.data.revision) return known.list;
    const start = known ? known.list.concat(this.data.conversations.slice(known.list.length)) : [...this.data.conversations];
    const list = start.sort((a, b) => sortMs(a, field) - sortMs(b, field) || a.seq - b.seq);
    this.ascending.set(field, { list, revision: this.data.revision });
    return list;
  }

  extremes(field: SortField): Range {
    const list = this.sorted(field);
    return { lo: sortMs(list[0]!, field), hi: sortMs(list[list.length - 1]!, field) };
  }

  snapshot(key: string, build: () => ConversationRecord[]): ConversationRecord[] {
    const cacheKey = `${this.data.revision}|${key}`;
    let list = this.snapshots.get(cacheKey);
    if (list) this.snapshots.delete(cacheKey);
    else list = build();
    this.snapshots.set(cacheKey, list);
    if (this.snapshots.size > SNAPSHOT_CACHE_SIZE) this.snapshots.delete(this.snapshots.keys().next().value!);
    return list;
  }
}

const indexes = new WeakMap<SandboxData, ConversationIndex>();
function indexOf(data: SandboxData): ConversationIndex {
  let index = indexes.get(data);
  if (!index) indexes.set(data, (index = new ConversationIndex(data)));
  return index;
}

function parseSort(query: URLSearchParams): { keys: SortKey[]; text: string } {
  const names = readList(query, 'sort');
  if (names.length === 0) return { keys: [{ field: 'oldest_sort_date', descending: false }], text: 'oldest_sort_date' };
  const keys = names.map((name) => {
    const field = name.replace(/^-/, '');
    if (!(SORT_FIELDS as readonly string[]).includes(field)) {
      throw new HttpProblem(400, `Unknown sort field '${name}'; accepted: ${SORT_FIELDS.join(', ')} (a leading - sorts descending)`);
    }
    return { field: field as SortField, descending: name.startsWith('-') };
  });
  return { keys, text: names.join(',') };
}

function parseIncludes(query: URLSearchParams): Set<Include> {
  const values = query.getAll('include');
  for (const value of values) {
    if (!(INCLUDES as readonly string[]).includes(value)) {
      throw new HttpProblem(400, `Unknown include '${value}'; accepted: ${INCLUDES.join(', ')} (repeat the parameter for several)`);
    }
  }
  return new Set(values as Include[]);
}

interface ListQuery {
  /** Every filter except the keyset side's bound on the sort field (see seek). */
  matches(conversation: ConversationRecord): boolean;
  /** The normalised filters, for the snapshot cache. */
  filterKey: string;
  sort: SortKey[];
  sortText: string;
  /**
   * One sort field: the filter's range on it (the side opposite the keyset bound). Not part of
   * `matches` nor of the snapshot: every slice of one query shares the snapshot, and a request
   * takes the part within its range by binary search, at a cost that does not grow with the list.
   */
  sortRange: Range | undefined;
  /**
   * One sort field: the request's bound on its keyset side (ascending: _gte/_gt, the lowest
   * date; descending: _lte/_lt, the highest). It is where the page starts, not a filter, so every
   * page of a query shares one snapshot and finds its start by binary search.
   */
  seek: number | undefined;
}

/** The parameters of a date field's range filter, modifiers in order. */
function rangeKeys(field: SortField, modifiers: readonly RangeModifier[] = RANGE_MODIFIERS): string[] {
  return modifiers.map((modifier) => `${field}_${modifier}`);
}

/**
 * A next_page link of a query that filters one date field and sorts by the other: its only bound
 * on the sort field is the keyset one, a datetime on the keyset side, with skip. That is not the
 * combination of the two fields that the spec forbids.
 */
function isKeysetCursor(query: URLSearchParams, key: SortKey): boolean {
  const given = rangeKeys(key.field).filter((name) => query.has(name));
  const name = `${key.field}_${key.descending ? 'lte' : 'gte'}`;
  const values = query.getAll(name);
  return query.has('skip') && given.length === 1 && given[0] === name && values.length === 1 && values[0]!.includes('T');
}

/** A range as cache-key text: bounds beyond the data's extremes are the same as none. */
function rangeKey(range: Range | undefined, extremes: Range): unknown {
  return range && [range.lo <= extremes.lo ? '' : range.lo, range.hi >= extremes.hi ? '' : range.hi];
}

/** The two filters of which one is required: is_priority, and status (one of the statuses). */
function requiredFilters(query: URLSearchParams): { priority: boolean | undefined; status: string | null } {
  const priority = readBoolean(query, 'is_priority');
  const status = query.get('status');
  if (status !== null && !(CONVERSATION_STATUSES as readonly string[]).includes(status)) {
    throw new HttpProblem(400, `Unknown status '${status}'; accepted: ${CONVERSATION_STATUSES.join(', ')}`);
  }
  if (priority === undefined && status === null) throw new HttpProblem(400, 'Either is_priority or status must be supplied');
  return { priority, status };
}

/**
 * The query taken apart: the bounds on a single sort field in the direction of the sort (the
 * paging link's seek), and the filters left.
 */
function splitSeek(query: URLSearchParams, single: SortKey | undefined): { filters: URLSearchParams; seekRange: Range | undefined } {
  const seekKeys = single ? rangeKeys(single.field, single.descending ? ['lte', 'lt'] : ['gte', 'gt']) : [];
  const filters = new URLSearchParams(query);
  const seekQuery = new URLSearchParams();
  for (const key of seekKeys) {
    for (const value of query.getAll(key)) seekQuery.append(key, value);
    filters.delete(key);
  }
  const seekRange = single && readRange(seekQuery, single.field);
  return { filters, seekRange };
}

function parseListQuery(ctx: RequestContext): ListQuery {
  const { query } = ctx;
  const data = ctx.runtime.data;
  if (query.has('queue_id') && ctx.version !== 'v1.3') throw new HttpProblem(400, 'The queue_id filter exists only in v1.3');
  const { priority, status } = requiredFilters(query);
  const sort = parseSort(query);
  const single = sort.keys.length === 1 ? sort.keys[0]! : undefined;
  // Every bound is checked; the two fields together only in a paging link's keyset form.
  if (readRange(query, 'oldest_sort_date') && readRange(query, 'newest_sort_date') && !(single && isKeysetCursor(query, single))) {
    throw new HttpProblem(400, 'oldest_sort_date cannot be combined with newest_sort_date');
  }
  const { filters, seekRange } = splitSeek(query, single);
  const oldest = readRange(filters, 'oldest_sort_date');
  const newest = readRange(filters, 'newest_sort_date');
  const containsPrivate = readBoolean(query, 'contains_private');
  const channel = query.get('channel');
  const tagName = query.get('tag');
  const tagIds = tagName === null ? undefined : new Set(data.tags.filter((tag) => tag.name === tagName).map((tag) => tag.id));
  const assignedTo = query.get('assigned_to');
  const author = query.get('author');
  const queueIds = readList(query, 'queue_id');
  const index = indexOf(data);
  const sortField = single?.field;

  return {
    matches: (conversation) =>
      (status === null || conversation.status === status) &&
      (priority === undefined || conversation.is_priority === priority) &&
      (containsPrivate === undefined || conversation.contains_private === containsPrivate) &&
      (channel === null || conversation.channel_ids.includes(channel)) &&
      (tagIds === undefined || conversation.tag_ids.some((id) => tagIds.has(id))) &&
      (assignedTo === null || conversation.assigned_to === assignedTo) &&
      (author === null || conversation.author_id === author) &&
      (queueIds.length === 0 || queueIds.includes(conversation.queue_id)) &&
      (sortField === 'oldest_sort_date' || inRange(oldest, conversation.oldestMs)) &&
      (sortField === 'newest_sort_date' || inRange(newest, conversation.newestMs)),
    filterKey: JSON.stringify([
      status,
      priority,
      containsPrivate,
      channel,
      tagName,
      assignedTo,
      author,
      [...queueIds].sort(),
      sortField === 'oldest_sort_date' ? null : rangeKey(oldest, index.extremes('oldest_sort_date')),
      sortField === 'newest_sort_date' ? null : rangeKey(newest, index.extremes('newest_sort_date')),
    ]),
    sort: sort.keys,
    sortText: sort.text,
    sortRange: sortField === 'oldest_sort_date' ? oldest : sortField === 'newest_sort_date' ? newest : undefined,
    seek: seekRange ? (single!.descending ? seekRange.hi : seekRange.lo) : undefined,
  };
}

function compareBy(keys: readonly SortKey[]) {
  return (a: ConversationRecord, b: ConversationRecord): number => {
    for (const key of keys) {
      const difference = sortMs(a, key.field) - sortMs(b, key.field);
      if (difference !== 0) return key.descending ? -difference : difference;
    }
    return a.seq - b.seq;
  };
}

/** Filtered and sorted; a descending single sort is the exact reverse of the ascending one. */
function selectConversations(data: SandboxData, query: ListQuery): ConversationRecord[] {
  const index = indexOf(data);
  const [first] = query.sort;
  const all = index.snapshot(`${query.filterKey}|${query.sortText}`, () => {
    const matching = index.sorted(first!.field).filter(query.matches);
    if (query.sort.length > 1) return matching.sort(compareBy(query.sort));
    return first!.descending ? matching.reverse() : matching;
  });
  const range = query.sortRange;
  if (!range) return all;
  const date = (c: ConversationRecord): number => sortMs(c, first!.field);
  // In sort order, the records within the range are one run: from the first inside to the first past it.
  const [inside, past] = first!.descending
    ? [(c: ConversationRecord) => date(c) <= range.hi, (c: ConversationRecord) => date(c) < range.lo]
    : [(c: ConversationRecord) => date(c) >= range.lo, (c: ConversationRecord) => date(c) > range.hi];
  return all.slice(firstIndex(all, inside), firstIndex(all, past));
}

function conversationWire(conversation: ConversationRecord, ctx: RequestContext): Wire {
  const data = ctx.runtime.data;
  return {
    id: conversation.id,
    url: resourceUrl(ctx, 'conversations', conversation.id),
    status: conversation.status,
    is_priority: conversation.is_priority,
    contains_private: conversation.contains_private,
    tags: conversation.tag_ids.map((id) => ({ ...ref(ctx, 'tags', id), name: data.byId.tags.get(id)!.name })),
    author: ref(ctx, 'authors', conversation.author_id),
    channels: conversation.channel_ids.map((id) => channelReference(ctx, id)),
    assigned_to: conversation.assigned_to === null ? null : ref(ctx, 'users', conversation.assigned_to),
    handling_times: conversation.handling_times,
    close_reason: conversation.close_reason,
    reports: `${resourceUrl(ctx, 'reports')}?channel=${conversation.channel_ids[0]}`,
  };
}

function channelReference(ctx: RequestContext, id: string): Wire {
  const channel = ctx.runtime.data.byId.channels.get(id)!;
  return { ...ref(ctx, 'channels', id), platform_id: channel.platform_id, name: channel.name };
}

/**
 * Microblog items not written through the service are restricted: fixed creation date,
 * placeholder link, and text null (the key stays, the value is unavailable) unless the channel
 * itself wrote it. imported_date/imported_delta carry the timing: on every item from v1.2, only
 * on restricted items in v1.1.
 */
function contentWire(item: ContentItemRecord, ctx: RequestContext): Wire {
  const data = ctx.runtime.data;
  const restricted = item.platform === 'microblog' && item.user_id === null;
  const user = item.user_id === null ? undefined : data.byId.users.get(item.user_id)!;
  return {
    id: item.id,
    parent: item.parent,
    type: item.type,
    platform: item.platform,
    platform_id: item.platform_id,
    is_private: item.is_private,
    is_priority: item.is_priority,
    is_by_source: item.is_by_source,
    created_date: restricted ? MICROBLOG_PLACEHOLDER_DATE : formatDateTime(item.createdMs),
    ...(restricted || ctx.version !== 'v1.1'
      ? { imported_date: formatDateTimeMillis(item.importedMs), imported_delta: Math.floor((item.importedMs - item.createdMs) / 1000) }
      : {}),
    text: restricted && !item.is_by_source ? null : item.text,
    link: restricted ? MICROBLOG_PLACEHOLDER_LINK : item.link,
    tags: item.tag_ids.map((id) => ref(ctx, 'tags', id)),
    author: ref(ctx, 'authors', item.author_id),
    channels: item.channel_ids.map((id) => channelReference(ctx, id)),
    ...(user ? { user: { ...ref(ctx, 'users', user.id), email: user.email } } : {}),
    attachments: item.attachments,
    sentiment: item.sentiment && {
      created_date: formatDateTime(item.sentiment.createdMs),
      created_by: ref(ctx, 'users', item.sentiment.created_by),
      value: item.sentiment.value,
    },
  };
}

/** Notes and actions (shape of the sandbox's choice): their fields, created_date and the user as {id,url}. */
function byUserWire({ createdMs, user_id: userId, ...rest }: NoteRecord | ActionRecord, ctx: RequestContext): Wire {
  return { ...rest, created_date: formatDateTime(createdMs), user: ref(ctx, 'users', userId) };
}

/**
 * Side loading: top-level content/notes/actions arrays for the given conversations, and their
 * ids on each conversation record (content_ids, unarchived_content_ids, context_ids; note_ids;
 * action_ids).
 */
function sideLoad(ctx: RequestContext, conversations: readonly ConversationRecord[], wires: Wire[], includes: ReadonlySet<Include>): Wire {
  const data = ctx.runtime.data;
  const extra: Record<Include, Wire[]> = { content: [], notes: [], actions: [] };
  conversations.forEach((conversation, position) => {
    const wire = wires[position]!;
    if (includes.has('content')) {
      const items = contentOf(data, conversation);
      wire['content_ids'] = items.map((item) => item.id);
      wire['unarchived_content_ids'] = conversation.status === 'archived' ? [] : items.map((item) => item.id);
      wire['context_ids'] = [];
      extra.content.push(...items.map((item) => contentWire(item, ctx)));
    }
    if (includes.has('notes')) {
      const notes = notesOf(data, conversation);
      wire['note_ids'] = notes.map((note) => note.id);
      extra.notes.push(...notes.map((note) => byUserWire(note, ctx)));
    }
    if (includes.has('actions')) {
      const actions = actionsOf(data, conversation);
      wire['action_ids'] = actions.map((action) => action.id);
      extra.actions.push(...actions.map((action) => byUserWire(action, ctx)));
    }
  });
  return Object.fromEntries(INCLUDES.filter((name) => includes.has(name)).map((name) => [name, extra[name]]));
}

export function listConversations(ctx: RequestContext): unknown {
  const query = parseListQuery(ctx);
  const fields = parseFields(ctx.query, CONVERSATION_FIELDS, 'conversations');
  const includes = parseIncludes(ctx.query);
  const all = selectConversations(ctx.runtime.data, query);
  const url = resourceUrl(ctx, 'conversations');
  const [first, ...more] = query.sort;
  const page =
    more.length > 0
      ? skipPage(ctx, all, url, { withoutLinks: true })
      : keysetPage(ctx, all, url, {
          field: first!.field,
          descending: first!.descending,
          sortText: query.sortText,
          dateOf: (c) => sortMs(c, first!.field),
          seek: query.seek,
        });
  const wires = page.items.map((conversation) => project(conversationWire(conversation, ctx), fields));
  return { conversations: wires, paging: page.paging, ...sideLoad(ctx, page.items, wires, includes) };
}

function findConversation(ctx: RequestContext, id: string): ConversationRecord {
  const conversation = ctx.runtime.data.byId.conversations.get(id);
  if (!conversation) throw new HttpProblem(404, `No conversation with id '${id}'`);
  return conversation;
}

/** The single reply, shaped by fields and include (also the PATCH reply). */
function singleShaper(ctx: RequestContext): (conversation: ConversationRecord) => unknown {
  const fields = parseFields(ctx.query, CONVERSATION_FIELDS, 'conversations');
  const includes = parseIncludes(ctx.query);
  return (conversation) => {
    const wire = project(conversationWire(conversation, ctx), fields);
    return { conversation: wire, ...sideLoad(ctx, [conversation], [wire], includes) };
  };
}

export function getConversation(ctx: RequestContext, id: string): unknown {
  const shape = singleShaper(ctx);
  return shape(findConversation(ctx, id));
}

function readTagIds(data: SandboxData, input: Record<string, unknown>): string[] {
  // The spec's table names the key tag_ids; its example sends `tags`: both are accepted.
  const value = input['tag_ids'] ?? input['tags'];
  if (value === undefined) throw new HttpProblem(400, 'tag_ids is required: the complete new list of active tag ids ([] clears them)');
  if (!Array.isArray(value)) throw new HttpProblem(400, 'tag_ids must be an array of tag ids');
  const ids = value.map((id: unknown) => {
    if (typeof id !== 'string' && typeof id !== 'number') throw new HttpProblem(400, `tag_ids must hold tag ids, got ${JSON.stringify(id)}`);
    const tag = data.byId.tags.get(String(id));
    if (!tag) throw new HttpProblem(400, `Unknown tag id ${id}`);
    if (!tag.is_active) throw new HttpProblem(400, `Tag ${id} is inactive`);
    return tag.id;
  });
  return [...new Set(ids)];
}

/** PATCH (v1.3): status on_hold|closing, tag list replaced, close_reason required with closing. */
export function patchConversation(ctx: RequestContext, id: string, body: string): unknown {
  const data = ctx.runtime.data;
  const shape = singleShaper(ctx);
  const conversation = findConversation(ctx, id);
  const locked = conversation.channel_ids.find((channelId) => !data.byId.channels.get(channelId)!.can_manage_conversations);
  if (locked !== undefined) {
    throw new HttpProblem(403, `The API key lacks the Manage Conversations permission for channel ${locked}`);
  }
  const input = parseJsonObject(body);
  const status = input['status'];
  if (!PATCH_STATUSES.includes(status as ConversationStatus)) {
    throw new HttpProblem(400, `status must be one of: ${PATCH_STATUSES.join(', ')}`);
  }
  const tagIds = readTagIds(data, input);
  const closeReason = input['close_reason'];
  if (status === 'closing' && (closeReason === undefined || closeReason === null)) {
    throw new HttpProblem(400, 'close_reason is required when status is closing');
  }
  if (closeReason !== undefined && closeReason !== null && !data.closeReasons.includes(closeReason as string)) {
    throw new HttpProblem(400, `Unknown close reason '${String(closeReason)}'; accepted: ${data.closeReasons.join(', ')}`);
  }
  conversation.status = status as ConversationStatus;
  conversation.tag_ids = tagIds;
  if (typeof closeReason === 'string') conversation.close_reason = closeReason;
  data.revision++;
  return shape(conversation);
}
