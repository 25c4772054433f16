/** The shape of a resource description: see resources.ts for the descriptions themselves. */
import type { BoundOp } from '../core/parse.js';

export const VERSIONS = ['v1', 'v1.1', 'v1.2', 'v1.3', 'api/1'] as const;
export type Version = (typeof VERSIONS)[number];

/** How a paging style sizes its pages and moves through a list. */
export interface PagingStyleSpec {
  /** Query parameter setting the page size on the first request. */
  sizeParam: string | null;
  /** The cursor its next_page links carry. */
  cursorParam: string | null;
}

/**
 * The service's paging styles:
 * skip:   next_page/prev_page links carrying `skip` (page size via `page_size`)
 * offset: next_page links carrying `limit`/`offset` (page size via `limit`)
 * token:  next_page links carrying an opaque `page_token` (api/1)
 * none:   one reply holds the whole list
 */
export const PAGING_STYLES = {
  skip: { sizeParam: 'page_size', cursorParam: 'skip' },
  offset: { sizeParam: 'limit', cursorParam: 'offset' },
  token: { sizeParam: 'page_size', cursorParam: 'page_token' },
  none: { sizeParam: null, cursorParam: null },
} as const satisfies Record<string, PagingStyleSpec>;

export type PagingStyle = keyof typeof PAGING_STYLES;

interface FilterBase {
  /** Long flag name without dashes. */
  flag: string;
  /** Query parameter of the spec. */
  param: string;
  help: string;
  /** Also offered by `get` (include shapes a single reply too). */
  onGet?: boolean;
  /** Versions that know this parameter, when not all of the resource's. */
  versions?: readonly Version[];
  /** The value names a record of another resource, by name or id (a tag, a channel). */
  refers?: Reference;
}

/**
 * An option whose value is a record of another resource (a tag, a channel), given by name or id
 * (resolved by src/cli/names.ts), sent as what the service takes for it.
 */
export interface Reference {
  /** The resource named: one with `names`. */
  resource: string;
  /** What the service takes: the record's id, or its name. */
  send: 'id' | 'name';
}

/** A value passed through as is. `repeat`: the flag may be given several times and takes comma lists; each value becomes its own parameter. */
export interface TextFilter extends FilterBase {
  kind: 'text';
  valueName: string;
  repeat?: boolean;
  /** Common values, named in help and offered by completion but not checked: the service may know others. */
  examples?: readonly string[];
}

/** A value checked locally against the accepted values. `repeat` as for text. */
export interface EnumFilter extends FilterBase {
  kind: 'enum';
  valueName: string;
  values: readonly string[];
  repeat?: boolean;
}

/** A flag pair that sends `param=true` or `param=false` (`--private` / `--no-private`). */
export interface SwitchFilter extends FilterBase {
  kind: 'switch';
  /** Flag that sends false; defaults to `no-<flag>`. */
  offFlag?: string;
  offHelp: string;
}

/** A RANGE of dates, sent as `<param>_gte`, `<param>_lte`, … */
export interface RangeFilter extends FilterBase {
  kind: 'range';
  /** Modifiers the service takes for this parameter, when not all four. */
  ops?: readonly BoundOp[];
  /**
   * The spec wants the parameter supplied as a pair (a sort date): a one-sided RANGE is closed on
   * its open side by a day no record passes (1900-01-01, 9999-12-31: sort dates may lie ahead).
   */
  pair?: true;
}

export type FilterSpec = TextFilter | EnumFilter | SwitchFilter | RangeFilter;

/**
 * A column the service does not send, derived from fields it does (a report's state): shown by
 * table, csv and tsv, requestable with --columns, its `needs` asked for whenever it is shown.
 */
export interface ComputedField {
  name: string;
  from(record: Readonly<Record<string, unknown>>): unknown;
  /** The fields it is derived from. */
  needs: readonly string[];
}

export interface ResourceSpec {
  /** Command name. */
  name: string;
  /** For help texts: "conversation". */
  noun: string;
  path: string;
  versions: readonly Version[];
  /** Wrapper keys; `bareIn` lists versions whose replies carry no wrapper. */
  envelope: { list: string; single: string; bareIn?: readonly Version[] };
  /** Requestable `fields` values (besides id and url, which always come back). */
  fields: readonly string[];
  /** Extra fields only the single reply can carry (Shape 'single'). */
  singleFields?: readonly string[];
  /** Top-level keys the client adds to each record (side loading), usable as columns. */
  sideColumns?: readonly string[];
  /** Columns computed from the record's fields. */
  computed?: readonly ComputedField[];
  /**
   * Side-loaded top-level arrays (`include=content`) attached to each record by its id list, or,
   * where a record has no such list, by the items' `parent` field (the record's id, or an earlier
   * item's) when one is named.
   */
  sideloads?: readonly { key: string; ids: string; parent?: string }[];
  /** Whether the service takes a `fields` parameter (api/1 replies are always whole). */
  fieldsParam: boolean;
  defaultColumns: readonly string[];
  paging: PagingStyle;
  filters: readonly FilterSpec[];
  /** Records without an `id` (annotations): not refused for lacking one. */
  idless?: boolean;
  /** Verbs generated for this resource. */
  verbs: readonly ('list' | 'get')[];
  /** Lists selected by ids (authors): the parameter, and how many ids one request may carry. */
  listByIds?: { param: string; max: number };
  /**
   * The service refuses a list without one of these parameters; with none given, the list runs
   * once per value of `union.param` (spec rule 1: is_priority true, then false).
   */
  requireOneOf?: { params: readonly string[]; union: { param: string; values: readonly string[] } };
  /**
   * Lists ordered by a date the query can bound (conversations): the sort parameter, the date
   * fields, and the order when none is asked for. Their links may tighten those bounds, and a
   * list can be split into slices of the sort date.
   */
  sortDates?: {
    param: string;
    fields: readonly string[];
    default: string;
    /** The sort date an incremental list (--state, --watch) follows: the one a change moves forward (default: `default`). */
    moves?: string;
  };
  /** Records a person names (tags, channels): the field holding the name, and the one saying whether it is in use. */
  names?: { field: string; active?: string };
  /** Other names of the group besides its singular (which every group has): what people type. */
  aliases?: readonly string[];
  /** Pairs of flags that cannot be used together. */
  conflicts?: readonly (readonly [string, string])[];
  examples: { list?: readonly string[]; get?: readonly string[] };
}

/** What a read of a resource is: a list's records, or one record's reply (which may carry its singleFields). */
export type Shape = 'list' | 'single';
