/**
 * fish completion: `complete` rules conditioned on the command that the words typed so far name,
 * found by a walker over the tree's subcommands and the options that take a value. File names
 * are offered only where nothing else is: for a command's arguments without a fixed set of words.
 */
import {
  aliasesOf,
  argumentWords,
  completedOptions,
  extraValues,
  HELP_COLUMNS_WORDS,
  pathKey,
  runCommand,
  SERVICE_OPTIONS,
  summary,
  valueKind,
  valueOptions,
  type ValueKind,
} from './completion-data.js';
import type { CommandDoc, OptionDoc } from './tree.js';

/** The service options typed so far, as fish passes them on. */
const SERVICE_WORDS = '(__carectl_service)';

export function fishScript(commands: readonly CommandDoc[]): string {
  return `# fish completion for carectl, generated from its command tree by \`carectl completion fish\`.
# Load it with:  carectl completion fish | source
# or save it as ~/.config/fish/completions/carectl.fish

${treeFunctions(commands)}

${canonicalFunction(commands)}

${WALKER}

${serviceFunction()}

complete -c carectl -n 'not __carectl_wants_files' -f
complete -c carectl -n '__carectl_at help; and not __carectl_argument 0' -a '(__carectl_help_words)'
${completeRules(commands).join('\n')}
`;
}

/** The tree as switch tables: subcommands, options that take a value, commands whose arguments have fixed words. */
function treeFunctions(commands: readonly CommandDoc[]): string {
  return `function __carectl_commands --description 'subcommands of a carectl command'
    switch $argv[1]
${switchTable(commands.filter((command) => command.commands.length > 0).map((command) => [quote(pathKey(command)), `printf '%s\\n' ${command.commands.map((sub) => quote(lastWord(sub))).join(' ')}`]))}
    end
end

function __carectl_takes_value --description 'whether an option of a carectl command takes a value'
    switch "$argv[1]|$argv[2]"
${switchTable([[valueOptionPatterns(commands), 'return 0']])}
    end
    return 1
end

${memberFunction(
  '__carectl_takes_arguments',
  'whether a carectl command takes positional arguments',
  commands.filter((command) => command.arguments.length > 0),
)}

${memberFunction(
  '__carectl_has_words',
  'whether the arguments of a carectl command have a fixed set of words',
  commands.filter((command) => argumentWords(command).length > 0),
)}`;
}

/**
 * Where the words typed so far lead: the command they name and its positional arguments (skipping
 * options and their values), and the tests the rules are conditioned on.
 */
/** The name of a command typed by an alias (conv, tag, ls), else the word as it is. */
function canonicalFunction(commands: readonly CommandDoc[]): string {
  const cases = aliasesOf(commands).map(([parent, alias, name]) => `        case ${quote(`${parent}|${alias}`)}\n            echo ${quote(name)}`);
  return `function __carectl_canonical --description 'the name of a carectl command typed by an alias'
    switch "$argv[1]|$argv[2]"
${cases.join('\n')}
        case '*'
            echo $argv[2]
    end
end`;
}

/** The options typed so far that choose the service, one a line (SERVICE_OPTIONS), for carectl __complete. */
function serviceFunction(): string {
  const { withValue, flags } = SERVICE_OPTIONS;
  return `function __carectl_service --description 'the options typed so far that choose the service and its credentials'
    set -l words (commandline -opc)
    set -e words[1]
    set -l option ''
    for word in $words
        if test -n "$option"
            # a service option goes on with its value, never without it
            printf '%s\\n' $option $word
            set option ''
            continue
        end
        switch $word
            case ${withValue.map((name) => quote(`${name}=*`)).join(' ')} ${flags.join(' ')}
                printf '%s\\n' $word
            case ${withValue.join(' ')}
                set option $word
        end
    end
end`;
}

const WALKER = `function __carectl_find_value --description 'whether an option of a carectl command or of one above it takes a value'
    set -l at $argv[1]
    while true
        __carectl_takes_value "$at" $argv[2]; and return 0
        test -z "$at"; and return 1
        set at (string replace -r ' ?[^ ]+$' '' -- $at)
    end
end

function __carectl_walk --description 'the carectl command that the words typed so far name, then its positional arguments'
    set -l words (commandline -opc)
    set -e words[1]
    set -l at ''
    set -l args
    set -l skip 0
    for word in $words
        if test $skip = 1
            set skip 0
            continue
        end
        switch $word
            case '--*=*'
            case '-?*'
                __carectl_find_value "$at" $word; and set skip 1
            case '*'
                test (count $args) = 0; and set word (__carectl_canonical "$at" $word)
                if test (count $args) = 0; and contains -- $word (__carectl_commands "$at")
                    set at (string trim -- "$at $word")
                else
                    set -a args $word
                end
        end
    end
    printf '%s\\n' "$at" $args
end

function __carectl_path --description 'the carectl command that the words typed so far name'
    set -l walked (__carectl_walk)
    echo $walked[1]
end

function __carectl_at --description 'whether the words typed so far name this carectl command'
    set -l at (__carectl_path)
    test "$at" = "$argv[1]"
end

function __carectl_under --description 'whether the words typed so far name this carectl command or one below it'
    set -l at (__carectl_path)
    test "$at" = "$argv[1]"; or string match -q -- "$argv[1] *" "$at"
end

function __carectl_argument --description 'whether the argument being typed is the Nth (from 0), after this one'
    set -l walked (__carectl_walk)
    set -l count (math (count $walked) - 1)
    test $count = $argv[1]; or return 1
    test (count $argv) = 1; or test "$walked[-1]" = "$argv[2]"
end

function __carectl_wants_files --description 'whether nothing but a file name can come next'
    set -l at (__carectl_path)
    set -l subcommands (__carectl_commands "$at")
    test (count $subcommands) = 0; and __carectl_takes_arguments "$at"; and not __carectl_has_words "$at"
end

function __carectl_help_words --description 'the verbs of the command that carectl help names so far, or after columns the resources'
    set -l walked (__carectl_walk)
    if test "$walked[2..-1]" = columns
        printf '%s\n' ${HELP_COLUMNS_WORDS.join(' ')}
        return
    end
    set -l at ''
    for word in $walked[2..-1]
        contains -- $word (__carectl_commands "$at"); and set at (string trim -- "$at $word")
    end
    __carectl_commands "$at"
end

function __carectl_list_items --description 'the items of a comma-separated list, after those typed so far'
    # the items as fish reads them (quotes and backslashes taken off), which is what it matches and quotes candidates against
    set -l token (commandline -ct | string unescape)
    set -l done (string match -r '^.*,' -- $token)
    for word in $argv
        contains -- $word (string split , -- $done); or printf '%s%s\\n' "$done" $word
    end
end`;

