/**
 * Deterministic demo data. Each collection draws from its own seeded stream, so changing the
 * number of conversations never changes users, tags or reports. Content items, notes and
 * actions are derived on demand (content.ts), which keeps 100k conversations cheap to build.
 */
import { DAY_MS, SECOND_MS, formatDate, formatDateTime, parseQueryDate } from './dates.js';
import { FIXTURES, HOSTILE } from './fixtures.js';
import {
  PLATFORMS,
  PLATFORM_PREFIX,
  REPORT_FORMATS,
  type AccountRecord,
  type AnnotationRecord,
  type AnnotationTypeRecord,
  type AuthorRecord,
  type ChannelRecord,
  type ContentItemRecord,
  type ConversationRecord,
  type ConversationStatus,
  type Platform,
  type QueueRecord,
  type ReportRecord,
  type SandboxData,
  type Tables,
  type TagRecord,
  type TeamRecord,
  type UserRecord,
} from './model.js';
import { Random, hash32 } from './random.js';
import type { DateShape } from './size.js';
import * as words from './words.js';

export interface GenerateOptions {
  seed: number;
  anchor: string;
  conversations: number;
  /** How the generated conversations' sort dates lie (DATE_SHAPES); default 'year'. */
  dates?: DateShape;
}

/** An oldest sort date of the shape, whole seconds (`inYear`: one in the default year). */
function shapedDate(shape: DateShape, random: Random, world: World, inYear: number): number {
  const seconds = (from: number, days: number): number => from + random.int(0, days * 86_400 - 1) * SECOND_MS;
  switch (shape) {
    case 'year':
      return inYear;
    case 'future':
      return seconds(world.windowEndMs, 365);
    case '1970':
      return random.chance(0.5) ? 0 : inYear;
    case 'bursts':
      return random.chance(0.6) ? world.windowEndMs - random.int(1, 5) * 7 * DAY_MS : inYear;
    case 'gaps':
      return seconds(Date.UTC(2002 + 8 * random.int(0, 2), 0, 1), 30);
    case 'hours':
      return world.windowEndMs - random.int(1, 6 * 3600) * SECOND_MS;
  }
}

const ACCOUNT_NAMES = ['Acme Retail', 'Globex Telecom', 'Initech Travel'];
const PACKAGES = ['enterprise', 'professional', 'starter'];
/** Platform and account (index into FIXTURES.accountIds) of channels 201..208. */
const CHANNEL_LAYOUT: ReadonlyArray<readonly [Platform, number]> = [
  ['microblog', 0],
  ['facebook', 0],
  ['instagram', 0],
  ['whatsapp', 1],
  ['microblog', 1],
  ['facebook', 1],
  ['instagram', 2],
  ['whatsapp', 2],
];
const AUTHOR_COUNT = 220;
const USER_COUNT = 120;
const QUEUE_COUNT = 60;
const ORDINARY_TAG_COUNT = 70;
/** The tags generated conversations carry (7005–7070); 7001–7004 are on none yet. */
const TAGS_ON_CONVERSATIONS = Array.from({ length: 66 }, (_, index) => String(7005 + index));
const ANNOTATION_COUNT = 130;
const REPORT_COUNT = 30;
/** Share of generated conversations that copy the sort dates of an earlier one (tie material). */
const TIE_SHARE = 0.3;
const STATUS_WEIGHTS: Readonly<Record<ConversationStatus, number>> = {
  archived: 4,
  on_hold: 2,
  closing: 2,
  closed: 4,
  pending_approval: 2,
  unread: 3,
  assigned: 3,
};

