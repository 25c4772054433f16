/**
 * fish completion: `complete` rules conditioned on the command that the words typed so far name,
 * found by a walker over the tree's subcommands and the options that take a value.
 */
import { argumentWords, completedOptions, pathKey, summary, valueKind } from './completion-data.js';
import type { CommandDoc, OptionDoc } from './tree.js';

export function fishScript(commands: readonly CommandDoc[]): string {
  const rules = commands.flatMap((command) => [
    ...command.commands.map((sub) => `complete -c carectl -n ${quote(`__carectl_at ${quote(pathKey(command))}`)} -a ${quote(lastWord(sub))} -d ${quote(summary(sub.description))}`),
    ...completedOptions(command).map((option) => optionRule(command, option)),
    ...(argumentWords(command).length > 0 ? [`complete -c carectl -n ${quote(`__carectl_at ${quote(pathKey(command))}`)} -a ${quote(argumentWords(command).join(' '))}`] : []),
  ]);
  return `# fish completion for carectl, generated from its command tree by \`carectl completion fish\`.
# Load it with:  carectl completion fish | source
# or save it as ~/.config/fish/completions/carectl.fish

function __carectl_commands --description 'subcommands of a carectl command'
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

function __carectl_find_value --description 'whether an option of a carectl command or of one above it takes a value'
    set -l at $argv[1]
    while true
        __carectl_takes_value "$at" $argv[2]; and return 0
        test -z "$at"; and return 1
        set at (string replace -r ' ?[^ ]+$' '' -- $at)
    end
end

function __carectl_path --description 'the carectl command that the words typed so far name'
    set -l words (commandline -opc)
    set -e words[1]
    set -l at ''
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
                if contains -- $word (__carectl_commands "$at")
                    set at (string trim -- "$at $word")
                end
        end
    end
    echo $at
end

function __carectl_at --description 'whether the words typed so far name this carectl command'
    set -l at (__carectl_path)
    test "$at" = "$argv[1]"
end

function __carectl_under --description 'whether the words typed so far name this carectl command or one below it'
    set -l at (__carectl_path)
    test "$at" = "$argv[1]"; or string match -q -- "$argv[1] *" "$at"
end

complete -c carectl -f
${rules.join('\n')}
`;
}

/** carectl's own options apply everywhere; a command's options to it and the commands below it. */
function optionRule(command: CommandDoc, option: OptionDoc): string {
  const condition = command.path.length === 0 ? '' : ` -n ${quote(`__carectl_under ${quote(pathKey(command))}`)}`;
  const names = option.names.map((name) => (name.startsWith('--') ? `-l ${quote(name.slice(2))}` : `-s ${quote(name.slice(1))}`)).join(' ');
  const kind = valueKind(option);
  const value = !kind ? '' : kind.kind === 'words' ? ` -x -a ${quote(kind.words.join(' '))}` : kind.kind === 'path' ? ' -r -F' : ' -x';
  return `complete -c carectl${condition} ${names}${value} -d ${quote(summary(option.description))}`;
}

/** Every 'command|option' that takes a value, as case patterns. */
function valueOptionPatterns(commands: readonly CommandDoc[]): string {
  return commands
    .flatMap((command) => completedOptions(command).filter((option) => valueKind(option)).flatMap((option) => option.names.map((name) => quote(`${pathKey(command)}|${name}`))))
    .join(' ');
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
