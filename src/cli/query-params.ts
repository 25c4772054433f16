/** From parsed flags to the service's query parameters (filters, the fields an output needs), checked before anything is sent. */
import { UsageError } from '../core/errors.js';
import { type Bound, OPEN_FROM, OPEN_TO, parseEnum, parseEnumList, parseList, parseRange, rangeParams } from '../core/parse.js';
import type { FilterSpec, ResourceSpec, Shape } from '../catalogue/index.js';
import type { QueryParams } from '../http/transport.js';

/** Value of a `--x`/`--no-x` switch given both ways. */
export const BOTH_GIVEN = 'both';

export function offFlagOf(filter: FilterSpec & { kind: 'switch' }): string {
  return filter.offFlag ?? `no-${filter.flag}`;
}

/** The filter flags given, by name without dashes (`assigned-to`): a string, a repeatable flag's strings, a switch's true/false/BOTH_GIVEN. */
export type FilterValues = Readonly<Record<string, string | string[] | boolean | undefined>>;

/** The filter parameters of a list, checked locally (exit 2 before any request). */
export function filterParams(spec: ResourceSpec, values: FilterValues, now: number, filters = spec.filters): Array<[string, string]> {
  for (const [a, b] of spec.conflicts ?? []) {
    if (values[a] !== undefined && values[b] !== undefined) throw new UsageError(`--${a} and --${b} cannot be used together`);
  }
  return filters.flatMap((filter) => paramsOf(filter, values, now));
}

/** One filter's parameters from the flags given (none when its flag is not). */
function paramsOf(filter: FilterSpec, values: FilterValues, now: number): Array<[string, string]> {
  const raw = values[filter.flag];
  if (filter.kind === 'switch') return switchParams(filter, raw, values);
  if (raw === undefined) return [];
  const flag = `--${filter.flag}`;
  switch (filter.kind) {
    case 'text': {
      const texts = filter.repeat ? (raw as string[]).flatMap(parseList) : [raw as string];
      if (texts.length === 0 || texts.some((v) => v === '')) throw new UsageError(`${flag}: needs a value`);
      return texts.map((value) => [filter.param, value]);
    }
    case 'enum': {
      const chosen = filter.repeat
        ? (raw as string[]).flatMap((text) => parseEnumList(text, flag, filter.values))
        : [parseEnum(raw as string, flag, filter.values)];
      if (chosen.length === 0) throw new UsageError(`${flag}: needs one or more of ${filter.values.join(', ')}`);
      return chosen.map((value) => [filter.param, value]);
    }
    case 'range': {
      const bounds = parseRange(raw as string, flag, now);
      const refused = bounds.find((b) => filter.ops && !filter.ops.includes(b.op));
      if (refused)
        throw new UsageError(`${flag}: the service takes no ${refused.op}: bound here; use ${filter.ops!.map((op) => `${op}:`).join(', ')} or FROM..TO`);
      return rangeParams(filter.param, filter.pair ? asPair(bounds) : bounds);
    }
  }
}

/** A `--x`/`--no-x` switch: true, false, or nothing; both given is a usage error. */
function switchParams(filter: FilterSpec & { kind: 'switch' }, raw: FilterValues[string], values: FilterValues): Array<[string, string]> {
  const off = filter.offFlag ? values[filter.offFlag] : undefined;
  if ((raw === true && off === true) || raw === BOTH_GIVEN) throw new UsageError(`--${filter.flag} and --${offFlagOf(filter)} cannot be used together`);
  if (raw === true) return [[filter.param, 'true']];
  if (raw === false || off === true) return [[filter.param, 'false']];
  return [];
}

/** `bounds` with an open side closed by a bound no record passes (never today: dates may lie ahead), lower bound first. */
function asPair(bounds: readonly Bound[]): Bound[] {
  const lower = bounds.find((b) => b.op === 'gt' || b.op === 'gte') ?? { op: 'gte', date: OPEN_FROM };
  const upper = bounds.find((b) => b.op === 'lt' || b.op === 'lte') ?? { op: 'lt', date: OPEN_TO };
  return [lower, upper];
}

/** The fields a user may ask the service for; id and url come anyway. */
export function requestableFields(spec: ResourceSpec, shape: Shape): string[] {
  return [...spec.fields, ...(shape === 'single' ? (spec.singleFields ?? []) : [])];
}

/**
 * What to ask the service for: the fields the output shows (a computed column's: those it is derived from) and those
 * --fields names. An output of whole records (`allFields`: json, ndjson, one record as a table) shows all unless --fields narrows.
 */
export function fieldsParam(spec: ResourceSpec, shape: Shape, allFields: boolean, columns: readonly string[], fields: string[] | undefined): QueryParams {
  if (!spec.fieldsParam) return [];
  const requestable = requestableFields(spec, shape);
  const computed = new Map((spec.computed ?? []).map((c) => [c.name, c.needs]));
  const shown = columns.map((column) => column.split('.')[0] ?? column).flatMap((head) => computed.get(head) ?? [head]);
  const wanted = allFields ? (fields ?? requestable) : [...(fields ?? []), ...shown];
  const needed = [...new Set(wanted.filter((f) => requestable.includes(f)))];
  return needed.length > 0 ? [['fields', needed.join(',')]] : [];
}
