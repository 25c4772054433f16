/**
 * The sandbox's live state. Records hold references as ids and dates as ms; the wire shapes
 * (urls, {id,url} references, formatted dates) are built per request by the serialisers.
 */

export const PLATFORMS = ['microblog', 'facebook', 'instagram', 'whatsapp'] as const;
export type Platform = (typeof PLATFORMS)[number];
/** Author ids are `<prefix>:<platform id>`. */
export const PLATFORM_PREFIX: Readonly<Record<Platform, string>> = { microblog: 'm', facebook: 'f', instagram: 'i', whatsapp: 'w' };

export const CONVERSATION_STATUSES = ['archived', 'on_hold', 'closing', 'closed', 'pending_approval', 'unread', 'assigned'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

export const REPORT_FORMATS = ['xlsx', 'csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface AccountRecord {
  /** Account ids are JSON numbers everywhere ("id may be numeric"). */
  id: number;
  name: string;
  description: string;
  package: string;
  created_date: string;
}

export interface ChannelRecord {
  id: string;
  name: string;
  platform: Platform;
  platform_id: string;
  created: string;
  is_active: boolean;
  fans: string;
  account_id: number;
  fb_page_url: string | null;
  /** The channel's own author record: items it posts itself keep their text on microblog. */
  author_id: string;
  /** False for FIXTURES.readOnlyChannelId: PATCH of its conversations answers 403. */
  can_manage_conversations: boolean;
  /** True for FIXTURES.failingReportChannelId: its reports always fail. */
  reports_always_fail: boolean;
}

export interface AuthorRecord {
  id: string;
  platform: Platform;
  platform_id: string;
  screen_name: string;
  real_name: string;
  location: string | null;
  website: string | null;
  description: string | null;
  profile_picture: string;
  profile_link: string;
}

export interface UserRecord {
  id: string;
  first_name: string;
  last_name: string;
  timezone: string;
  date_joined: string;
  last_login: string;
  email: string;
  is_expert: boolean;
  crowds_name: string;
  is_active: boolean;
  account_id: number;
}

export interface TeamRecord {
  id: string;
  name: string;
  account_id: number;
  user_ids: string[];
  is_active: boolean;
}

export interface QueueRecord {
  id: string;
  name: string;
  is_active: boolean;
  rank: string;
  role: 'default' | 'legacy';
  external_id: string | null;
}

export interface TagRecord {
  id: string;
  name: string;
  is_active: boolean;
}

/** The spec leaves its shape open; this is the sandbox's choice. */
export interface HandlingTimes {
  first_response_seconds: number | null;
  resolution_seconds: number | null;
}

export interface ConversationRecord {
  id: string;
  /** Numeric id, the tie-breaker of every sort. */
  seq: number;
  status: ConversationStatus;
  is_priority: boolean;
  contains_private: boolean;
  tag_ids: string[];
  author_id: string;
  channel_ids: string[];
  assigned_to: string | null;
  queue_id: string;
  close_reason: string | null;
  handling_times: HandlingTimes;
  /** Creation time of the first item (whole seconds): the oldest_sort_date. */
  oldestMs: number;
  /** Creation time of the last item (whole seconds): the newest_sort_date. */
  newestMs: number;
  itemCount: number;
}

export interface AttachmentRecord {
  description: string | null;
  media: Array<{ src: string; alt: string | null; href: string | null; type: string }>;
  caption: string | null;
  href: string | null;
  properties: string[];
  name: string | null;
}

export interface SentimentRecord {
  createdMs: number;
  created_by: string;
  value: number;
}

export interface ContentItemRecord {
  id: string;
  parent: string;
  type: string;
  platform: Platform;
  platform_id: string;
  is_private: boolean;
  is_priority: boolean;
  is_by_source: boolean;
  /** The real creation time; microblog restrictions hide it on the wire. */
  createdMs: number;
  importedMs: number;
  text: string;
  link: string | null;
  tag_ids: string[];
  author_id: string;
  channel_ids: string[];
  /** Set on outbound replies written through the service (exempt from microblog restrictions). */
  user_id: string | null;
  attachments: AttachmentRecord[];
  sentiment: SentimentRecord | null;
}

export interface NoteRecord {
  id: string;
  conversation_id: string;
  text: string;
  createdMs: number;
  user_id: string;
}

export interface ActionRecord {
  id: string;
  conversation_id: string;
  type: string;
  createdMs: number;
  user_id: string;
}

export type ReportTarget = { kind: 'account'; id: number } | { kind: 'channel'; id: string };

export interface ReportRecord {
  id: string;
  name: string;
  date_from: string;
  date_to: string;
  date_type: 'created_date' | 'updated_date';
  format: ReportFormat;
  /** Moderator id; its url points at a moderator resource the spec does not show. */
  generated_by: string;
  target: ReportTarget;
  /** When generation starts and ends; the state at a given time follows from these. */
  startMs: number;
  doneMs: number;
  outcome: 'generated' | 'failed';
  failure: string | null;
  /** Seeded reports are settled: they show their outcome whatever the (injected) clock says. */
  settled: boolean;
  /** Part of the download path, so download URLs cannot be guessed from the id alone. */
  download_token: string;
}

export interface AnnotationTypeRecord {
  id: string;
  name: string;
  format: 'short' | 'long';
  is_active: boolean;
}

export interface AnnotationRecord {
  id: string;
  type_id: string;
  value: string;
  created_date: string;
  moderator_id: string;
}

/**
 * Each collection's records, by table name. A collection names its table (router.ts lists the
 * collections); `byId` indexes every table.
 */
export interface Tables {
  accounts: AccountRecord[];
  channels: ChannelRecord[];
  authors: AuthorRecord[];
  users: UserRecord[];
  teams: TeamRecord[];
  queues: QueueRecord[];
  tags: TagRecord[];
  /** In id order. */
  conversations: ConversationRecord[];
  /** In id order; POST appends. */
  reports: ReportRecord[];
  annotationTypes: AnnotationTypeRecord[];
  annotations: AnnotationRecord[];
}
export type Table = keyof Tables;

export interface SandboxData extends Tables {
  seed: number;
  /** 'YYYY-MM-DD': conversation dates lie in [windowStartMs, windowEndMs), the 365 days ending with this day. */
  anchor: string;
  windowStartMs: number;
  windowEndMs: number;
  closeReasons: readonly string[];
  /** Every table's records by id (as text). */
  byId: { [T in Table]: Map<string, Tables[T][number]> };
  /** Content of the fixture conversations, written out by hand; all other content is derived from the seed on demand. */
  fixedContent: Map<string, ContentItemRecord[]>;
  /** Bumped by every write, so cached list snapshots are rebuilt. */
  revision: number;
}