export function generateData(options: GenerateOptions): SandboxData {
  const anchor = parseQueryDate(options.anchor);
  if (!anchor?.dateOnly) throw new Error(`anchor must be YYYY-MM-DD, got '${options.anchor}'`);
  // The data ends where the anchor day begins: nothing is dated later than the moment it is served.
  const windowEndMs = anchor.ms;
  const world: World = {
    seed: options.seed,
    dates: options.dates ?? 'year',
    windowStartMs: windowEndMs - 365 * DAY_MS,
    windowEndMs,
    stream: (name) => new Random(hash32(options.seed, name)),
  };
  const accounts = makeAccounts(world);
  const channels = makeChannels(world, accounts);
  const authors = makeAuthors(world, channels);
  const users = makeUsers(world, accounts);
  const tags = makeTags(world);
  const queues = makeQueues(world);
  const fixedContent = makeFixedContent(world, channels);
  const [annotationTypes, annotations] = makeAnnotations(world, users);
  const total = Math.max(options.conversations, FIXTURES.fixtureConversationCount);
  const tables: Tables = {
    accounts,
    channels,
    authors,
    users,
    teams: makeTeams(world, accounts, users),
    queues,
    tags,
    conversations: makeConversations(world, { channels, authors, users, queues, tags, fixedContent }, total),
    reports: makeReports(world, accounts, channels, users),
    annotationTypes,
    annotations,
  };
  return {
    seed: options.seed,
    anchor: options.anchor,
    windowStartMs: world.windowStartMs,
    windowEndMs,
    ...tables,
    closeReasons: FIXTURES.closeReasons,
    byId: indexById(tables),
    fixedContent,
    revision: 0,
  };
}

interface World {
  seed: number;
  dates: DateShape;
  windowStartMs: number;
  windowEndMs: number;
  stream(name: string): Random;
}

function indexById(tables: Tables): SandboxData['byId'] {
  const index = (records: ReadonlyArray<{ id: string | number }>): Map<string, unknown> => new Map(records.map((record) => [String(record.id), record]));
  return Object.fromEntries(Object.entries(tables).map(([table, records]) => [table, index(records)])) as SandboxData['byId'];
}

/** A whole-second time in [fromMs, toMs). */
function timeBetween(random: Random, fromMs: number, toMs: number): number {
  const seconds = Math.max(1, Math.floor((toMs - fromMs) / SECOND_MS));
  return fromMs + random.int(0, seconds - 1) * SECOND_MS;
}

function makeAccounts(world: World): AccountRecord[] {
  const random = world.stream('accounts');
  return FIXTURES.accountIds.map((id, index) => ({
    id,
    name: ACCOUNT_NAMES[index]!,
    description: `${ACCOUNT_NAMES[index]} customer care`,
    package: PACKAGES[index]!,
    created_date: formatDateTime(timeBetween(random, world.windowStartMs - 1500 * DAY_MS, world.windowStartMs - 400 * DAY_MS)),
  }));
}

function titleCase(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}

function makeChannels(world: World, accounts: readonly AccountRecord[]): ChannelRecord[] {
  const random = world.stream('channels');
  return CHANNEL_LAYOUT.map(([platform, accountIndex], index) => {
    const id = FIXTURES.channelIds[index]!;
    const platformId = String(880001 + index);
    const account = accounts[accountIndex]!;
    return {
      id,
      name: `${account.name.split(' ')[0]} ${platform === 'whatsapp' ? 'WhatsApp' : titleCase(platform)}`,
      platform,
      platform_id: platformId,
      created: formatDateTime(timeBetween(random, world.windowStartMs - 300 * DAY_MS, world.windowStartMs)),
      is_active: id !== FIXTURES.inactiveChannelId,
      fans: String(random.int(120, 250_000)),
      account_id: account.id,
      fb_page_url: platform === 'facebook' ? `https://facebook.example/pages/${platformId}` : null,
      author_id: `${PLATFORM_PREFIX[platform]}:${platformId}`,
      can_manage_conversations: id !== FIXTURES.readOnlyChannelId,
      reports_always_fail: id === FIXTURES.failingReportChannelId,
    };
  });
}

