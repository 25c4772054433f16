/**
 * Options that name a record of another resource (a tag, a channel) take its name or its id, as a
 * person knows it; the catalogue says which (`FilterSpec.refers`, `PATCH_REFERENCES`) and what the
 * service takes for it. Each resource is read once per run, one list of all its pages, however
 * many values and ids use it. A value that names no record, or several (an id that is another
 * record's name too), is a usage error naming the candidates, raised before anything is written;
 * `id:VALUE` and `name:VALUE` say which is meant.
 */
import { UsageError } from '../core/errors.js';
import { idText } from '../core/exact-json.js';
import { editDistance, nearEnough } from '../core/closest.js';
import type { QueryParams } from '../http/transport.js';
import { defaultVersion, resourceByName, type FilterSpec, type Reference, type ResourceSpec, type Version } from '../catalogue/index.js';
import type { ApiClient } from '../api/client.js';
import { runList, startPoint } from '../api/list-run.js';
import { listPlan } from '../api/paging.js';
import type { Scheduler } from '../api/scheduler.js';

/** A record as a person names it. `active` is false only where the service says so. */
export interface Named {
  id: string;
  name: string;
  active: boolean;
}

/** Candidates a refusal names at most. */
const CLOSEST = 3;

export class NameResolver {
  private readonly lists = new Map<string, Promise<Named[]>>();

  /** `version`: the command's, used where the named resource has it. */
  constructor(
    private readonly api: ApiClient,
    private readonly scheduler: Scheduler,
    private readonly version?: Version,
  ) {}

  /** Every record of `resource` with its name, read once per run. */
  records(resource: string): Promise<Named[]> {
    if (!this.lists.has(resource)) this.lists.set(resource, this.read(resourceByName(resource)));
    return this.lists.get(resource) as Promise<Named[]>;
  }

  /** The records `values` of `--flag` name, in order; a value that names none or several is exit 2. */
  async resolve(flag: string, ref: Reference, values: readonly string[]): Promise<Named[]> {
    if (values.length === 0) return [];
    const records = await this.records(ref.resource);
    return values.map((value) => pick(flag, resourceByName(ref.resource), records, value));
  }

  /** The record with this id, if the list holds it. */
  async byId(resource: string, id: string): Promise<Named | undefined> {
    return (await this.records(resource)).find((record) => record.id === id);
  }

  private async read(spec: ResourceSpec): Promise<Named[]> {
    const names = spec.names;
    if (!names) throw new Error(`${spec.name}: the catalogue names no name field`);
    const version = this.version && spec.versions.includes(this.version) ? this.version : defaultVersion(spec);
    const fields = [names.field, ...(names.active ? [names.active] : [])];
    const plan = listPlan(spec, version, spec.fieldsParam ? [['fields', fields.join(',')]] : [], { pageSize: 50 });
    const found: Named[] = [];
    const write = (record: Record<string, unknown>): Promise<void> => {
      const id = idText(record.id);
      const name = record[names.field];
      if (id !== undefined) found.push({ id, name: typeof name === 'string' ? name : '', active: !names.active || record[names.active] !== false });
      return Promise.resolve();
    };
    const done = (): Promise<void> => Promise.resolve();
    const writer = { write, endPage: done, end: done };
    await runList({
      plan,
      source: this.api.pages(spec, version),
      writer,
      start: startPoint(plan, undefined),
      scheduler: this.scheduler,
      notice: () => undefined,
    });
    return found;
  }
}

/** The query with each value of a referring filter replaced by what the service takes (a channel's id for its name). */
export async function resolveQuery(resolver: NameResolver, filters: readonly FilterSpec[], query: QueryParams): Promise<Array<[string, string]>> {
  const resolved: Array<[string, string]> = [];
  for (const [param, value] of query) {
    const filter = filters.find((candidate) => candidate.param === param && candidate.refers);
    const [record] = filter?.refers ? await resolver.resolve(`--${filter.flag}`, filter.refers, [value]) : [];
    resolved.push([param, record === undefined ? value : filter?.refers?.send === 'id' ? record.id : record.name]);
  }
  return resolved;
}

function pick(flag: string, spec: ResourceSpec, records: readonly Named[], value: string): Named {
  const { byId, byName } = matching(records, value);
  const others = byName.filter((record) => !byId.includes(record));
  if (byId.length > 0 && others.length > 0) {
    const plain = value.replace(/^(id|name):/, '');
    throw new UsageError(
      `${flag}: "${value}" is the id of ${spec.noun} ${byId.map(describe).join(', ')} and the name of ${spec.noun} ${others.map(describe).join(', ')}; say which: id:${plain} or name:${plain}`,
    );
  }
  const matches = byId.length > 0 ? byId : byName;
  if (matches.length === 1) return matches[0] as Named;
  if (matches.length > 1) {
    throw new UsageError(`${flag}: "${value}" names ${matches.length} ${spec.noun}s: ${matches.map(describe).join(', ')}; give the id`);
  }
  const closest = closestTo(records, value);
  const offer = closest.length > 0 ? `closest: ${closest.map(describe).join(', ')}` : `carectl ${spec.name} list shows them`;
  throw new UsageError(`${flag}: no ${spec.noun} has the name or id "${value}" (${offer})`);
}

/**
 * The records whose name, given back to an option, finds that record alone (by `matching`'s rule:
 * no record has it as its id, no other record has it exactly, it does not begin `id:` or `name:`).
 */
export function namedAlone(records: readonly Named[]): Set<Named> {
  const ids = new Set(records.map((record) => record.id));
  const times = new Map<string, number>();
  for (const { name } of records) times.set(name, (times.get(name) ?? 0) + 1);
  return new Set(records.filter((record) => !ids.has(record.name) && times.get(record.name) === 1 && !SAID.test(record.name)));
}

/** How a value says it is an id or a name. */
const SAID = /^(id|name):(.*)$/s;

/**
 * The records whose id is the value, and those whose name is (exactly, else in any case: the
 * service's own spelling is sent). `id:VALUE` and `name:VALUE` look at one of the two only: a
 * name can be another record's id (a tag named "7004").
 */
function matching(records: readonly Named[], value: string): { byId: Named[]; byName: Named[] } {
  const said = SAID.exec(value);
  const wanted = said ? (said[2] as string) : value;
  const byId = said?.[1] === 'name' ? [] : records.filter((record) => record.id === wanted);
  if (said?.[1] === 'id') return { byId, byName: [] };
  const exact = records.filter((record) => record.name === wanted);
  const folded = fold(wanted);
  return { byId, byName: exact.length > 0 ? exact : records.filter((record) => fold(record.name) === folded) };
}

function describe(record: Named): string {
  return `${record.name} (${record.id}${record.active ? '' : ', inactive'})`;
}

function fold(text: string): string {
  return text.normalize('NFKC').trim().toLowerCase();
}

/** Names within a few edits of the value, or holding it, nearest first. */
function closestTo(records: readonly Named[], value: string): Named[] {
  const wanted = fold(value);
  const near = nearEnough(wanted.length);
  return records
    .map((record) => {
      const name = fold(record.name);
      return { record, distance: name.includes(wanted) || wanted.includes(name) ? 0.5 : editDistance(wanted, name) };
    })
    .filter(({ record, distance }) => record.name !== '' && distance <= near)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, CLOSEST)
    .map(({ record }) => record);
}
