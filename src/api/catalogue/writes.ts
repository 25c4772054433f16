/** The two writes of the API as data: a conversation's PATCH and a report's POST. */
import type { Version } from './types.js';

/** The statuses a PATCH may set (spec: Conversation status). */
export const UPDATE_STATUSES = ['on_hold', 'closing'] as const;
/** PATCH of a conversation exists in v1.3 only. */
export const PATCH_VERSIONS: readonly Version[] = ['v1.3'];
export const DATE_TYPES = ['created_date', 'updated_date'] as const;
export const REPORT_FORMATS = ['xlsx', 'csv', 'json'] as const;