function authorRecord(
  platform: Platform,
  platformId: string,
  names: Pick<AuthorRecord, 'screen_name' | 'real_name' | 'location' | 'website' | 'description'>,
): AuthorRecord {
  return {
    id: `${PLATFORM_PREFIX[platform]}:${platformId}`,
    platform,
    platform_id: platformId,
    ...names,
    profile_picture: `https://img.sandbox.example/authors/${PLATFORM_PREFIX[platform]}${platformId}.jpg`,
    profile_link: `https://${platform}.example/${encodeURIComponent(names.screen_name)}`,
  };
}

function makeAuthors(world: World, channels: readonly ChannelRecord[]): AuthorRecord[] {
  const random = world.stream('authors');
  const authors = channels.map((channel) =>
    authorRecord(channel.platform, channel.platform_id, {
      screen_name: channel.name.toLowerCase().replace(' ', '_'),
      real_name: channel.name,
      location: null,
      website: `https://${channel.name.split(' ')[0]!.toLowerCase()}.example`,
      description: `Official ${channel.name} account`,
    }),
  );
  authors.push(
    authorRecord('facebook', '666000001', {
      screen_name: HOSTILE.osc8Hyperlink,
      real_name: HOSTILE.crOverwrite,
      location: `${HOSTILE.c1Csi}red`,
      website: null,
      description: `${HOSTILE.tabAndNewline}${HOSTILE.del}${HOSTILE.bell}`,
    }),
    authorRecord('facebook', '666000002', {
      screen_name: HOSTILE.formulaAt,
      real_name: HOSTILE.formulaMinus,
      location: HOSTILE.formulaFullWidth,
      website: HOSTILE.formulaPlus,
      description: `${HOSTILE.osc52Clipboard}copy me`,
    }),
    authorRecord('microblog', '777000001', {
      screen_name: 'sam_sparrow',
      real_name: 'Sam Sparrow',
      location: 'Utrecht',
      website: null,
      description: 'Frequent flyer',
    }),
  );
  for (let index = 0; authors.length < AUTHOR_COUNT; index++) {
    const first = random.pick(words.FIRST_NAMES);
    const last = random.pick(words.LAST_NAMES);
    authors.push(
      authorRecord(PLATFORMS[index % PLATFORMS.length]!, String(1_000_001 + index), {
        screen_name: `${first}${last}`.toLowerCase().replace(/[^a-z]/g, '') + String(index),
        real_name: `${first} ${last}`,
        location: random.chance(0.3) ? null : random.pick(words.CITIES),
        website: random.chance(0.5) ? null : `https://blog.example/${index}`,
        description: random.chance(0.3) ? null : `Fan of ${random.pick(words.TAG_TOPICS)} and ${random.pick(words.TAG_TOPICS)}`,
      }),
    );
  }
  return authors;
}

function makeUsers(world: World, accounts: readonly AccountRecord[]): UserRecord[] {
  const random = world.stream('users');
  return Array.from({ length: USER_COUNT }, (_, index) => {
    const first = random.pick(words.FIRST_NAMES);
    const last = random.pick(words.LAST_NAMES);
    const joined = timeBetween(random, world.windowEndMs - 1100 * DAY_MS, world.windowEndMs - 30 * DAY_MS);
    return {
      id: String(3001 + index),
      first_name: first,
      last_name: last,
      timezone: random.pick(words.TIMEZONES),
      date_joined: formatDateTime(joined),
      last_login: formatDateTime(timeBetween(random, joined, world.windowEndMs)),
      email: `${first}.${last}.${index + 1}@sandbox.example`.toLowerCase().replace(/[^a-z0-9.@]/g, ''),
      is_expert: random.chance(0.2),
      crowds_name: random.pick(words.CROWDS),
      is_active: index === 0 || random.chance(0.9),
      account_id: accounts[index % accounts.length]!.id,
    };
  });
}

function makeTeams(world: World, accounts: readonly AccountRecord[], users: readonly UserRecord[]): TeamRecord[] {
  const random = world.stream('teams');
  return words.TEAM_NAMES.map((name, index) => {
    const account = accounts[index % accounts.length]!;
    const members = users.filter((user) => user.account_id === account.id).map((user) => user.id);
    return {
      id: String(801 + index),
      name,
      account_id: account.id,
      user_ids: random.sample(members, random.int(3, 10)).sort(),
      is_active: index === 0 || random.chance(0.85),
    };
  });
}

