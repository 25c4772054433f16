/** Content items of a conversation (`conversations content ID`): side-loaded, always whole. */
export const CONTENT_ITEM = {
  noun: 'content item',
  fields: [
    'id',
    'parent',
    'type',
    'platform',
    'platform_id',
    'is_private',
    'is_priority',
    'is_by_source',
    'created_date',
    'imported_date',
    'imported_delta',
    'text',
    'link',
    'tags',
    'author',
    'channels',
    'user',
    'attachments',
    'sentiment',
  ],
  // imported_date: the only real time of a restricted microblog item (its created_date is a placeholder).
  defaultColumns: ['id', 'created_date', 'imported_date', 'platform', 'type', 'author.id', 'is_by_source', 'text'],
} as const;

/** The rows of `conversations content`: each item with the id of its conversation. */
export const CONTENT_ROWS = {
  columns: ['conversation_id', ...CONTENT_ITEM.fields],
  defaultColumns: ['conversation_id', ...CONTENT_ITEM.defaultColumns],
} as const;

/**
 * Restricted content items of the microblog platform (spec: Content item) carry placeholders
 * instead of data: a creation date fixed at the epoch, a link whose fragment says so, no text.
 */
export const PLACEHOLDER_CREATED_DATE = '1970-01-01T00:00:00';
export const PLACEHOLDER_LINK_FRAGMENT = 'this-info-is-unavailable';

type Item = Readonly<Record<string, unknown>>;

/** The creation date is the placeholder: the import date is the only real timing. */
export function hasPlaceholderDate(item: Item): boolean {
  return typeof item.created_date === 'string' && item.created_date.startsWith(PLACEHOLDER_CREATED_DATE);
}

/** No text on a microblog item: withheld (a restricted item), not merely empty. */
export function hasWithheldText(item: Item): boolean {
  return item.platform === 'microblog' && (item.text === null || item.text === undefined || item.text === '');
}

export function isPlaceholderLink(link: unknown): boolean {
  if (typeof link !== 'string') return false;
  const hash = link.indexOf('#');
  return hash >= 0 && link.slice(hash + 1) === PLACEHOLDER_LINK_FRAGMENT;
}

/** When the item was written, as far as the record tells: the import date stands in for a placeholder. */
export function itemTime(item: Item): string {
  const created = typeof item.created_date === 'string' ? item.created_date : '';
  if (hasPlaceholderDate(item) && typeof item.imported_date === 'string') return item.imported_date;
  return created;
}

/**
 * `itemTime` as an instant (ms, UTC), or undefined where the record does not tell one: a
 * placeholder date with no import date, or a date missing or not a date. The service writes UTC
 * without a zone; one written with a zone is read with it.
 */
export function itemInstant(item: Item): number | undefined {
  const time = itemTime(item);
  if (time === '' || time.startsWith(PLACEHOLDER_CREATED_DATE)) return undefined;
  const at = Date.parse(/(?:z|[+-]\d\d:?\d\d)$/i.test(time) ? time : `${time}Z`);
  return Number.isNaN(at) ? undefined : at;
}

/** What `--placeholders` accepts: `null` writes the placeholders as null (an empty cell in csv/tsv). */
export const PLACEHOLDER_MODES = ['null'] as const;

/** What a placeholder is shown as: null for a script (--placeholders null), words for a person. */
interface PlaceholderShown {
  date: string | null;
  link: string | null;
  /** A withheld text: left as it is where undefined. */
  text?: string;
}

const AS_NULL: PlaceholderShown = { date: null, link: null };
/** The words the thread view (contentBlock) says them in, so that every terminal view says the same. */
export const PLACEHOLDER_WORDS = { date: '(time unavailable)', link: '(link unavailable)', text: '(text unavailable)' } as const;

/**
 * `record` with the microblog placeholders (the epoch created_date, the unavailable link) as null:
 * a content item (a row of `conversations content`), and the items a record carries side-loaded
 * (`--include content`). Other records and values pass as the service sent them.
 */
export function nullPlaceholders(record: Record<string, unknown>): Record<string, unknown> {
  return showPlaceholders(record, AS_NULL);
}

/** `record` with the placeholders said in words (a table or a `get` on a terminal): never shown as data to a person. */
export function placeholdersInWords(record: Record<string, unknown>): Record<string, unknown> {
  return showPlaceholders(record, PLACEHOLDER_WORDS);
}

function showPlaceholders(record: Record<string, unknown>, shown: PlaceholderShown): Record<string, unknown> {
  const content = record.content;
  const own = Object.hasOwn(record, 'is_by_source') ? itemShowing(record, shown) : record;
  return Array.isArray(content) ? { ...own, content: content.map((item: unknown) => (isRecord(item) ? itemShowing(item, shown) : item)) } : own;
}

function itemShowing(item: Record<string, unknown>, shown: PlaceholderShown): Record<string, unknown> {
  const date = hasPlaceholderDate(item);
  const link = isPlaceholderLink(item.link);
  const text = shown.text !== undefined && hasWithheldText(item);
  if (!date && !link && !text) return item;
  return { ...item, ...(date && { created_date: shown.date }), ...(link && { link: shown.link }), ...(text && { text: shown.text }) };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
