/**
 * The API's resources as data. Everything a command needs to know about a resource (where it
 * lives, in which versions, how replies are wrapped, which fields and filters it has, how it
 * pages, what a table shows) is here; src/commands/ turns each entry into commands.
 */
import { REPORT_STATE_COLUMN } from './report-state.js';
import type { RangeFilter, Reference, ResourceSpec, Version } from './types.js';

export const CONVERSATION_STATUSES = ['archived', 'on_hold', 'closing', 'closed', 'pending_approval', 'unread', 'assigned'] as const;
export const CONVERSATION_INCLUDES = ['content', 'notes', 'actions'] as const;
export const SORT_VALUES = ['oldest_sort_date', '-oldest_sort_date', 'newest_sort_date', '-newest_sort_date'] as const;
export const PLATFORMS = ['microblog', 'facebook', 'instagram', 'whatsapp'] as const;

/** What a description may leave out: the path and envelope follow the name, and most resources take `fields` and offer list and get. */
type ResourceInput = Omit<ResourceSpec, 'path' | 'envelope' | 'fieldsParam' | 'filters' | 'verbs'> &
  Partial<Pick<ResourceSpec, 'path' | 'fieldsParam' | 'filters' | 'verbs'>> & {
    envelope?: { list: string; single: string };
    /** Versions whose replies carry no wrapper key. */
    bareIn?: readonly Version[];
  };

function resource(input: ResourceInput): ResourceSpec {
  const { bareIn, envelope, ...rest } = input;
  return {
    path: input.name,
    fieldsParam: true,
    filters: [],
    verbs: ['list', 'get'],
    ...rest,
    envelope: { ...(envelope ?? { list: input.name, single: input.noun.replace(/ /g, '') }), ...(bareIn && { bareIn }) },
  };
}

/** The spec's channel filters take a channel id; a person may give its name. */
const CHANNEL_ID: Reference = { resource: 'channels', send: 'id' };

const range = (flag: string, param: string, help: string, more: Pick<RangeFilter, 'ops' | 'pair'> = {}): RangeFilter => ({
  kind: 'range',
  flag,
  param,
  help,
  ...more,
});

/**
 * The dotted paths inside a field, by field name, as the spec shapes it wherever it appears
 * (references {id, url}, some with a name; a content item's sentiment): what `help columns`
 * lists and completion offers for --columns. A path not listed is still taken.
 */
export const FIELD_PATHS: Readonly<Record<string, readonly string[]>> = {
  author: ['id', 'url'],
  assigned_to: ['id', 'url'],
  account: ['id', 'url'],
  channel: ['id', 'url'],
  generated_by: ['id', 'url'],
  user: ['id', 'url', 'email'],
  users: ['id', 'url'],
  tags: ['id', 'url', 'name'],
  channels: ['id', 'url', 'name', 'platform_id'],
  sentiment: ['created_date', 'created_by.id', 'created_by.url', 'value'],
};