function makeQueues(world: World): QueueRecord[] {
  const random = world.stream('queues');
  return Array.from({ length: QUEUE_COUNT }, (_, index) => ({
    id: String(9001 + index),
    name: `${words.QUEUE_TOPICS[index % words.QUEUE_TOPICS.length]} ${Math.floor(index / words.QUEUE_TOPICS.length) + 1}`,
    is_active: index === 0 || random.chance(0.85),
    rank: String(random.int(1, 100)),
    role: random.chance(0.8) ? 'default' : 'legacy',
    external_id: random.chance(0.5) ? `EXT-${random.int(10000, 99999)}` : null,
  }));
}

/**
 * Ordinary tags 7001–7070, then the hostile ones (FIXTURES.hostile.tagIds), so that a list reads as a
 * care team's before it shows the escaping. The names of 7005–7070 are drawn first, those of 7001–7004
 * after them: the ids that examples name and conversations carry (TAGS_ON_CONVERSATIONS) keep their names.
 */
function makeTags(world: World): TagRecord[] {
  const random = world.stream('tags');
  const hostileNames = [HOSTILE.formulaHyperlink, `vip${HOSTILE.osc52Clipboard}`, `${HOSTILE.clearScreen}urgent${HOSTILE.bell}`, HOSTILE.formulaPlus];
  const inactive = new Set<string>(FIXTURES.inactiveTagIds);
  const names = new Set<string>(hostileNames);
  const drawName = (): string => {
    for (;;) {
      const candidate = `${random.pick(words.TAG_TOPICS)}-${random.pick(words.TAG_QUALIFIERS)}`;
      if (names.has(candidate)) continue;
      names.add(candidate);
      return candidate;
    }
  };
  const ordinaryIds = Array.from({ length: ORDINARY_TAG_COUNT }, (_, index) => String(7001 + index));
  const drawn = new Map([...TAGS_ON_CONVERSATIONS, ...ordinaryIds.filter((id) => !TAGS_ON_CONVERSATIONS.includes(id))].map((id) => [id, drawName()]));
  return [
    ...ordinaryIds.map((id) => ({ id, name: drawn.get(id)!, is_active: !inactive.has(id) })),
    ...FIXTURES.hostile.tagIds.map((id, index) => ({ id, name: hostileNames[index]!, is_active: true })),
  ];
}

type FixedItemFields = Partial<ContentItemRecord> & Pick<ContentItemRecord, 'id' | 'parent' | 'createdMs' | 'text' | 'author_id'>;

/** One hand-written content item on a channel: what the fields leave out, as a plain reply. */
function fixedItem(fields: FixedItemFields, on: ChannelRecord): ContentItemRecord {
  return {
    type: 'reply',
    platform: on.platform,
    platform_id: `${on.platform_id}_${fields.id}`,
    is_private: false,
    is_priority: false,
    is_by_source: false,
    importedMs: fields.createdMs + 42_123,
    link: on.platform === 'microblog' ? `https://microblog.example/status/${fields.id}` : `https://facebook.example/posts/${fields.id}`,
    tag_ids: [],
    channel_ids: [on.id],
    user_id: null,
    attachments: [],
    sentiment: null,
    ...fields,
  };
}

