/**
 * Content items, notes and actions of a conversation, derived on demand from the seed and the
 * conversation id (so any page can be served without generating the whole world's content).
 */
import { SECOND_MS, floorToSecond } from './dates.js';
import type { ActionRecord, ContentItemRecord, ConversationRecord, NoteRecord, SandboxData } from './model.js';
import { Random, hash32 } from './random.js';
import * as words from './words.js';

/**
 * `ms`, or the last moment of the data's window when it falls later (the window ends where the
 * anchor day begins, so nothing is dated after the moment it is served), but never before `floorMs`.
 */
function notAfterWindow(data: SandboxData, ms: number, floorMs: number): number {
  return Math.max(floorMs, Math.min(ms, data.windowEndMs - 1));
}

/** The conversation's items, oldest first; the first and last carry its sort dates. */
export function contentOf(data: SandboxData, conversation: ConversationRecord): ContentItemRecord[] {
  const fixed = data.fixedContent.get(conversation.id);
  if (fixed) return fixed;
  const random = new Random(hash32(data.seed, 'content', conversation.id));
  const channel = data.byId.channels.get(conversation.channel_ids[0]!)!;
  const count = conversation.itemCount;
  const span = conversation.newestMs - conversation.oldestMs;
  const items: ContentItemRecord[] = [];
  for (let index = 0; index < count; index++) {
    const createdMs = index === count - 1 ? conversation.newestMs : floorToSecond(conversation.oldestMs + (span * index) / Math.max(1, count - 1));
    const bySource = index > 0 && random.chance(0.5);
    const viaService = bySource && random.chance(channel.platform === 'microblog' ? 0.7 : 0.85);
    const id = String(conversation.seq * 10 + index + 1);
    const authorId = bySource ? channel.author_id : conversation.author_id;
    const platformId = String(random.int(10_000_000, 99_999_999));
    items.push({
      id,
      parent: index === 0 ? conversation.id : items[index - 1]!.id,
      type: conversation.contains_private ? 'direct_message' : index === 0 ? 'post' : 'reply',
      platform: channel.platform,
      platform_id: platformId,
      is_private: conversation.contains_private,
      is_priority: conversation.is_priority && index === 0,
      is_by_source: bySource,
      createdMs,
      importedMs: notAfterWindow(data, createdMs + random.int(1, 900) * SECOND_MS + random.int(0, 999), createdMs),
      text: words.fillNumber(random.pick(bySource ? words.REPLY_TEXTS : words.INBOUND_TEXTS), random.int(2, 99_999)),
      link: conversation.contains_private ? null : `https://${channel.platform}.example/${authorId.slice(2)}/posts/${platformId}`,
      tag_ids: conversation.tag_ids.filter(() => random.chance(0.5)),
      author_id: authorId,
      channel_ids: [channel.id],
      user_id: viaService ? random.pick(data.users).id : null,
      attachments: random.chance(0.2)
        ? [
            {
              description: random.chance(0.5) ? null : 'Photo of the problem',
              media: [{ src: `https://media.sandbox.example/${id}.jpg`, alt: null, href: null, type: 'image' }],
              caption: null,
              href: null,
              properties: [],
              name: `${id}.jpg`,
            },
          ]
        : [],
      sentiment: random.chance(0.5)
        ? {
            createdMs: notAfterWindow(data, createdMs + 60 * SECOND_MS, createdMs),
            created_by: random.pick(data.users).id,
            value: Math.round((random.next() * 2 - 1) * 100) / 100,
          }
        : null,
    });
  }
  return items;
}

export function notesOf(data: SandboxData, conversation: ConversationRecord): NoteRecord[] {
  const random = new Random(hash32(data.seed, 'notes', conversation.id));
  return Array.from({ length: random.int(0, 2) }, (_, index) => ({
    id: `n${conversation.id}-${index + 1}`,
    conversation_id: conversation.id,
    text: random.pick(words.NOTE_TEXTS),
    createdMs: notAfterWindow(data, conversation.newestMs + random.int(60, 86_400) * SECOND_MS, conversation.newestMs),
    user_id: random.pick(data.users).id,
  }));
}

export function actionsOf(data: SandboxData, conversation: ConversationRecord): ActionRecord[] {
  const random = new Random(hash32(data.seed, 'actions', conversation.id));
  return Array.from({ length: random.int(1, 2) }, (_, index) => ({
    id: `a${conversation.id}-${index + 1}`,
    conversation_id: conversation.id,
    type: random.pick(words.ACTION_TYPES),
    createdMs: notAfterWindow(data, conversation.oldestMs + random.int(60, 86_400) * SECOND_MS, conversation.oldestMs),
    user_id: random.pick(data.users).id,
  }));
}
