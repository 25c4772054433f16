/** Finding a resource's description, its default version, and its records in a reply. */
import { idText } from '../../core/exact-json.js';
import { BadReplyError } from '../../core/errors.js';
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
  if (!Array.isArray(list)) throw new BadReplyError(`unexpected reply: no "${spec.envelope.list}" list`);
  list.forEach((record, index) => checkRecord(spec, record, `record ${index + 1} of the "${spec.envelope.list}" list`));
  return list as Record<string, unknown>[];
}

export function unwrapSingle(spec: ResourceSpec, body: unknown): Record<string, unknown> {
  const wrapped = isObject(body) ? body[spec.envelope.single] : undefined;
  // v1 answers with the bare record (no wrapper key).
  const record = wrapped !== undefined ? wrapped : isObject(body) && 'id' in body ? body : undefined;
  if (record === undefined) throw new BadReplyError(`unexpected reply: no "${spec.envelope.single}" record`);
  checkRecord(spec, record, `the "${spec.envelope.single}" record`);
  return record as Record<string, unknown>;
}

/**
 * A record must be an object, and carry an id where the resource has ids: printed anyway, it
 * would be a blank row that looks like data (and an update would act on no id).
 */
function checkRecord(spec: ResourceSpec, record: unknown, what: string): asserts record is Record<string, unknown> {
  if (!isObject(record))
    throw new BadReplyError(
      `unexpected reply: ${what} is not an object (${record === null ? 'null' : Array.isArray(record) ? 'a list' : `a ${typeof record}`})`,
    );
  if (spec.idless) return;
  const id = record.id;
  if (!idText(id)) throw new BadReplyError(`unexpected reply: ${what} has no id`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