/** The hostile conversation's thread: terminal escapes and spreadsheet formulas in its texts. */
function hostileContent(world: World, facebook: ChannelRecord): ContentItemRecord[] {
  const start = world.windowEndMs - 2 * DAY_MS + 3_600_000;
  const [hostileA, hostileB] = FIXTURES.hostile.authorIds;
  return [
    fixedItem(
      {
        id: '5000011',
        parent: FIXTURES.hostile.conversationId,
        type: 'post',
        createdMs: start,
        author_id: hostileA,
        tag_ids: FIXTURES.hostile.tagIds.slice(0, 2),
        text: `Hello ${HOSTILE.clearScreen}${HOSTILE.osc52Clipboard}see ${HOSTILE.osc8Hyperlink}`,
      },
      facebook,
    ),
    fixedItem(
      {
        id: '5000012',
        parent: '5000011',
        createdMs: start + 300_000,
        author_id: facebook.author_id,
        is_by_source: true,
        user_id: FIXTURES.userId,
        text: HOSTILE.formulaHyperlink,
      },
      facebook,
    ),
    fixedItem(
      {
        id: '5000013',
        parent: '5000012',
        createdMs: start + 600_000,
        author_id: hostileB,
        tag_ids: FIXTURES.hostile.tagIds.slice(2, 3),
        text: `${HOSTILE.crOverwrite} ${HOSTILE.c1Csi}red${HOSTILE.del}${HOSTILE.bell} ${HOSTILE.tabAndNewline} ${HOSTILE.formulaMinus} ${HOSTILE.formulaAt} ${HOSTILE.formulaFullWidth} ${HOSTILE.formulaPlus}`,
      },
      facebook,
    ),
  ];
}

/** The multi-platform conversation's thread: microblog items the platform restricts, and an exempt reply. */
function multiPlatformContent(world: World, facebook: ChannelRecord, microblog: ChannelRecord): ContentItemRecord[] {
  const start = world.windowEndMs - 5 * DAY_MS + 36_000_000;
  const ids = FIXTURES.multiPlatformItemIds;
  return [
    fixedItem(
      {
        id: ids.restrictedInbound,
        parent: FIXTURES.multiPlatformConversationId,
        type: 'post',
        createdMs: start,
        author_id: FIXTURES.microblogAuthorId,
        text: 'Is my flight still on time? @acme_microblog',
        is_priority: true,
      },
      microblog,
    ),
    fixedItem(
      {
        id: ids.restrictedOwnPost,
        parent: ids.restrictedInbound,
        createdMs: start + 120_000,
        author_id: microblog.author_id,
        is_by_source: true,
        text: 'We are looking into delays on route 12.',
      },
      microblog,
    ),
    fixedItem(
      {
        id: ids.exemptReply,
        parent: ids.restrictedInbound,
        createdMs: start + 420_000,
        author_id: microblog.author_id,
        is_by_source: true,
        user_id: FIXTURES.userId,
        text: 'Hi Sam, your flight is on time.',
      },
      microblog,
    ),
    fixedItem(
      {
        id: ids.facebookReply,
        parent: ids.exemptReply,
        createdMs: start + 1_200_000,
        author_id: facebook.author_id,
        is_by_source: true,
        user_id: '3002',
        text: 'We also sent the details by Facebook message.',
      },
      facebook,
    ),
  ];
}

/** Hand-written content of the hostile and the multi-platform fixture conversations. */
function makeFixedContent(world: World, channels: readonly ChannelRecord[]): Map<string, ContentItemRecord[]> {
  const channel = (id: string): ChannelRecord => channels.find((candidate) => candidate.id === id)!;
  const facebook = channel(FIXTURES.facebookChannelId);
  return new Map([
    [FIXTURES.hostile.conversationId, hostileContent(world, facebook)],
    [FIXTURES.multiPlatformConversationId, multiPlatformContent(world, facebook, channel(FIXTURES.microblogChannelId))],
  ]);
}

function weighted<T extends string>(weights: Readonly<Record<T, number>>): T[] {
  return (Object.entries(weights) as Array<[T, number]>).flatMap(([value, weight]) => Array<T>(weight).fill(value));
}

/** The fixed conversations of FIXTURES (the hostile one, the multi-platform one, the read-only one): no random draw. */
/** What conversations are made from. */
type ConversationSources = Pick<SandboxData, 'channels' | 'authors' | 'users' | 'queues' | 'tags' | 'fixedContent'>;

