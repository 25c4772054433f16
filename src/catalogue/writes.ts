/** The two writes of the API as data: a conversation's PATCH and a report's POST. */
import type { Reference, Version } from './types.js';

/** The statuses a PATCH may set (spec: Conversation status). */
export const UPDATE_STATUSES = ['on_hold', 'closing'] as const;
/** PATCH of a conversation exists in v1.3 only. */
export const PATCH_VERSIONS: readonly Version[] = ['v1.3'];
/** The PATCH's tag options take tag names or ids; tag_ids takes ids (spec: existing active tag ids). */
export const PATCH_REFERENCES: Readonly<Record<'tags' | 'add-tags' | 'remove-tags', Reference>> = {
  tags: { resource: 'tags', send: 'id' },
  'add-tags': { resource: 'tags', send: 'id' },
  'remove-tags': { resource: 'tags', send: 'id' },
};
/** The report POST's target named by a person: a channel by name or id, sent as its id. */
export const REPORT_REFERENCES: Readonly<Record<'channel', Reference>> = {
  channel: { resource: 'channels', send: 'id' },
};
export const DATE_TYPES = ['created_date', 'updated_date'] as const;
export const REPORT_FORMATS = ['xlsx', 'csv', 'json'] as const;
