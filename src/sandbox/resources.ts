/** The plain read-only resources: channels, accounts, teams, queues, tags, users, authors and api/1. */
import { type Collection, readBoolean, readList } from './collection.js';
import { ref, resourceUrl } from './context.js';
import { inRange, parseQueryDate, readRange } from './dates.js';
import { HttpProblem } from './http.js';
import type {
  AccountRecord,
  AnnotationRecord,
  AnnotationTypeRecord,
  AuthorRecord,
  ChannelRecord,
  QueueRecord,
  TagRecord,
  TeamRecord,
  UserRecord,
} from './model.js';

/** Name filters match whole names, ignoring case. */
function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Datetime text (YYYY-MM-DDTHH:MM:SS) to ms, for range filters. */
function datetimeMs(text: string): number {
  return parseQueryDate(text)!.ms;
}

const CHANNEL_FIELDS = ['created', 'name', 'url', 'is_active', 'id', 'small_image', 'reports', 'fans', 'account', 'fb_page_url', 'type'];
export const channels: Collection<ChannelRecord> = {
  versions: ['v1', 'v1.1', 'v1.2', 'v1.3'],
  table: 'channels',
  plural: 'channels',
  singular: 'channel',
  listFields: CHANNEL_FIELDS,
  paging: 'none',
  defaultOutput: 'reference',
  bareInV1: true,
  select(ctx) {
    const name = ctx.query.get('name');
    const type = ctx.query.get('type');
    return ctx.runtime.data.channels.filter(
      (channel) => (name === null || sameName(channel.name, name)) && (type === null || channel.platform === type.toLowerCase()),
    );
  },
  wire: (channel, ctx) => ({
    id: channel.id,
    url: resourceUrl(ctx, 'channels', channel.id),
    name: channel.name,
    created: channel.created,
    is_active: channel.is_active,
    small_image: `https://img.sandbox.example/channels/${channel.id}.png`,
    reports: `${resourceUrl(ctx, 'reports')}?channel=${channel.id}`,
    fans: channel.fans,
    account: ref(ctx, 'accounts', channel.account_id),
    fb_page_url: channel.fb_page_url,
    type: channel.platform,
  }),
};

const ACCOUNT_FIELDS = ['url', 'reports', 'id', 'channels', 'description', 'package', 'created_date', 'name'];
export const accounts: Collection<AccountRecord> = {
  versions: ['v1'],
  table: 'accounts',
  plural: 'accounts',
  singular: 'account',
  listFields: ACCOUNT_FIELDS,
  paging: 'none',
  defaultOutput: 'reference',
  bareInV1: true,
  select(ctx) {
    const ids = readList(ctx.query, 'id');
    const name = ctx.query.get('name');
    const created = readRange(ctx.query, 'created_date', ['gte', 'lte', 'lt']);
    return ctx.runtime.data.accounts.filter(
      (account) =>
        (ids.length === 0 || ids.includes(String(account.id))) &&
        (name === null || sameName(account.name, name)) &&
        inRange(created, datetimeMs(account.created_date)),
    );
  },
  wire: (account, ctx) => ({
    id: account.id,
    url: resourceUrl(ctx, 'accounts', account.id),
    name: account.name,
    description: account.description,
    package: account.package,
    created_date: account.created_date,
    channels: ctx.runtime.data.channels.filter((channel) => channel.account_id === account.id).map((channel) => ref(ctx, 'channels', channel.id)),
    reports: `${resourceUrl(ctx, 'reports')}?account=${account.id}`,
  }),
};

const TEAM_FIELDS = ['name', 'id', 'account', 'users', 'url'];
export const teams: Collection<TeamRecord> = {
  versions: ['v1.1', 'v1.2', 'v1.3'],
  table: 'teams',
  plural: 'teams',
  singular: 'team',
  listFields: TEAM_FIELDS,
  singleFields: [...TEAM_FIELDS, 'is_active'],
  paging: 'skip',
  defaultOutput: 'reference',
  wire: (team, ctx) => ({
    id: team.id,
    url: resourceUrl(ctx, 'teams', team.id),
    name: team.name,
    account: ref(ctx, 'accounts', team.account_id),
    users: team.user_ids.map((id) => ref(ctx, 'users', id)),
    is_active: team.is_active,
  }),
};