function fixedConversations(world: World, data: ConversationSources, customersByPlatform: ReadonlyMap<Platform, string[]>): ConversationRecord[] {
  const conversations: ConversationRecord[] = [];
  const fixture = (id: string, fields: Partial<ConversationRecord> & Pick<ConversationRecord, 'author_id' | 'channel_ids'>): void => {
    const items = data.fixedContent.get(id);
    const oldestMs = items ? items[0]!.createdMs : world.windowEndMs - 10 * DAY_MS;
    conversations.push({
      id,
      seq: Number(id),
      status: 'unread',
      is_priority: false,
      contains_private: false,
      tag_ids: [],
      assigned_to: null,
      queue_id: FIXTURES.queueId,
      close_reason: null,
      handling_times: { first_response_seconds: 300, resolution_seconds: null },
      oldestMs,
      newestMs: items ? items[items.length - 1]!.createdMs : oldestMs,
      itemCount: items ? items.length : 1,
      ...fields,
    });
  };
  fixture(FIXTURES.hostile.conversationId, {
    author_id: FIXTURES.hostile.authorIds[0],
    channel_ids: [FIXTURES.facebookChannelId],
    tag_ids: [...FIXTURES.hostile.tagIds],
  });
  fixture(FIXTURES.multiPlatformConversationId, {
    author_id: FIXTURES.microblogAuthorId,
    channel_ids: [FIXTURES.microblogChannelId, FIXTURES.facebookChannelId],
    status: 'assigned',
    is_priority: true,
    tag_ids: [FIXTURES.activeTagIds[0]],
    assigned_to: FIXTURES.userId,
  });
  fixture(FIXTURES.readOnlyConversationId, {
    author_id: customersByPlatform.get('whatsapp')![0]!,
    channel_ids: [FIXTURES.readOnlyChannelId],
    contains_private: true,
  });
  return conversations;
}

function makeConversations(world: World, data: ConversationSources, total: number): ConversationRecord[] {
  const random = world.stream('conversations');
  const channelChoices = data.channels.flatMap((channel) => Array<ChannelRecord>(channel.is_active ? 3 : 1).fill(channel));
  const customersByPlatform = new Map<Platform, string[]>(PLATFORMS.map((platform) => [platform, []]));
  const notCustomers = new Set<string>([...data.channels.map((channel) => channel.author_id), ...FIXTURES.hostile.authorIds, FIXTURES.microblogAuthorId]);
  for (const author of data.authors) if (!notCustomers.has(author.id)) customersByPlatform.get(author.platform)!.push(author.id);
  const statuses = weighted(STATUS_WEIGHTS);
  const closeReasons = FIXTURES.closeReasons;
  const conversations = fixedConversations(world, data, customersByPlatform);

  const windowSeconds = (world.windowEndMs - world.windowStartMs) / SECOND_MS;
  const firstGenerated = conversations.length;
  for (let index = firstGenerated; index < total; index++) {
    const channel = random.pick(channelChoices);
    const status = random.pick(statuses);
    const itemCount = random.int(1, 4);
    let oldestMs: number;
    let newestMs: number;
    if (index - firstGenerated > 10 && random.chance(TIE_SHARE)) {
      const twin = conversations[random.int(firstGenerated, index - 1)]!;
      oldestMs = twin.oldestMs;
      newestMs = itemCount > 1 ? twin.newestMs : oldestMs;
    } else {
      oldestMs = shapedDate(world.dates, random, world, world.windowStartMs + random.int(0, windowSeconds - 1) * SECOND_MS);
      const end = world.dates === 'year' ? world.windowEndMs - SECOND_MS : Infinity;
      newestMs = itemCount > 1 ? Math.max(oldestMs, Math.min(oldestMs + random.int(60, 72 * 3600) * SECOND_MS, end)) : oldestMs;
    }
    const closed = status === 'closed' || status === 'closing';
    const seq = 500001 + index;
    conversations.push({
      id: String(seq),
      seq,
      status,
      is_priority: random.chance(0.2),
      contains_private: channel.platform === 'whatsapp' || random.chance(0.15),
      tag_ids: random.sample(TAGS_ON_CONVERSATIONS, random.int(0, 3)),
      author_id: random.pick(customersByPlatform.get(channel.platform)!),
      channel_ids: [channel.id],
      assigned_to: status === 'unread' || (status !== 'assigned' && random.chance(0.4)) ? null : random.pick(data.users).id,
      queue_id: random.pick(data.queues).id,
      close_reason: closed ? random.pick(closeReasons) : null,
      handling_times: {
        first_response_seconds: random.chance(0.8) ? random.int(30, 86_400) : null,
        resolution_seconds: closed ? random.int(600, 604_800) : null,
      },
      oldestMs,
      newestMs,
      itemCount,
    });
  }
  return conversations;
}

