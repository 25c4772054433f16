/**
 * An option given more than once. Commander keeps only the last value of a one-value option, so
 * `--status unread --status closed` silently listed closed conversations only, and
 * `--add-tags 7005 --add-tags 7006` dropped 7005. `checkRepeats` wraps the parser of every
 * value-taking option of the tree, so options added later get the same rule:
 * - a LIST option (value named `<list>`) joins its values in order: `--id a --id b` is `--id a,b`;
 * - an option marked `repeatable` keeps its own parser, which collects every value;
 * - any other option refuses a second, different value: a usage error before anything is sent.
 *   The same value again drops nothing, so it is taken (`-o json` from an alias and by hand).
 * Switches take no value and are left alone (`--x --no-x` has its own conflict check).
 * Only values from the command line count: commander reports their source as 'cli', while a
 * default (passed to the parser as `previous`) is replaced; the environment and the profile are
 * read later, by src/config/settings.ts.
 */
import type { Command, Option } from 'commander';
import { UsageError } from '../core/errors.js';

const REPEATABLE = new WeakSet<Option>();

/** Marks an option whose own parser collects every value given (`--queue 1 --queue 2`). */
export function repeatable(option: Option): Option {
  REPEATABLE.add(option);
  return option;
}

/** Whether the option's value is a comma-separated LIST, by its value name in help. */
export function takesList(option: Option): boolean {
  return / <list>$/.test(option.flags);
}

type Parser = (value: string, previous: unknown) => unknown;

export function checkRepeats(command: Command): void {
  for (const option of command.options) {
    if ((!option.required && !option.optional) || option.variadic || REPEATABLE.has(option)) continue;
    const key = option.attributeName();
    const name = option.long ?? option.short ?? option.flags;
    const own = option.parseArg as Parser | undefined;
    const parse = (value: string, previous: unknown): unknown => (own ? own(value, previous) : value);
    const list = takesList(option);
    // Every value given so far, as typed (an own parser may have turned them into something else).
    let given: string[] = [];
    option.argParser((value: string, previous: unknown) => {
      if (command.getOptionValueSource(key) !== 'cli') {
        given = [value];
        return parse(value, previous);
      }
      if (list) {
        given.push(value);
        return parse(given.join(','), undefined);
      }
      const first = given[0] as string;
      if (value === first) return previous;
      throw new UsageError(`${name}: given twice ("${first}" and "${value}"); it takes one value`);
    });
  }
  for (const sub of command.commands) checkRepeats(sub);
}
