/**
 * A command group's verbs, added when the command line reaches the group rather than at every
 * start: each verb brings its options (a resource's filters, update's flags), and building all of
 * them cost every start-up, --version and a lookup included, about a millisecond and a half
 * (npm run bench). A group waiting for its verbs has its name, aliases and description, which is
 * all the root help and commander's "did you mean" read; the man page, the completion scripts and
 * `carectl help GROUP` ask for the verbs first.
 */
import type { Command } from 'commander';
import { checkRepeats } from './repeats.js';

const DEFERRED = new WeakMap<Command, (group: Command) => void>();

/** Registers how `group` gets its verbs; none are added yet. */
export function deferVerbs(group: Command, addVerbs: (group: Command) => void): Command {
  DEFERRED.set(group, addVerbs);
  return group;
}

/** Adds the verbs of `command` if they were deferred (once), with the repeat rules over their options. */
export function withVerbs(command: Command): Command {
  const addVerbs = DEFERRED.get(command);
  if (addVerbs) {
    DEFERRED.delete(command);
    addVerbs(command);
    checkRepeats(command);
  }
  return command;
}

/** The whole tree: every group with its verbs (for what documents every command). */
export function wholeTree(program: Command): Command {
  for (const command of program.commands) withVerbs(command);
  return program;
}