function makeReports(world: World, accounts: readonly AccountRecord[], channels: readonly ChannelRecord[], users: readonly UserRecord[]): ReportRecord[] {
  const random = world.stream('reports');
  const failing = channels.find((channel) => channel.reports_always_fail)!;
  return Array.from({ length: REPORT_COUNT }, (_, index) => {
    const id = String(60001 + index);
    const fixedTarget = id === FIXTURES.reports.generatedId ? accounts[0]! : id === FIXTURES.reports.failedId ? failing : undefined;
    const target = fixedTarget ?? (index % 3 === 0 ? random.pick(accounts) : random.pick(channels));
    const isAccount = typeof target.id === 'number';
    const fromMs = timeBetween(random, world.windowStartMs, world.windowEndMs - 40 * DAY_MS);
    const toMs = fromMs + random.int(0, 30) * DAY_MS;
    const startMs = timeBetween(random, toMs + DAY_MS, toMs + 5 * DAY_MS);
    const fails = target === failing || (id !== FIXTURES.reports.generatedId && random.chance(0.15));
    const format = id === FIXTURES.reports.generatedId ? 'csv' : random.pick(REPORT_FORMATS);
    return {
      id,
      name: `${target.name} ${formatDate(fromMs)}..${formatDate(toMs)}`,
      date_from: formatDate(fromMs),
      date_to: formatDate(toMs),
      date_type: random.chance(0.7) ? 'created_date' : 'updated_date',
      format,
      generated_by: random.pick(users).id,
      target: isAccount ? { kind: 'account', id: target.id as number } : { kind: 'channel', id: target.id as string },
      startMs,
      doneMs: startMs + random.int(30, 900) * SECOND_MS,
      outcome: fails ? 'failed' : 'generated',
      failure: fails ? (target === failing ? words.FAILURE_MESSAGES[0]! : random.pick(words.FAILURE_MESSAGES)) : null,
      settled: true,
      download_token: downloadToken(world.seed, id),
    };
  });
}

/** An unguessable-looking but deterministic path segment of a report's download URL. */
export function downloadToken(seed: number, reportId: string): string {
  return hash32(seed, 'download', reportId).toString(36).padStart(7, '0') + hash32(reportId, 'download', seed).toString(36).padStart(7, '0');
}

function makeAnnotations(world: World, users: readonly UserRecord[]): [AnnotationTypeRecord[], AnnotationRecord[]] {
  const random = world.stream('annotations');
  const types: AnnotationTypeRecord[] = words.ANNOTATION_TYPE_NAMES.map((name, index) => ({
    id: String(index + 1),
    name,
    format: index % 3 === 2 ? 'long' : 'short',
    is_active: index === 0 || random.chance(0.8),
  }));
  const annotations: AnnotationRecord[] = Array.from({ length: ANNOTATION_COUNT }, (_, index) => {
    const type = random.pick(types);
    return {
      id: String(index + 1),
      type_id: type.id,
      value: type.format === 'long' ? `${random.pick(words.NOTE_TEXTS)} ${random.pick(words.REPLY_TEXTS)}` : random.pick(words.TAG_TOPICS),
      created_date: formatDateTime(timeBetween(random, world.windowStartMs, world.windowEndMs)),
      moderator_id: random.pick(users).id,
    };
  });
  return [types, annotations];
}
