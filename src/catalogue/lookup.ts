/** Finding a resource's description, its default version, and its records in a reply (with their side-loaded items). */
import { idText, isObject, stringifyJson } from '../core/exact-json.js';
import { BadReplyError } from '../core/errors.js';
import { RESOURCES } from './resources.js';
import type { ResourceSpec, Version } from './types.js';

export function resourceByName(name: string): ResourceSpec {
  const spec = RESOURCES.find((r) => r.name === name);
  if (!spec) throw new Error(`unknown resource ${name}`);
  return spec;
}

/** The newest version a resource exists in: the default version segment. */
export function defaultVersion(spec: ResourceSpec): Version {
  return spec.versions[spec.versions.length - 1] as Version;
}

/** Records out of a reply, whatever the envelope of that version; each checked (see checkRecord). */
export function unwrapList(spec: ResourceSpec, body: unknown): Record<string, unknown>[] {
  const list = Array.isArray(body) ? body : isObject(body) ? body[spec.envelope.list] : undefined;
  if (!Array.isArray(list)) throw new BadReplyError(`unexpected reply: no "${spec.envelope.list}" list${serviceWords(body)}`);
  list.forEach((record, index) => checkRecord(spec, record, index));
  return list as Record<string, unknown>[];
}

export function unwrapSingle(spec: ResourceSpec, body: unknown): Record<string, unknown> {
  const wrapped = isObject(body) ? body[spec.envelope.single] : undefined;
  // v1 answers with the bare record (no wrapper key).
  const record = wrapped !== undefined ? wrapped : isObject(body) && 'id' in body ? body : undefined;
  if (record === undefined) throw new BadReplyError(`unexpected reply: no "${spec.envelope.single}" record${serviceWords(body)}`);
  checkRecord(spec, record);
  return record as Record<string, unknown>;
}

/** The service's words where a reply in place of the record is the spec's error body ({status: "error", message}). */
function serviceWords(body: unknown): string {
  const said = isObject(body) && body.status === 'error' ? body.message : undefined;
  return typeof said === 'string' && said !== '' ? ` (the service answered with an error: ${said})` : '';
}

/**
 * A record must be an object, and carry an id where the resource has ids: printed anyway, it
 * would be a blank row that looks like data (and an update would act on no id). The record is
 * named (by its place in a list, else as the reply's record) only for an error: not a string
 * made for every record of an export.
 */
function checkRecord(spec: ResourceSpec, record: unknown, index?: number): asserts record is Record<string, unknown> {
  if (!isObject(record))
    throw new BadReplyError(
      `unexpected reply: ${recordName(spec, index)} is not an object (${record === null ? 'null' : Array.isArray(record) ? 'a list' : `a ${typeof record}`})`,
    );
  if (spec.idless) return;
  const id = record.id;
  if (!idText(id)) throw new BadReplyError(`unexpected reply: ${recordName(spec, index)} has no id`);
}

function recordName(spec: ResourceSpec, index: number | undefined): string {
  return index === undefined ? `the "${spec.envelope.single}" record` : `record ${index + 1} of the "${spec.envelope.list}" list`;
}

type Item = Record<string, unknown>;

/**
 * With include=content (notes, actions), each record carries its own items, found by its id list,
 * or by the items' parents where it has none; an item without a parent (notes and actions have
 * none at all) in a reply of one record is that record's. An item that is not an object with an id, an id the reply does not hold,
 * or a side-load that is not a list is left out, not a failure of the page: `notice` says so,
 * once for the reply.
 */
export function attachSideloads(spec: ResourceSpec, body: unknown, records: Item[], notice?: (line: string) => void): Item[] {
  if (!spec.sideloads || !isObject(body)) return records;
  const problems: string[] = [];
  for (const { key, ids, parent } of spec.sideloads) {
    const array = body[key];
    if (array === undefined) continue;
    if (!Array.isArray(array)) {
      problems.push(`its "${key}" is not a list`);
      continue;
    }
    const items = array.filter((item): item is Item => isObject(item) && idText(item.id) !== undefined);
    if (items.length < array.length) problems.push(`${array.length - items.length} of its ${key} items are not objects with an id`);
    const byId = new Map(items.map((item) => [idText(item.id)!, item]));
    let byOwner: Map<string, Item[]> | undefined;
    let unowned = 0;
    for (const record of records) {
      const wanted = record[ids];
      if (Array.isArray(wanted)) {
        const absent = wanted.filter((id) => !byId.has(idText(id) ?? ''));
        if (absent.length > 0)
          problems.push(
            `${spec.noun} ${idText(record.id) ?? ''} names ${absent.length} ${key} items it does not hold (${shortList(absent.map((id) => idText(id) ?? String(stringifyJson(id))))})`,
          );
        record[key] = wanted.flatMap((id) => byId.get(idText(id) ?? '') ?? []);
      } else if (parent !== undefined) {
        byOwner ??= itemsByOwner(
          items,
          byId,
          parent,
          records.map((one) => idText(one.id) ?? ''),
        );
        record[key] = byOwner.get(idText(record.id) ?? '') ?? [];
      } else if (records.length === 1) {
        // Nothing names their owner (the spec shows no shape for notes and actions): a reply of one record holds its own.
        record[key] = items;
      } else unowned++;
    }
    if (unowned > 0 && items.length > 0) problems.push(`its ${items.length} ${key} items name no ${spec.noun} (no ${ids})`);
  }
  if (problems.length > 0) notice?.(`carectl: the service's reply left out content: ${problems.join('; ')}`);
  return records;
}

/** At most three values, then how many more. */
function shortList(values: string[]): string {
  return values.length <= 3 ? values.join(', ') : `${values.slice(0, 3).join(', ')} and ${values.length - 3} more`;
}

/**
 * Items by the record they belong to: an item's parent is that record, or an earlier item whose
 * own parent leads there; a chain that loops or ends nowhere belongs to no record. A parent naming
 * one of `records` is that record, even where an item has the same id (they are different id spaces).
 * A chain ending in an item without a parent belongs to the reply's record where it holds only one.
 */
function itemsByOwner(items: readonly Item[], byId: ReadonlyMap<string, Item>, parent: string, records: readonly string[]): Map<string, Item[]> {
  const owners = new Set(records);
  const lone = records.length === 1 ? records[0] : undefined;
  const ownerOf = new Map<Item, string | undefined>();
  // A loop, not recursion: a hostile reply may hold a chain of thousands of items.
  const owner = (item: Item): string | undefined => {
    const chain = new Set<Item>();
    let current: Item | undefined = item;
    let found: string | undefined;
    while (current !== undefined) {
      if (ownerOf.has(current)) {
        found = ownerOf.get(current);
        break;
      }
      if (chain.has(current)) break;
      chain.add(current);
      const up = idText(current[parent]);
      if (up === undefined) {
        found = lone;
        break;
      }
      if (owners.has(up)) {
        found = up;
        break;
      }
      const next = byId.get(up);
      if (next === undefined) found = up;
      current = next;
    }
    for (const link of chain) ownerOf.set(link, found);
    return found;
  };
  const byOwner = new Map<string, Item[]>();
  for (const item of items) {
    const id = owner(item);
    if (id === undefined) continue;
    const owned = byOwner.get(id);
    if (owned) owned.push(item);
    else byOwner.set(id, [item]);
  }
  return byOwner;
}