const QUEUE_FIELDS = ['id', 'url', 'rank', 'name', 'is_active', 'role', 'external_id'];
export const queues: Collection<QueueRecord> = {
  versions: ['v1.1', 'v1.2', 'v1.3'],
  table: 'queues',
  plural: 'queues',
  singular: 'queue',
  listFields: QUEUE_FIELDS,
  paging: 'skip',
  // Spec, Queues: "paging holds next_page and prev_page, both null on the last page".
  skipOptions: { noLinksOnLastPage: true },
  defaultOutput: 'reference',
  wire: (queue, ctx) => ({ ...queue, url: resourceUrl(ctx, 'queues', queue.id) }),
};

const TAG_FIELDS = ['id', 'name', 'url', 'is_active'];
export const tags: Collection<TagRecord> = {
  versions: ['v1.1', 'v1.2', 'v1.3'],
  table: 'tags',
  plural: 'tags',
  singular: 'tag',
  listFields: TAG_FIELDS,
  paging: 'skip',
  defaultOutput: 'reference',
  select(ctx) {
    const active = readBoolean(ctx.query, 'is_active');
    return ctx.runtime.data.tags.filter((tag) => active === undefined || tag.is_active === active);
  },
  wire: (tag, ctx) => ({ ...tag, url: resourceUrl(ctx, 'tags', tag.id) }),
};

const USER_FIELDS = ['id', 'first_name', 'last_name', 'timezone', 'date_joined', 'last_login', 'email', 'is_expert', 'crowds_name'];
export const users: Collection<UserRecord> = {
  versions: ['v1.2'],
  table: 'users',
  plural: 'users',
  singular: 'user',
  listFields: USER_FIELDS,
  singleFields: [...USER_FIELDS, 'is_active', 'account'],
  paging: 'offset',
  defaultOutput: 'reference',
  select(ctx) {
    const timezone = ctx.query.get('timezone');
    const joined = readRange(ctx.query, 'date_joined');
    const lastLogin = readRange(ctx.query, 'last_login');
    return ctx.runtime.data.users.filter(
      (user) =>
        (timezone === null || user.timezone === timezone) && inRange(joined, datetimeMs(user.date_joined)) && inRange(lastLogin, datetimeMs(user.last_login)),
    );
  },
  wire: (user, ctx) => {
    const { account_id: accountId, ...fields } = user;
    return { ...fields, url: resourceUrl(ctx, 'users', user.id), account: ref(ctx, 'accounts', accountId) };
  },
};

/** The spec allows at most 50 ids per authors lookup (the page size limit). */
const MAX_AUTHOR_IDS = 50;
const AUTHOR_FIELDS = [
  'id',
  'url',
  'platform',
  'platform_id',
  'screen_name',
  'real_name',
  'location',
  'website',
  'description',
  'profile_picture',
  'profile_link',
];
export const authors: Collection<AuthorRecord> = {
  versions: ['v1.1', 'v1.3'],
  table: 'authors',
  plural: 'authors',
  singular: 'author',
  listFields: AUTHOR_FIELDS,
  paging: 'none',
  defaultOutput: 'full',
  /** In the order asked; unknown ids are left out, repeats answered once. */
  select(ctx) {
    const ids = [...new Set(readList(ctx.query, 'id'))];
    if (ids.length === 0) throw new HttpProblem(400, 'The id parameter is required: a comma-separated list of author ids');
    if (ids.length > MAX_AUTHOR_IDS) throw new HttpProblem(400, `At most ${MAX_AUTHOR_IDS} author ids per request, got ${ids.length}`);
    return ids.flatMap((id) => ctx.runtime.data.byId.authors.get(id) ?? []);
  },
  wire: (author, ctx) => ({ ...author, url: resourceUrl(ctx, 'authors', author.id) }),
};

export const annotationTypes: Collection<AnnotationTypeRecord> = {
  versions: ['api/1'],
  table: 'annotationTypes',
  plural: 'annotationtypes',
  singular: 'annotationtype',
  listFields: [],
  paging: 'token',
  defaultOutput: 'always',
  wire: (type, ctx) => ({ ...type, url: resourceUrl(ctx, 'annotation-types', type.id) }),
};

export const annotations: Collection<AnnotationRecord> = {
  versions: ['api/1'],
  table: 'annotations',
  plural: 'annotations',
  singular: 'annotation',
  listFields: [],
  paging: 'token',
  defaultOutput: 'always',
  wire: (annotation, ctx) => ({ ...annotation, url: resourceUrl(ctx, 'annotations', annotation.id) }),
};