export const RESOURCES: readonly ResourceSpec[] = [
  resource({
    name: 'authors',
    noun: 'author',
    versions: ['v1.1', 'v1.3'],
    fields: ['platform', 'platform_id', 'screen_name', 'real_name', 'location', 'website', 'description', 'profile_picture', 'profile_link'],
    defaultColumns: ['id', 'platform', 'screen_name', 'real_name', 'location'],
    paging: 'none',
    listByIds: { param: 'id', max: 50 },
    examples: {
      list: [
        'carectl authors list m:1000177 w:1000084',
        'carectl conversations list --status unread --columns author.id --no-header | sort -u | carectl authors list -',
      ],
      get: ['carectl authors get m:1000177', 'carectl authors get w:1000084 -o json'],
    },
  }),
  resource({
    name: 'conversations',
    noun: 'conversation',
    aliases: ['conv'],
    versions: ['v1.1', 'v1.2', 'v1.3'],
    fields: ['status', 'is_priority', 'contains_private', 'tags', 'author', 'channels', 'assigned_to', 'handling_times', 'close_reason'],
    sideColumns: ['content', 'content_ids', 'context_ids', 'unarchived_content_ids', 'notes', 'note_ids', 'actions', 'action_ids'],
    sideloads: [
      { key: 'content', ids: 'content_ids', parent: 'parent' },
      { key: 'notes', ids: 'note_ids' },
      { key: 'actions', ids: 'action_ids' },
    ],
    defaultColumns: ['id', 'status', 'is_priority', 'author.id', 'channels', 'tags', 'assigned_to.id'],
    paging: 'skip',
    filters: [
      {
        kind: 'enum',
        flag: 'status',
        param: 'status',
        valueName: 'status',
        values: CONVERSATION_STATUSES,
        help: 'only conversations in this status (any priority)',
      },
      { kind: 'switch', flag: 'priority', param: 'is_priority', help: 'only priority conversations', offHelp: 'only non-priority conversations' },
      range('oldest', 'oldest_sort_date', 'date of the first message (RANGE)', { pair: true }),
      range('newest', 'newest_sort_date', 'date of the last message (RANGE)', { pair: true }),
      { kind: 'text', flag: 'channel', param: 'channel', valueName: 'channel', refers: CHANNEL_ID, help: 'only this channel (name or id)' },
      {
        kind: 'text',
        flag: 'tag',
        param: 'tag',
        valueName: 'tag',
        refers: { resource: 'tags', send: 'name' },
        help: 'only conversations with this tag (name or id)',
      },
      {
        kind: 'switch',
        flag: 'private',
        param: 'contains_private',
        help: 'only conversations with private messages',
        offHelp: 'only conversations without private messages',
      },
      { kind: 'text', flag: 'assigned-to', param: 'assigned_to', valueName: 'user', help: 'only conversations assigned to this user id' },
      { kind: 'text', flag: 'author', param: 'author', valueName: 'id', help: 'only conversations of this author id' },
      {
        kind: 'text',
        flag: 'queue',
        param: 'queue_id',
        valueName: 'id',
        repeat: true,
        versions: ['v1.3'],
        help: 'only conversations in this queue (repeatable; v1.3)',
      },
      {
        kind: 'enum',
        flag: 'include',
        param: 'include',
        valueName: 'list',
        values: CONVERSATION_INCLUDES,
        repeat: true,
        onGet: true,
        help: 'side-load content, notes and/or actions',
      },
      { kind: 'enum', flag: 'sort', param: 'sort', valueName: 'field', values: SORT_VALUES, help: 'sort field; a leading - sorts descending' },
    ],
    requireOneOf: { params: ['status', 'is_priority'], union: { param: 'is_priority', values: ['true', 'false'] } },
    // A new message moves newest_sort_date forward: what an incremental list follows.
    sortDates: { param: 'sort', fields: ['oldest_sort_date', 'newest_sort_date'], default: 'oldest_sort_date', moves: 'newest_sort_date' },
    conflicts: [['oldest', 'newest']],
    examples: {
      list: [
        'carectl conversations list --status unread',
        'carectl conversations list --priority --newest 7d..today -o csv > urgent.csv',
        'carectl conversations list --status on_hold --include content -o ndjson',
        'carectl conversations list --state convs.state -o csv -O new.csv',
        'carectl conversations list --status unread --watch',
      ],
      get: ['carectl conversations get 500002', 'carectl conversations get 500002 --include content -o json'],
    },
  }),
  resource({
    name: 'channels',
    noun: 'channel',
    versions: ['v1', 'v1.1', 'v1.2', 'v1.3'],
    bareIn: ['v1'],
    fields: ['name', 'created', 'is_active', 'small_image', 'reports', 'fans', 'account', 'fb_page_url', 'type'],
    defaultColumns: ['id', 'name', 'type', 'is_active', 'account.id'],
    paging: 'none',
    names: { field: 'name' },
    filters: [
      { kind: 'text', flag: 'name', param: 'name', valueName: 'name', help: 'only channels with this name' },
      // The spec names no platforms: any name goes to the service, the usual ones are suggested.
      { kind: 'text', flag: 'type', param: 'type', valueName: 'platform', examples: PLATFORMS, help: 'only channels of this platform' },
    ],
    examples: {
      list: ['carectl channels list', 'carectl channels list --type facebook -o json'],
      get: ['carectl channels get 202', 'carectl channels get 202 --fields name,fans'],
    },
  }),
  resource({
    name: 'accounts',
    noun: 'account',
    versions: ['v1'],
    bareIn: ['v1'],
    fields: ['name', 'description', 'package', 'created_date', 'channels', 'reports'],
    defaultColumns: ['id', 'name', 'package', 'created_date'],
    paging: 'none',
    filters: [
      { kind: 'text', flag: 'id', param: 'id', valueName: 'list', repeat: true, help: 'only these account ids (comma-separated, repeatable)' },
      { kind: 'text', flag: 'name', param: 'name', valueName: 'name', help: 'only accounts with this name' },
      range('created', 'created_date', 'creation date (RANGE; the service takes no gt: bound here)', { ops: ['gte', 'lte', 'lt'] }),
    ],
    examples: {
      list: ['carectl accounts list', 'carectl accounts list --created 2024-01-01.. -o json'],
      get: ['carectl accounts get 1001', 'carectl accounts get 1001 -o json'],
    },
  }),
  resource({
    name: 'teams',
    noun: 'team',
    versions: ['v1.1', 'v1.2', 'v1.3'],
    fields: ['name', 'account', 'users'],
    singleFields: ['is_active'],
    defaultColumns: ['id', 'name', 'account.id', 'users'],
    paging: 'skip',
    examples: { list: ['carectl teams list', 'carectl teams list -o json'], get: ['carectl teams get 801', 'carectl teams get 801 --columns name,users'] },
  }),
  resource({
    name: 'queues',
    noun: 'queue',
    versions: ['v1.1', 'v1.2', 'v1.3'],
    fields: ['name', 'is_active', 'rank', 'role', 'external_id'],
    defaultColumns: ['id', 'name', 'is_active', 'rank', 'role'],
    paging: 'skip',
    examples: { list: ['carectl queues list', 'carectl queues list -o csv > queues.csv'], get: ['carectl queues get 9001', 'carectl queues get 9001 -o json'] },
  }),
  resource({
    name: 'tags',
    noun: 'tag',
    versions: ['v1.1', 'v1.2', 'v1.3'],
    fields: ['name', 'is_active'],
    defaultColumns: ['id', 'name', 'is_active'],
    paging: 'skip',
    names: { field: 'name', active: 'is_active' },
    filters: [{ kind: 'switch', flag: 'active', offFlag: 'inactive', param: 'is_active', help: 'only active tags', offHelp: 'only inactive tags' }],
    examples: { list: ['carectl tags list --active', 'carectl tags list -o json'], get: ['carectl tags get 7005', 'carectl tags get 7005 -o json'] },
  }),
  resource({
    name: 'users',
    noun: 'user',
    versions: ['v1.2'],
    fields: ['first_name', 'last_name', 'email', 'timezone', 'date_joined', 'last_login', 'is_expert', 'crowds_name'],
    singleFields: ['is_active', 'account'],
    defaultColumns: ['id', 'first_name', 'last_name', 'email', 'timezone', 'last_login'],
    paging: 'offset',
    filters: [
      { kind: 'text', flag: 'timezone', param: 'timezone', valueName: 'tz', help: 'only users in this tz database zone (Europe/Brussels)' },
      range('joined', 'date_joined', 'date joined (RANGE)'),
      range('last-login', 'last_login', 'date of last login (RANGE)'),
    ],
    examples: {
      list: ['carectl users list --last-login 30d..', 'carectl users list --timezone Europe/Brussels -o csv'],
      get: ['carectl users get 3001', 'carectl users get 3001 -o json'],
    },
  }),
  resource({
    name: 'reports',
    noun: 'report',
    versions: ['v1.1'],
    fields: ['name', 'date_from', 'date_to', 'generated_by', 'account', 'channel', 'generation_start_date', 'generated_date', 'download', 'failure'],
    computed: [REPORT_STATE_COLUMN],
    defaultColumns: ['id', 'name', 'state', 'date_from', 'date_to', 'generated_date', 'failure'],
    paging: 'skip',
    filters: [
      { kind: 'text', flag: 'account', param: 'account', valueName: 'id', help: 'only reports of this account' },
      { kind: 'text', flag: 'channel', param: 'channel', valueName: 'channel', refers: CHANNEL_ID, help: 'only reports of this channel (name or id)' },
    ],
    conflicts: [['account', 'channel']],
    examples: {
      list: ['carectl reports list', 'carectl reports list --channel 202 -o json'],
      get: ['carectl reports get 60001', 'carectl reports get 60001 -o json'],
    },
  }),
  resource({
    name: 'annotation-types',
    noun: 'annotation type',
    versions: ['api/1'],
    envelope: { list: 'annotationtypes', single: 'annotationtype' },
    fields: ['name', 'format', 'is_active'],
    fieldsParam: false,
    defaultColumns: ['id', 'name', 'format', 'is_active'],
    paging: 'token',
    verbs: ['list'],
    examples: { list: ['carectl annotation-types list', 'carectl annotation-types list -o json'] },
  }),
  resource({
    name: 'annotations',
    noun: 'annotation',
    versions: ['api/1'],
    fields: ['type_id', 'value', 'created_date', 'moderator_id'],
    fieldsParam: false,
    defaultColumns: ['type_id', 'value', 'created_date', 'moderator_id'],
    idless: true,
    paging: 'token',
    verbs: ['list'],
    examples: { list: ['carectl annotations list', 'carectl annotations list -o csv > annotations.csv'] },
  }),
];
