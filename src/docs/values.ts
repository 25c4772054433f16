/**
 * The words an option or argument accepts, for completion and the man page. Commands check
 * their values themselves (src/core/parse.ts) rather than with commander's choices(), which would
 * change the error messages, so the values come from the same data the commands check against.
 */
import type { Option } from 'commander';
import { FORMATS } from '../output/index.js';
import { DATE_TYPES, PATCH_REFERENCES, REPORT_FORMATS, RESOURCES, UPDATE_STATUSES, VERSIONS } from '../catalogue/index.js';
import { requestableFields } from '../cli/query-params.js';
import { CONFIG_KEYS } from '../config/keys.js';
import { METHODS } from '../http/methods.js';

/** Commands that none of the global options apply to: completion offers only their own. */
export const OWN_OPTIONS_ONLY: readonly string[] = ['sandbox', 'completion', 'version', 'help'];

/** Options of carectl itself (global options), by long name. */
const GLOBAL_VALUES: Readonly<Record<string, readonly string[]>> = {
  '--output': FORMATS,
  '--api-version': VERSIONS,
};

/**
 * Options whose words are read when completing, by command path and long name ('' for carectl
 * itself): what `carectl __complete` is asked for. Options that name a record of another resource
 * are found in the catalogue instead (dynamicValues).
 */
const DYNAMIC_VALUES: Readonly<Record<string, string>> = {
  ' --profile': 'profiles',
  'conversations update --close-reason': 'close-reasons',
};

/**
 * What `carectl __complete` gives an option's words: a filter that refers to a resource
 * (`FilterSpec.refers`) or a write's reference (`PATCH_REFERENCES`) completes from that
 * resource's names, the others as DYNAMIC_VALUES has them.
 */
export function dynamicValues(path: readonly string[], long: string): string | undefined {
  const filters = RESOURCES.find((spec) => spec.name === path[0])?.filters ?? [];
  const flag = long.slice(2);
  const refers =
    path.length > 1 ? (filters.find((filter) => filter.flag === flag)?.refers ?? PATCH_REFERENCES[flag as keyof typeof PATCH_REFERENCES]) : undefined;
  return refers ? `names ${refers.resource}` : DYNAMIC_VALUES[`${path.join(' ')} ${long}`];
}

/**
 * Values that verbs with their own logic check against the catalogue's lists of the two writes
 * (and the HTTP methods of `carectl api`), by command path and long name. The docs test checks that each entry names an option
 * of the tree and that each word appears in that option's help.
 */
export const COMMAND_VALUES: Readonly<Record<string, readonly string[]>> = {
  'conversations update --status': UPDATE_STATUSES,
  'reports create --date-type': DATE_TYPES,
  'reports create --format': REPORT_FORMATS,
  'api --method': METHODS,
};

/** The words of positional arguments, by command path: one entry per argument, in order. */
export interface ArgumentValues {
  words?: readonly string[];
  /** Words that depend on the argument before (`config set output <value>`). */
  after?: Readonly<Record<string, readonly string[]>>;
  /** Words read when completing: what `carectl __complete` is asked for ('ids tags'). */
  run?: string;
}

const CONFIG_VALUES: Readonly<Record<string, readonly string[]>> = { output: FORMATS, 'api-version': VERSIONS };

export const ARGUMENT_VALUES: Readonly<Record<string, readonly ArgumentValues[]>> = {
  'config set': [{ words: CONFIG_KEYS }, { after: CONFIG_VALUES }],
  'config get': [{ words: CONFIG_KEYS }],
  'config unset': [{ words: CONFIG_KEYS }],
};

/** The words of a command's arguments: ARGUMENT_VALUES', or after `get` the ids of a resource whose records the catalogue names (`ResourceSpec.names`) or can sort by the date they last moved (conversations: the most recent). */
export function argumentValues(path: readonly string[]): readonly ArgumentValues[] | undefined {
  const named = path.length === 2 && path[1] === 'get' && RESOURCES.some((spec) => spec.name === path[0] && (spec.names ?? spec.sortDates));
  return ARGUMENT_VALUES[path.join(' ')] ?? (named ? [{ run: `ids ${path[0]}` }] : undefined);
}

export function optionValues(path: readonly string[], option: Option): readonly string[] | undefined {
  if (option.argChoices) return option.argChoices;
  if (option.long === undefined) return undefined;
  if (path.length === 0) return GLOBAL_VALUES[option.long];
  return resourceFilterValues(path, option.long) ?? COMMAND_VALUES[`${path.join(' ')} ${option.long}`];
}

/** The values of the catalogue's enum filters, a text filter's examples, or --fields, on the list verb (and get, for what it shares). */
function resourceFilterValues(path: readonly string[], long: string): readonly string[] | undefined {
  const [name, verb] = path;
  const spec = RESOURCES.find((resource) => resource.name === name);
  if (spec && long === '--fields' && (verb === 'list' || verb === 'get')) return requestableFields(spec, verb === 'get' ? 'single' : 'list');
  for (const filter of spec?.filters ?? []) {
    const values = filter.kind === 'enum' ? filter.values : filter.kind === 'text' ? filter.examples : undefined;
    if (values === undefined || `--${filter.flag}` !== long) continue;
    if (verb === 'list' || (verb === 'get' && filter.onGet)) return values;
  }
  return undefined;
}
