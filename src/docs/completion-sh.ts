/**
 * bash and zsh completion. Both scripts share a core in the syntax the two shells have in common:
 * the tree as case tables and the walker; each adds its own front end (COMPREPLY and compgen for
 * bash, _describe and compadd for zsh). Names the core uses are chosen to avoid zsh's special
 * parameters (path, commands, options, status).
 */
import { argumentWords, completedOptions, pathKey, summary, valueKind } from './completion-data.js';
import type { CommandDoc } from './tree.js';

export function bashScript(commands: readonly CommandDoc[]): string {
  return `# bash completion for carectl, generated from its command tree by \`carectl completion bash\`.
# Load it with:  source <(carectl completion bash)
# or save it as ~/.local/share/bash-completion/completions/carectl
${core(commands)}
# Names out of 'name:description' lines.
__carectl_names() {
  local line
  while IFS= read -r line; do
    [ -n "$line" ] && printf '%s\\n' "\${line%%:*}"
  done
}

_carectl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} flag='' at words __carectl_value
  # bash splits --flag=value at '=' into three words
  if [[ $cur == '=' && $prev == -* ]]; then
    flag=$prev
    cur=''
  elif [[ $prev == '=' && \${COMP_WORDS[COMP_CWORD-2]} == -* ]]; then
    flag=\${COMP_WORDS[COMP_CWORD-2]}
  elif [[ $prev == -* ]]; then
    flag=$prev
  fi
  at=$(__carectl_path "\${COMP_WORDS[@]:1:COMP_CWORD-1}")
  if [[ -n $flag ]] && __carectl_find_value "$at" "$flag"; then
    if [[ $__carectl_value == '<path>' ]]; then
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -f -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$__carectl_value" -- "$cur"))
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    words=$(__carectl_all_options "$at" | __carectl_names)
  else
    words=$(__carectl_commands "$at" | __carectl_names)
    [[ -z $words ]] && words=$(__carectl_arguments "$at")
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

complete -F _carectl carectl
`;
}

export function zshScript(commands: readonly CommandDoc[]): string {
  return `#compdef carectl
# zsh completion for carectl, generated from its command tree by \`carectl completion zsh\`.
# Load it after compinit with:  source <(carectl completion zsh)
# or save it as _carectl in a folder of $fpath.
${core(commands)}
_carectl() {
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]} flag='' at __carectl_value
  local -a found
  if [[ $cur == --*=* ]]; then
    flag=\${cur%%=*}
    compset -P '*='
  elif [[ $prev == -* ]]; then
    flag=$prev
  fi
  at=$(__carectl_path "\${(@)words[2,CURRENT-1]}")
  if [[ -n $flag ]] && __carectl_find_value "$at" "$flag"; then
    case $__carectl_value in
      '<path>') _files ;;
      '') _message -e values 'value' ;;
      *) compadd -- \${=__carectl_value} ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then
    found=(\${(f)"$(__carectl_all_options "$at")"})
    _describe -t options 'option' found
    return
  fi
  found=(\${(f)"$(__carectl_commands "$at")"})
  if (( \${#found} )); then
    _describe -t commands 'command' found
  else
    found=(\${=$(__carectl_arguments "$at")})
    (( \${#found} )) && compadd -a found
  fi
}

if [ "$funcstack[1]" = "_carectl" ]; then
  _carectl "$@"
else
  compdef _carectl carectl
fi
`;
}

/** The tree as case tables, and the walker, valid in both bash and zsh. */
function core(commands: readonly CommandDoc[]): string {
  return `
# Subcommands of a command ('' is carectl itself), as 'name:description' lines.
__carectl_commands() {
  case $1 in
${caseTable(commands, (command) => command.commands.map((sub) => `${sub.path[sub.path.length - 1]}:${summary(sub.description)}`))}
  esac
}

# Options of a command, not its parents', as 'name:description' lines.
__carectl_options() {
  case $1 in
${caseTable(commands, (command) => completedOptions(command).flatMap((option) => option.names.map((name) => `${name}:${summary(option.description)}`)))}
  esac
}

# The words a command's positional argument can be.
__carectl_arguments() {
  case $1 in
${caseTable(commands, (command) => [...argumentWords(command)])}
  esac
}

# Sets __carectl_value to what the option ($2) of the command ($1) takes: its words, '' for
# any text, '<path>' for a file name. Fails when that command has no such option with a value.
__carectl_option_value() {
  case "$1|$2" in
${valueTable(commands)}
    *) return 1 ;;
  esac
}

# The parent of a command.
__carectl_parent() {
  case $1 in
    *' '*) printf '%s\\n' "\${1% *}" ;;
    *) printf '\\n' ;;
  esac
}

# As __carectl_option_value, for an option of the command or of a command above it.
__carectl_find_value() {
  local at=$1
  while :; do
    __carectl_option_value "$at" "$2" && return 0
    [ -z "$at" ] && return 1
    at=$(__carectl_parent "$at")
  done
}

# Options of a command and of the commands above it.
__carectl_all_options() {
  local at=$1
  while :; do
    __carectl_options "$at"
    [ -z "$at" ] && return 0
    at=$(__carectl_parent "$at")
  done
}

__carectl_has_command() {
  local line
  while IFS= read -r line; do
    [ "\${line%%:*}" = "$2" ] && return 0
  done <<< "$(__carectl_commands "$1")"
  return 1
}

# The command that the words (carectl's arguments so far) name, skipping options and their values.
__carectl_path() {
  local at='' skip='' word
  for word in "$@"; do
    if [ -n "$skip" ]; then
      skip=''
      continue
    fi
    case $word in
      --*=*) ;;
      -?*) __carectl_find_value "$at" "$word" && skip=1 ;;
      *) __carectl_has_command "$at" "$word" && at=\${at:+$at }$word ;;
    esac
  done
  printf '%s\\n' "$at"
}
`;
}

/** One case entry per command that has lines: `'path') printf '%s\n' 'line' … ;;`. */
function caseTable(commands: readonly CommandDoc[], linesOf: (command: CommandDoc) => string[]): string {
  return commands
    .map((command) => ({ command, lines: linesOf(command) }))
    .filter(({ lines }) => lines.length > 0)
    .map(({ command, lines }) => `    ${quote(pathKey(command))}) printf '%s\\n' ${lines.map(quote).join(' ')} ;;`)
    .join('\n');
}

function valueTable(commands: readonly CommandDoc[]): string {
  const entries: string[] = [];
  for (const command of commands) {
    for (const option of completedOptions(command)) {
      const kind = valueKind(option);
      if (!kind) continue;
      const value = kind.kind === 'words' ? kind.words.join(' ') : kind.kind === 'path' ? '<path>' : '';
      const patterns = option.names.map((name) => quote(`${pathKey(command)}|${name}`)).join('|');
      entries.push(`    ${patterns}) __carectl_value=${quote(value)} ;;`);
    }
  }
  return entries.join('\n');
}

/** A word in single quotes for sh. */
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
