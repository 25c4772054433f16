/** Finding a resource's description, its default version, and its records in a reply. */
import { CarectlError } from '../../core/errors.js';
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

/** Records out of a reply, whatever the envelope of that version. */
export function unwrapList(spec: ResourceSpec, body: unknown): Record<string, unknown>[] {
  if (Array.isArray(body)) return body as Record<string, unknown>[];
  const list = (body as Record<string, unknown> | null)?.[spec.envelope.list];
  if (!Array.isArray(list)) throw new CarectlError(`unexpected reply: no "${spec.envelope.list}" list`);
  return list as Record<string, unknown>[];
}

export function unwrapSingle(spec: ResourceSpec, body: unknown): Record<string, unknown> {
  const wrapped = (body as Record<string, unknown> | null)?.[spec.envelope.single];
  if (wrapped && typeof wrapped === 'object') return wrapped as Record<string, unknown>;
  if (body && typeof body === 'object' && !Array.isArray(body) && 'id' in body) return body as Record<string, unknown>;
  throw new CarectlError(`unexpected reply: no "${spec.envelope.single}" record`);
}
