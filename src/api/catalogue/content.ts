/** Content items of a conversation (`conversations content ID`): side-loaded, always whole. */
export const CONTENT_ITEM = {
  noun: 'content item',
  fields: [
    'id', 'parent', 'type', 'platform', 'platform_id', 'is_private', 'is_priority', 'is_by_source', 'created_date', 'imported_date',
    'imported_delta', 'text', 'link', 'tags', 'author', 'channels', 'user', 'attachments', 'sentiment',
  ],
  defaultColumns: ['id', 'created_date', 'platform', 'type', 'author.id', 'is_by_source', 'text'],
} as const;
