/**
 * A live night (`carectl sandbox --live RATE`): new conversations and new messages on existing
 * ones, RATE a minute. Event k is due at start + k minutes / RATE on the sandbox's clock and is
 * applied when the first request after it arrives, so a test advances an injected clock instead
 * of waiting, and the same clock gives the same events: event k is drawn from the seed and k.
 */
import { contentOf } from './content.js';
import { floorToSecond } from './dates.js';
import type { ContentItemRecord, ConversationRecord, SandboxData } from './model.js';
import { Random, hash32 } from './random.js';
import * as words from './words.js';

/** Share of events that start a conversation; the others add a message to one. */
const NEW_CONVERSATION_SHARE = 1 / 3;
/** Live items' ids: above every generated one (conversation seq × 10 + index). */
const LIVE_ITEM_IDS = 900_000_000;

export class LiveNight {
  private applied = 0;
  /** Conversations a message may be added to: the generated ones (fixtures keep their hand-written threads) and the live ones. */
  private readonly open: ConversationRecord[];
  private nextSeq: number;

  constructor(
    private readonly data: SandboxData,
    private readonly perMinute: number,
    private readonly startMs: number,
  ) {
    this.open = data.conversations.filter((conversation) => !data.fixedContent.has(conversation.id));
    this.nextSeq = Math.max(...data.conversations.map((conversation) => conversation.seq)) + 1;
  }

  /** Applies every event due by `nowMs`, each at its own time (whole seconds). */
  catchUp(nowMs: number): void {
    const due = Math.floor(((nowMs - this.startMs) * this.perMinute) / 60_000);
    if (due <= this.applied) return;
    for (; this.applied < due; this.applied++) {
      const k = this.applied + 1;
      const random = new Random(hash32(this.data.seed, 'live', k));
      const atMs = floorToSecond(this.startMs + (k * 60_000) / this.perMinute);
      if (random.chance(NEW_CONVERSATION_SHARE) || this.open.length === 0) this.startConversation(random, atMs, k);
      else this.addMessage(random.pick(this.open), random, atMs, k);
    }
    this.data.revision++;
  }

  /** A new unread conversation on a channel and with a customer of one that exists, its first message at `atMs`. */
  private startConversation(random: Random, atMs: number, k: number): void {
    const like = random.pick(this.data.conversations);
    const seq = this.nextSeq++;
    const conversation: ConversationRecord = {
      ...like,
      id: String(seq),
      seq,
      status: 'unread',
      is_priority: random.chance(0.2),
      tag_ids: [],
      assigned_to: null,
      close_reason: null,
      handling_times: { first_response_seconds: null, resolution_seconds: null },
      oldestMs: atMs,
      newestMs: atMs,
      itemCount: 0,
    };
    this.data.fixedContent.set(conversation.id, []);
    this.data.conversations.push(conversation);
    this.data.byId.conversations.set(conversation.id, conversation);
    this.open.push(conversation);
    this.addMessage(conversation, random, atMs, k);
  }

  /** A message at `atMs`: the conversation's thread is kept as it was (written out), the item added, its newest_sort_date moved. */
  private addMessage(conversation: ConversationRecord, random: Random, atMs: number, k: number): void {
    const thread = contentOf(this.data, conversation);
    const channel = this.data.byId.channels.get(conversation.channel_ids[0]!)!;
    const first = thread.length === 0;
    const bySource = !first && random.chance(0.5);
    const authorId = bySource ? channel.author_id : conversation.author_id;
    const platformId = String(random.int(10_000_000, 99_999_999));
    const item: ContentItemRecord = {
      id: String(LIVE_ITEM_IDS + k),
      parent: first ? conversation.id : thread[thread.length - 1]!.id,
      type: conversation.contains_private ? 'direct_message' : first ? 'post' : 'reply',
      platform: channel.platform,
      platform_id: platformId,
      is_private: conversation.contains_private,
      is_priority: conversation.is_priority && first,
      is_by_source: bySource,
      createdMs: atMs,
      importedMs: atMs + random.int(0, 999),
      text: words.fillNumber(random.pick(bySource ? words.REPLY_TEXTS : words.INBOUND_TEXTS), random.int(2, 99_999)),
      link: conversation.contains_private ? null : `https://${channel.platform}.example/${authorId.slice(2)}/posts/${platformId}`,
      tag_ids: [],
      author_id: authorId,
      channel_ids: [channel.id],
      user_id: bySource && random.chance(0.7) ? random.pick(this.data.users).id : null,
      attachments: [],
      sentiment: null,
    };
    this.data.fixedContent.set(conversation.id, [...thread, item]);
    conversation.newestMs = Math.max(conversation.newestMs, atMs);
    conversation.itemCount = thread.length + 1;
  }
}
