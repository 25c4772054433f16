/**
 * Well-known records that exist for every seed, so tests of the CLI can name them. Ids are
 * seed-independent; attributes other than the ones documented here may vary with the seed.
 */
import { DEMO_CONVERSATIONS } from './size.js';

export const DEMO_USER = 'demo';
export const DEMO_PASSWORD = 'sandbox-demo-password';

/**
 * Untrusted social-media text: terminal escapes and spreadsheet formulas that the CLI must
 * neutralise in table/tsv/csv output.
 */
export const HOSTILE = {
  osc52Clipboard: '\x1b]52;c;ZWNobyBwd25lZA==\x07',
  osc8Hyperlink: '\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\',
  clearScreen: '\x1b[2J\x1b[H',
  crOverwrite: 'ok\rPWNED',
  bell: '\x07',
  c1Csi: '\u009b31m',
  del: '\x7f',
  tabAndNewline: 'col1\tcol2\nline2',
  formulaHyperlink: '=HYPERLINK("http://evil.example","x")',
  formulaPlus: '+1+1',
  formulaMinus: '-2+3',
  formulaAt: '@SUM(A1)',
  formulaFullWidth: '＝1+1',
} as const;

export const FIXTURES = {
  /** Account ids are numbers. */
  accountIds: [1001, 1002, 1003],
  channelIds: ['201', '202', '203', '204', '205', '206', '207', '208'],
  /** Microblog channel of account 1001 (its items carry the microblog restrictions). */
  microblogChannelId: '201',
  facebookChannelId: '202',
  /** Conversations here cannot be updated: PATCH answers 403. */
  readOnlyChannelId: '204',
  inactiveChannelId: '207',
  /** Reports on this channel always end in the failed state. */
  failingReportChannelId: '208',
  /** Active, harmless tag ids (good for PATCH). */
  activeTagIds: ['7005', '7006', '7007'],
  inactiveTagId: '7008',
  /** At least these tags are inactive (more may be, never the hostile or activeTagIds ones). */
  inactiveTagIds: ['7008', '7016', '7024', '7032', '7040', '7048', '7056', '7064'],
  /** The accepted close_reason values. */
  closeReasons: ['resolved', 'spam', 'no_response', 'duplicate', 'escalated'],
  userId: '3001',
  teamId: '801',
  queueId: '9001',
  annotationTypeId: '1',
  hostile: {
    /** Active tags whose names are hostile, after the ordinary ones: 7071 formula, 7072 OSC 52, 7073 clear screen + BEL, 7074 '+1+1'. */
    tagIds: ['7071', '7072', '7073', '7074'],
    /** f:666000001: OSC 8 / CR / C1 / tab+newline / DEL / BEL; f:666000002: formulas and OSC 52. */
    authorIds: ['f:666000001', 'f:666000002'],
    /** Facebook conversation (text visible) by the hostile authors, tagged with the hostile tags. */
    conversationId: '500001',
  },
  /**
   * Conversation with content on microblog (channel 201) and facebook (channel 202): one
   * restricted inbound microblog item (text null), one restricted post by the channel itself
   * (text kept), one exempt outbound reply written through the service, one facebook reply.
   */
  multiPlatformConversationId: '500002',
  multiPlatformItemIds: {
    restrictedInbound: '5000021',
    restrictedOwnPost: '5000022',
    exemptReply: '5000023',
    facebookReply: '5000024',
  },
  /** A normal microblog customer author (author of multiPlatformConversationId). */
  microblogAuthorId: 'm:777000001',
  /** On readOnlyChannelId. */
  readOnlyConversationId: '500003',
  /** The number of fixture conversations; generated ones follow with ids from 500004 up. */
  fixtureConversationCount: DEMO_CONVERSATIONS.min,
  reports: {
    /** A generated csv report on account 1001. */
    generatedId: '60001',
    /** A failed report on failingReportChannelId. */
    failedId: '60002',
  },
} as const;

/** The placeholder link of restricted microblog items. */
export const MICROBLOG_PLACEHOLDER_LINK = 'https://microblog.example/status/unavailable#this-info-is-unavailable';
export const MICROBLOG_PLACEHOLDER_DATE = '1970-01-01T00:00:00';