/** One `complete` rule per subcommand, option, option value and argument word of each command. */
function completeRules(commands: readonly CommandDoc[]): string[] {
  return commands.flatMap((command) => [
    ...command.commands.map(
      (sub) => `complete -c carectl -n ${quote(`__carectl_at ${quote(pathKey(command))}`)} -a ${quote(lastWord(sub))} -d ${quote(summary(sub.description))}`,
    ),
    ...completedOptions(command).map((option) =>
      optionRule(
        command,
        option,
        commands.filter((other) => other.ownOptionsOnly),
      ),
    ),
    ...extraValues(command).flatMap(({ names, kind }) =>
      names.map((name) => `complete -c carectl -n ${quote(`__carectl_at ${quote(pathKey(command))}`)} ${nameFlag(name)}${valueFlags(kind)}`),
    ),
    ...argumentWords(command).map(({ index, previous, words, run, variadic }) => {
      const at = `__carectl_at ${quote(pathKey(command))}`;
      const condition = variadic ? at : `${at}; and __carectl_argument ${index}${previous === undefined ? '' : ` ${quote(previous)}`}`;
      return `complete -c carectl -n ${quote(condition)} -a ${quote(run ? `(${runCommand(run, SERVICE_WORDS)})` : words.join(' '))}`;
    }),
  ]);
}

/**
 * carectl's own options apply everywhere but under the commands they do not apply to (sandbox); a
 * command's options to it and the commands below it. The description goes with the option only:
 * on the rule of its values, fish would repeat it after every value.
 */
function optionRule(command: CommandDoc, option: OptionDoc, ownOnly: readonly CommandDoc[]): string {
  const exclusive = command.path.length === 0 ? ownOnly.map((other) => `not __carectl_under ${quote(pathKey(other))}`).join('; and ') : '';
  const condition = command.path.length === 0 ? (exclusive ? ` -n ${quote(exclusive)}` : '') : ` -n ${quote(`__carectl_under ${quote(pathKey(command))}`)}`;
  const names = option.names.map(nameFlag).join(' ');
  const kind = valueKind(option);
  const rule = `complete -c carectl${condition} ${names}`;
  // The values' rule first: fish takes the option's description from the rule that comes last.
  return `${kind && kind.kind !== 'text' ? `${rule}${valueFlags(kind)}\n` : ''}${rule}${kind?.kind === 'path' ? ' -r' : kind ? ' -x' : ''} -d ${quote(summary(option.description))}`;
}

function nameFlag(name: string): string {
  return name.startsWith('--') ? `-l ${quote(name.slice(2))}` : `-s ${quote(name.slice(1))}`;
}

/** What follows an option: its words (items of a list), words read when completing, a file name, or any text. */
function valueFlags(kind: ValueKind): string {
  switch (kind.kind) {
    case 'words':
      return kind.list ? ` -x -a ${quote(`(__carectl_list_items ${kind.words.join(' ')})`)}` : ` -x -a ${quote(kind.words.join(' '))}`;
    case 'run':
      return kind.list
        ? ` -x -a ${quote(`(__carectl_list_items (${runCommand(kind.what, SERVICE_WORDS)}))`)}`
        : ` -x -a ${quote(`(${runCommand(kind.what, SERVICE_WORDS)})`)}`;
    case 'path':
      return ' -r -F';
    case 'text':
      return ' -x';
  }
}

/** Every 'command|option' that takes a value, as case patterns. */
function valueOptionPatterns(commands: readonly CommandDoc[]): string {
  return commands.flatMap((command) => valueOptions(command).flatMap(({ names }) => names.map((name) => quote(`${pathKey(command)}|${name}`)))).join(' ');
}

/** A fish function true for the paths of these commands. */
function memberFunction(name: string, description: string, members: readonly CommandDoc[]): string {
  return `function ${name} --description ${quote(description)}
    switch $argv[1]
${switchTable([[members.map((command) => quote(pathKey(command))).join(' ') || "''", 'return 0']])}
    end
    return 1
end`;
}

function switchTable(entries: ReadonlyArray<readonly [string, string]>): string {
  return entries.map(([patterns, body]) => `        case ${patterns}\n            ${body}`).join('\n');
}

function lastWord(command: CommandDoc): string {
  return command.path[command.path.length - 1] as string;
}

/** A fish single-quoted string: only \ and ' are special inside. */
function quote(text: string): string {
  return `'${text.replace(/[\\']/g, (character) => `\\${character}`)}'`;
}
